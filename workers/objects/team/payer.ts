// Who spends a team's pool, as the pool records it (member_id): a member's user id, or a team API key's name.

/** The name a team API key's jobs carry in the pool (member_id): the key, not whoever made it (ADR 0295). */
export function keyPayer(keyId: string): string {
  return `key:${keyId}`;
}

/** The key id of a name made by keyPayer, or null for a member's user id. */
export function payerKey(memberId: string): string | null {
  return memberId.startsWith("key:") ? memberId.slice(4) : null;
}
