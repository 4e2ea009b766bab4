import { type StartManyResult, teamObject } from "@workers/objects/client";
import type { Deps } from "@workers/services/deps";
import { photoAccess } from "@workers/services/teams/access";
import { TEAM_REQUEST_EXPIRED } from "~/shared/teams";

// Who pays for a job: a photo in a team's listing spends the team's pool, any other the member's own credits
// (docs/decisions/0270-team-credit-pool.md). The team's object takes the credit before the member's object records
// the job (with a 0-credit reservation of its own); a refusal there comes back naming the pool or the limit.

/**
 * The team whose listing holds this photo, when the user may stage in it (an active member, whoever uploaded it), or
 * null (a personal folder, or a photo they may not reach: the job's own checks then answer not found).
 */
export async function teamOfPhoto(db: Deps["db"], userId: string, photoId: string): Promise<string | null> {
  return (await photoAccess(db, userId, photoId))?.teamId ?? null;
}

type Refused = Extract<StartManyResult, { ok: false }>;

/**
 * Takes the team's credit for every job of a request (all or none); answers a refusal in the shape of the member's
 * object's, so the callers map it the same way, or whether this call took them (a resend took nothing).
 */
export async function holdTeamCredits(
  env: Deps["env"],
  teamId: string,
  memberId: string,
  jobIds: string[],
  reason: string,
): Promise<{ ok: true; created: boolean; pool: number } | Refused> {
  const held = await teamObject(env, teamId).reserve(teamId, {
    memberId,
    jobs: jobIds.map((jobId) => ({ jobId, amount: 1, reason })),
  });
  if (!held.ok) return { ok: false, code: held.code, error: held.error, balance: held.balance };
  if (held.status === "released") return { ok: false, code: "conflict", error: TEAM_REQUEST_EXPIRED, balance: 0 };
  return { ok: true, created: held.created, pool: held.pool };
}

/** Gives the team's credits back when the member's object did not record the jobs they were taken for. */
export async function releaseTeamCredits(env: Deps["env"], teamId: string, jobIds: string[], reason: string) {
  await teamObject(env, teamId).release(teamId, jobIds, reason);
}
