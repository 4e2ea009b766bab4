import { inList } from "@db/lists";
import { type ApiKey, apiKeys, folders, teams, users } from "@db/schema";
import { keyPayer, payerKey } from "@db/teams";
import { newCallbackSecret, oldSecretSignsUntil, sealCallbackSecret } from "@workers/lib/callback-signing";
import { keyedToken, randomToken, sha256Hex } from "@workers/lib/crypto";
import { keyring } from "@workers/lib/signing-keys";
import { API_SCOPES, KEY_PREFIX } from "@workers/services/api-keys";
import { endPreviousCallbackSecret, rotateCallbackSecret } from "@workers/services/callback-secrets";
import type { Deps } from "@workers/services/request-deps";
import { and, count, desc, eq, isNull } from "drizzle-orm";
import { fail, ok, type Result } from "~/shared/result";
import { requireTeamRole } from "./teams";

export { keyPayer };

// Team API keys (issue 47 item 6; docs/decisions/0295-team-api-keys.md): keys that belong to the team, made, listed
// and revoked by its owner and team admins. A team key is an api_keys row like a personal key (only the SHA-256 of
// its secret kept), whose user is the team's runner: an account nobody signs in to, one per team, in whose Durable
// Object the key's jobs run and whose photos sit in the team's listings. Nothing binds the key to its maker's
// membership; its jobs spend the team's pool under the name `key:<id>` (keyPayer).

export const MAX_TEAM_KEYS = 20;
export const TEAM_KEY_NOT_FOUND = "That API key was not found.";
export const TEAM_KEY_REVOKED = "That API key is already revoked.";

/** The team's runner: the same id for the team always, so it is never looked up. */
export function teamRunnerId(teamId: string): string {
  return keyedToken("team-runner", teamId, "runner");
}

/**
 * The runner's account row, made once: no password and no Google account (nobody can sign in as it), an address
 * with a colon under `.invalid` (no sign-up or Google account can have it, nobody receives its mail), verified so
 * that the public API takes its keys.
 */
function runnerRow(teamId: string, teamName: string, now: number) {
  return {
    id: teamRunnerId(teamId),
    email: `team:${teamId}@runner.invalid`,
    name: `${teamName} (team API)`.slice(0, 100),
    emailVerifiedAt: now,
    createdAt: now,
    updatedAt: now,
  };
}

export interface TeamKeyView {
  id: string;
  name: string;
  prefix: string;
  createdAt: number;
  createdBy: string | null;
  lastUsedAt: number | null;
  revokedAt: number | null;
  creditLimit: number | null;
  /** Until when the callback secret its last replacement replaced still signs (ADR 0355); null when it does not. */
  oldSecretSignsUntil: number | null;
}

/** The team's keys, newest first, with the name of whoever made each (they may have left since). */
export async function listTeamKeys(db: Deps["db"], teamId: string, now: number): Promise<TeamKeyView[]> {
  const rows = await db
    .select({ key: apiKeys, maker: users.name })
    .from(apiKeys)
    .leftJoin(users, eq(users.id, apiKeys.createdBy))
    .where(eq(apiKeys.teamId, teamId))
    .orderBy(desc(apiKeys.createdAt))
    .limit(100)
    .all();
  return rows.map(({ key, maker }) => ({
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    createdAt: key.createdAt,
    createdBy: maker,
    lastUsedAt: key.lastUsedAt,
    revokedAt: key.revokedAt,
    creditLimit: key.creditLimit,
    oldSecretSignsUntil: key.revokedAt === null ? oldSecretSignsUntil(key, now) : null,
  }));
}

/**
 * A new team key, by the owner or a team admin (an agent: 403; a stranger: 404). Its secret is in this answer only.
 * The runner (once), the key's listing and the key are one batch.
 */
export async function createTeamKey(
  deps: Pick<Deps, "db" | "env" | "clock">,
  teamId: string,
  actorId: string,
  input: { name: string; limit: number | null },
): Promise<Result<{ message: string; token: string; callbackSecret: string }>> {
  const found = await requireTeamRole(deps.db, teamId, actorId, "manage");
  if (!found.ok) return found;
  const active = await deps.db
    .select({ n: count() })
    .from(apiKeys)
    .where(and(eq(apiKeys.teamId, teamId), isNull(apiKeys.revokedAt)))
    .get();
  if ((active?.n ?? 0) >= MAX_TEAM_KEYS)
    return fail("conflict", `A team can have at most ${MAX_TEAM_KEYS} active keys.`);
  const now = deps.clock();
  const runner = runnerRow(teamId, found.team.name, now);
  const token = `${KEY_PREFIX}${randomToken(20)}`;
  const id = randomToken(10);
  const folderId = randomToken();
  // The secret its jobs' callbacks are signed with (ADR 0315), shown once beside the key, stored sealed.
  const callbackSecret = newCallbackSecret();
  const row: ApiKey = {
    id,
    userId: runner.id,
    tokenHash: sha256Hex(token),
    prefix: token.slice(0, 10),
    name: input.name,
    scopes: [...API_SCOPES],
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
    revokedReason: null,
    previousCallbackSecret: null,
    previousCallbackSecretKey: null,
    previousCallbackUntil: null,
    ...(await sealCallbackSecret(keyring(deps.env), id, callbackSecret)),
    teamId,
    createdBy: actorId,
    folderId,
    creditLimit: input.limit,
  };
  await deps.db.batch([
    deps.db.insert(users).values(runner).onConflictDoNothing(),
    deps.db
      .insert(folders)
      .values({ id: folderId, userId: runner.id, teamId, name: `${input.name} (API)`.slice(0, 100), createdAt: now }),
    deps.db.insert(apiKeys).values(row),
  ]);
  return ok({
    message: `API key "${input.name}" created. Copy it and its callback signing secret now: they are shown only once.`,
    token,
    callbackSecret,
  });
}

/** Revokes one of the team's keys (from its next request it answers 401); another team's key is 404. */
export async function revokeTeamKey(
  deps: Pick<Deps, "db" | "clock">,
  teamId: string,
  actorId: string,
  keyId: string,
): Promise<Result<{ message: string }>> {
  const found = await requireTeamRole(deps.db, teamId, actorId, "manage");
  if (!found.ok) return found;
  const done = await deps.db
    .update(apiKeys)
    .set({ revokedAt: deps.clock(), revokedReason: "owner" })
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.teamId, teamId), isNull(apiKeys.revokedAt)))
    .returning({ name: apiKeys.name });
  if (done[0]) return ok({ message: `API key "${done[0].name}" revoked.` });
  const known = await deps.db
    .select({ id: apiKeys.id })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.teamId, teamId)))
    .get();
  return known ? fail("conflict", TEAM_KEY_REVOKED) : fail("not_found", TEAM_KEY_NOT_FOUND);
}

/**
 * This team's active key, for its owner or a team admin (an agent 403, a stranger 404): the runner whose row it is,
 * so the callback secret functions that a personal key's owner uses apply to it unchanged (ADR 0355).
 */
async function managedKey(
  deps: Pick<Deps, "db">,
  teamId: string,
  actorId: string,
  keyId: string,
): Promise<Result<{ runner: string }>> {
  const found = await requireTeamRole(deps.db, teamId, actorId, "manage");
  if (!found.ok) return found;
  const key = await deps.db
    .select({ revokedAt: apiKeys.revokedAt })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.teamId, teamId)))
    .get();
  if (!key) return fail("not_found", TEAM_KEY_NOT_FOUND);
  if (key.revokedAt !== null) return fail("conflict", TEAM_KEY_REVOKED);
  return ok({ runner: teamRunnerId(teamId) });
}

/**
 * A new callback signing secret for a team key, shown in this answer only; the one it replaces signs beside it for a
 * day (ADR 0350), as a personal key's does.
 */
export async function rotateTeamKeySecret(
  deps: Pick<Deps, "db" | "env" | "clock">,
  teamId: string,
  actorId: string,
  keyId: string,
): Promise<Result<{ message: string; callbackSecret: string }>> {
  const key = await managedKey(deps, teamId, actorId, keyId);
  if (!key.ok) return key;
  const res = await rotateCallbackSecret(deps, key.runner, keyId, deps.clock());
  if (!res.ok) return res;
  const old = res.previousUntil
    ? `The old one also signs until ${new Date(res.previousUntil).toUTCString()}, so your receiver can switch without missing a callback.`
    : "The old one no longer verifies.";
  return ok({
    message: `New callback signing secret for "${res.name}". Copy it now: it is not shown again. ${old}`,
    callbackSecret: res.callbackSecret,
  });
}

/** Stops the secret a team key's last replacement replaced at once, as after a leak (ADR 0353, 0355). */
export async function endTeamKeyOldSecret(
  deps: Pick<Deps, "db" | "clock">,
  teamId: string,
  actorId: string,
  keyId: string,
): Promise<Result<{ message: string }>> {
  const key = await managedKey(deps, teamId, actorId, keyId);
  if (!key.ok) return key;
  const res = await endPreviousCallbackSecret(deps, key.runner, keyId, deps.clock());
  if (!res.ok) return res;
  return ok({ message: `The old callback secret of "${res.name}" no longer signs callbacks.` });
}

/** The names of the team keys among ledger names (for the ledger by member). */
export async function keyNames(db: Deps["db"], memberIds: string[]): Promise<Map<string, string>> {
  const ids = memberIds.map(payerKey).filter((k): k is string => k !== null);
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: apiKeys.id, name: apiKeys.name })
    .from(apiKeys)
    .where(inList(apiKeys.id, ids))
    .all();
  return new Map(rows.map((r) => [keyPayer(r.id), r.name]));
}

/** The team's pool as it stands (what a team key's GET /balance answers). */
export async function teamPool(db: Deps["db"], teamId: string): Promise<number> {
  const row = await db.select({ credits: teams.credits }).from(teams).where(eq(teams.id, teamId)).get();
  return row?.credits ?? 0;
}
