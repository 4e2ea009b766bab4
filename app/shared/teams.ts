// Teams (issue 47): the roles, the limits and the words a member reads when the pool refuses a job. Isomorphic:
// the pages, the services and the team's Durable Object share them. docs/decisions/0270-team-credit-pool.md

export const TEAM_ROLES = ["owner", "team_admin", "agent"] as const;
export type TeamRoleName = (typeof TEAM_ROLES)[number];

/** What each role is called on the pages ("team admin", never "admin": that is the operator's role). */
export const TEAM_ROLE_LABELS: Record<TeamRoleName, string> = {
  owner: "Owner",
  team_admin: "Team admin",
  agent: "Agent",
};

/** Whether the role manages seats, limits, invitations, keys and the broker's record. */
export function managesTeam(role: TeamRoleName): boolean {
  return role === "owner" || role === "team_admin";
}

export const TEAM_NAME_MAX = 80;
export const INVITATION_DAYS = 7;
export const INVITATION_TTL_MS = INVITATION_DAYS * 24 * 60 * 60 * 1000;
/** A used, revoked, expired or made-up invitation link. */
export const INVITATION_GONE = "This invitation is no longer valid. Ask the team for a new one.";

/** A team job the pool cannot pay for: the pool is what is short. */
export const TEAM_POOL_EMPTY = "Your team's credit pool is used up. Ask a team admin to add credits.";
/** A team job over the member's own limit for the billing period: the limit is what is short, not the pool. */
export function memberLimitMessage(limit: number): string {
  return `You have used your limit of ${limit} team ${limit === 1 ? "credit" : "credits"} for this billing period. Ask a team admin to raise it.`;
}
/** A failed renewal froze the pool: nothing is lost, but no new team job starts. */
export const TEAM_POOL_FROZEN =
  "Your team's credit pool is paused because the team's last payment failed. The owner can update the payment method.";
/** A team request whose credit was given back before its job was recorded (docs/decisions/0270). */
export const TEAM_REQUEST_EXPIRED = "This request took too long and was cancelled. Please start it again.";
/**
 * Paid work on a team listing's photo asked for where the team's pool cannot pay for it (the user's object's
 * `startApiJob`): refused rather than charged to the member's own credits. A batch, a re-roll, "keep it anyway" and
 * a personal key's v1 job spend the pool (docs/decisions/0297, 0310, 0270's amendment of 2026-11-29).
 */
export const TEAM_LISTING_ELSEWHERE =
  "This photo is in a team listing, whose jobs are paid from the team's pool: start it from the photo's page.";

/**
 * A batch whose photos are paid from different places (docs/decisions/0310-a-team-listings-batch.md): one photo of
 * each, and where each is paid from, `listing` the team listing's name or null for the member's own photo.
 */
export function mixedBatchMessage(
  a: { photo: string; listing: string | null },
  b: { photo: string; listing: string | null },
): string {
  const where = (p: { listing: string | null }) =>
    p.listing === null
      ? "is yours, paid from your own credits"
      : `is in the team listing "${p.listing}", paid from its team's pool`;
  return `A batch is paid from one place: "${a.photo}" ${where(a)}, and "${b.photo}" ${where(b)}. Stage them as separate batches.`;
}

/**
 * A batch whose photos are not paid from the place its form chose (docs/decisions/0318-who-pays-for-a-library-batch.md):
 * `chosen` the team's name, or null for the member's own credits.
 */
export function wrongPayerMessage(p: { photo: string; listing: string | null }, chosen: string | null): string {
  const from = chosen === null ? "your own credits" : `the pool of ${chosen}`;
  const where =
    p.listing === null
      ? "is yours, paid from your own credits"
      : `is in the team listing "${p.listing}", paid from its team's pool`;
  return `This batch is paid from ${from}, but "${p.photo}" ${where}. Choose again where the batch is paid from.`;
}

/** A re-roll of a team listing's result: a team job like any other, one credit from the pool (ADR 0297). */
export const TEAM_REROLL_MESSAGE =
  "This re-roll costs 1 credit from your team's pool: the same choices with a new seed.";

/** How long the broker's record may be set to keep what left, in days (docs/decisions/0285-the-brokers-record.md). */
export const RETENTION_MIN_DAYS = 365;
export const RETENTION_MAX_DAYS = 3650;
