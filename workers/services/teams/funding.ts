import { inList } from "@db/lists";
import { folders, photos } from "@db/schema";
import { type StartManyResult, teamObject } from "@workers/objects/client";
import type { Deps } from "@workers/services/request-deps";
import { reachablePhoto } from "@workers/services/teams/access";
import { and, eq } from "drizzle-orm";
import { fail, ok, type Result } from "~/shared/result";
import { mixedBatchMessage, TEAM_REQUEST_EXPIRED } from "~/shared/teams";
import { displayName } from "~/shared/text";

// Who pays for a job: a photo in a team's listing spends the team's pool, any other the member's own credits
// (docs/decisions/0270-team-credit-pool.md). The team's object takes the credit before the member's object records
// the job (with a 0-credit reservation of its own); a refusal there comes back naming the pool or the limit.

/**
 * Who pays for a batch of these photos (docs/decisions/0310-a-team-listings-batch.md): one team's pool when every
 * photo is in a listing of that team the user is an active member of, the user's own credits when every photo is
 * theirs outside team listings; a photo they may not reach is not found (404, as a made-up id), and photos paid from
 * two places are refused naming one of each. With each photo's owner (the user whose rows it is, ADR 0280).
 */
export async function payerOfPhotos(
  db: Deps["db"],
  userId: string,
  photoIds: string[],
): Promise<
  Result<{ teamId: string | null; owners: Map<string, string>; first: { photo: string; listing: string | null } }>
> {
  const rows = await db
    .select({ id: photos.id, name: photos.name, ownerId: photos.userId, teamId: folders.teamId, listing: folders.name })
    .from(photos)
    .leftJoin(folders, eq(folders.id, photos.folderId))
    .where(and(reachablePhoto(userId), inList(photos.id, photoIds)))
    .all();
  if (rows.length !== new Set(photoIds).size) return fail("not_found", "A photo of the batch was not found.");
  // In the batch's order, so the words name the first photo of each place.
  const byId = new Map(rows.map((r) => [r.id, r]));
  const ordered = photoIds.map((id) => byId.get(id)!);
  const first = ordered[0]!;
  const other = ordered.find((r) => (r.teamId ?? null) !== (first.teamId ?? null));
  const said = (r: typeof first) => ({
    photo: displayName(r.name, "A photo", 80),
    listing: r.teamId ? displayName(r.listing ?? "", "a team listing", 80) : null,
  });
  if (other) return fail("conflict", mixedBatchMessage(said(first), said(other)));
  return ok({ teamId: first.teamId ?? null, owners: new Map(rows.map((r) => [r.id, r.ownerId])), first: said(first) });
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

/**
 * Starts jobs on the right pool, the one path of every team job (a page's job, a team key's job, a re-roll, a batch, a batch's retry;
 * ADR 0270, 0297, 0310): with a team, its credits for every job are taken first, all or none, and refused before
 * anything is recorded or reaches the provider; then `start` records the jobs in the member's object (each naming the
 * team, each with a 0-credit reservation of its own). When the member's object does not record them (a photo in the
 * trash, a reused key, a retry already made) the team's credits go back at once. A request whose jobs another sending
 * recorded on this team (JOBS_ALREADY_STARTED: two sendings under one key, the other's record first) gives nothing
 * back: those credits pay for the jobs that run. Recorded without the team (sent first while the photo was still
 * personal), they were paid by the member, so the team's go back. With no team, `start` alone (the member's own credits).
 */
export async function startPaidBy(
  env: Deps["env"],
  teamId: string | null,
  payer: string,
  jobIds: string[],
  reason: string,
  start: () => Promise<StartManyResult>,
): Promise<{ started: StartManyResult; pool: number | null }> {
  if (teamId === null) return { started: await start(), pool: null };
  const held = await holdTeamCredits(env, teamId, payer, jobIds, reason);
  if (!held.ok) return { started: held, pool: null };
  const started = await start();
  // Jobs another sending recorded on this pool are paid by what this call took; any other refusal, and jobs the key
  // started before the photo came into the team's listing (the member paid those), give the team's credits back.
  const paidHere = started.ok || started.existing?.teamId === teamId;
  if (held.created && !paidHere) await releaseTeamCredits(env, teamId, jobIds, started.error);
  return { started, pool: held.pool };
}
