import { reachablePhoto } from "@db/access";
import type { Database } from "@db/client";
import { jobs, photos, photoVersions, structureRecourses, teamLedger, teams } from "@db/schema";
import { log } from "@workers/lib/log";
import { teamObject } from "@workers/objects/team-stub";
import type { Changed } from "@workers/objects/user/credits/changes";
import * as credits from "@workers/objects/user/credits/changes";
import { type LedgerResult, refusal } from "@workers/objects/user/credits/ledger-rows";
import { returnCommitted } from "@workers/objects/user/credits/returns";
import { cachedBalance } from "@workers/objects/user/credits/view";
import { and, count, eq, gte } from "drizzle-orm";
import { RETURN_WINDOW_DAYS, RETURNS_PER_MONTH, type ReturnedTo, VERSION_NOT_FOUND } from "~/shared/version-view";
import { type RecourseRow, recourseWrites } from "./recourse-rows";
import { sourceKey } from "./structure";

// "This result changed the room" (issue 43 item 7, docs/decisions/0261-this-result-changed-the-room.md): the owner of
// a result the structure check passed or marked says it did change the room. Within RETURN_WINDOW_DAYS of the result,
// at most RETURNS_PER_MONTH times a UTC month and once per version, its credit goes back (credits/returns.ts) with a
// ledger row naming why; with the owner's consent, the pair is copied where only operators read it, a candidate for
// the check's labelled set. Runs in the user's object, in its serial order: the checks and the writes cannot race.
// A team job's credit is the team's (ADR 0270): it goes back to the team's pool, written by the team's object in one
// batch with this user's recourse row and the version's mark, while this user's turn waits for the answer.

export const RETURN_REASON = "Returned: the result changed the room (the structure check missed it)";
export const ONLY_CHECKED = "Only a result the structure check passed or marked can be returned this way.";
const DAY_MS = 24 * 60 * 60 * 1000;
export const TEAM_POOL_UNREACHABLE =
  "The team's credit pool could not be reached, so nothing was returned yet. Try again.";

export type ReturnAnswer = LedgerResult<{
  versionId: string;
  returned: number;
  kept: boolean;
  returnedTo: ReturnedTo;
  /** The team's pool after the return; null for a personal job. */
  pool: number | null;
}>;

export function tooLate(createdAt: number): string {
  const day = new Date(createdAt).toISOString().slice(0, 10);
  return `A result can be returned within ${RETURN_WINDOW_DAYS} days; this one was made on ${day}, so its credit stays spent.`;
}

export function monthSpent(): string {
  return `You have returned ${RETURNS_PER_MONTH} results this month, the most a month allows. Returns open again on the 1st (UTC).`;
}

/** Midnight UTC of the 1st of `now`'s month, and of the next. */
export function monthOf(now: number): { start: number; next: number } {
  const d = new Date(now);
  return {
    start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
    next: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
  };
}

/** Where a kept pair lives: outside every photo's prefix, so no user route serves it; purged with the account. */
export function candidatePrefix(userId: string, versionId: string): string {
  return `candidates/${userId}/${versionId}/`;
}

export async function returnChangedRoom(
  env: Pick<Env, "PHOTOS" | "TEAM_OBJECT">,
  db: Database,
  userId: string,
  photoId: string,
  versionId: string,
  keepPair: boolean,
  now: number,
): Promise<Changed<ReturnAnswer>> {
  const row = await db
    .select({ version: photoVersions, originalKey: photos.originalKey, job: jobs })
    .from(photoVersions)
    // The user's own photo, or a team listing's photo of a team they are an active member of (ADR 0280): any member
    // may return a team job's result to the pool; the version's rows are the photo owner's.
    .innerJoin(photos, and(eq(photos.id, photoVersions.photoId), reachablePhoto(userId)))
    .leftJoin(jobs, eq(jobs.id, photoVersions.jobId))
    .where(
      and(eq(photoVersions.id, versionId), eq(photoVersions.photoId, photoId), eq(photoVersions.userId, photos.userId)),
    )
    .get();
  if (!row) return credits.untouched(refusal("not_found", VERSION_NOT_FOUND, 0));
  // A result paid from someone's own credits (made before the photo joined a team listing) is theirs alone to return.
  if (row.version.userId !== userId && !row.job?.teamId) {
    return credits.untouched(refusal("not_found", VERSION_NOT_FOUND, 0));
  }
  const { version } = row;
  const verdict = version.structureVerdict;
  if (verdict !== "passed" && verdict !== "flagged") return credits.untouched(refusal("conflict", ONLY_CHECKED, 0));
  const already = await db
    .select({ at: structureRecourses.createdAt })
    .from(structureRecourses)
    .where(eq(structureRecourses.versionId, versionId))
    .get();
  if (already || version.structureReturnedAt !== null) {
    return credits.untouched(refusal("conflict", "This result's credit was already returned.", 0));
  }
  if (now - version.createdAt > RETURN_WINDOW_DAYS * DAY_MS) {
    return credits.untouched(refusal("conflict", tooLate(version.createdAt), 0));
  }
  const month = monthOf(now);
  const used = await db
    .select({ n: count() })
    .from(structureRecourses)
    .where(and(eq(structureRecourses.userId, userId), gte(structureRecourses.createdAt, month.start)))
    .get();
  if ((used?.n ?? 0) >= RETURNS_PER_MONTH) {
    const wait = Math.max(1, Math.ceil((month.next - now) / 1000));
    return credits.untouched({ ...refusal("rate_limited", monthSpent(), 0), retryAfterSeconds: wait });
  }
  const prefix = keepPair ? await copyPair(env, db, row, userId, versionId) : null;
  const recourse: RecourseRow = {
    versionId,
    userId,
    photoId,
    kind: version.kind,
    verdict,
    score: version.structureScore,
    candidatePrefix: prefix,
    createdAt: now,
  };
  const teamId = row.job?.teamId ?? null;
  if (teamId) return credits.untouched(await returnToTeam(env, db, teamId, version.jobId, recourse));
  const result = await returnCommitted(db, userId, version.jobId, RETURN_REASON, `return:${versionId}`, now, {
    writes: recourseWrites(db, recourse),
  });
  if (!result.ok) {
    if (prefix) await deleteCopies(env, prefix);
    return credits.untouched(result);
  }
  return credits.moved({
    ok: true,
    balance: result.balance,
    versionId,
    returned: result.returned,
    kept: !!prefix,
    // Nothing back when the payment that bought the credit was reversed since (ADR 0339).
    returnedTo: result.returned > 0 ? "own" : "held-back",
    pool: null,
  });
}

/**
 * A team job's return: the team's object credits its pool and writes `recourse` in one batch, in its turn, while
 * this user's turn waits (so the month's count read above cannot be passed meanwhile). Nothing of the user's own
 * credits moves. A call that fails on the way (the batch may or may not have run) is answered from D1: the recourse
 * row exists only with the pool's refund row, so it says whether the credit went back.
 */
async function returnToTeam(
  env: Pick<Env, "PHOTOS" | "TEAM_OBJECT">,
  db: Database,
  teamId: string,
  jobId: string,
  recourse: RecourseRow,
): Promise<ReturnAnswer> {
  const { versionId, userId, candidatePrefix: prefix } = recourse;
  const key = `return:${versionId}`;
  let answer: Awaited<ReturnType<typeof returnCreditCall>> | null = null;
  try {
    answer = await returnCreditCall(env, teamId, { jobId, actorId: userId, reason: RETURN_REASON, key, recourse });
  } catch (err) {
    log.warn("team pool's return call failed; reading whether it was written", { err: String(err), teamId });
  }
  const balance = (await cachedBalance(db, userId)) ?? 0;
  const kept = !!prefix;
  // Nothing back to the pool when the seat payment that bought the credit was reversed since (ADR 0349).
  const to = (returned: number) => (returned > 0 ? ("team" as const) : ("held-back" as const));
  if (answer?.ok) {
    const { returned, pool } = answer;
    return { ok: true, balance, versionId, returned, kept, returnedTo: to(returned), pool };
  }
  if (answer === null) {
    const [refund, heldBack, team] = await db.batch([
      db.select({ amount: teamLedger.amount }).from(teamLedger).where(eq(teamLedger.idempotencyKey, key)),
      db
        .select({ amount: teamLedger.amount })
        .from(teamLedger)
        .where(eq(teamLedger.idempotencyKey, `held-back:${key}`)),
      db.select({ credits: teams.credits }).from(teams).where(eq(teams.id, teamId)),
    ]);
    if (refund[0]) {
      const pool = team[0]?.credits ?? null;
      const returned = refund[0].amount + (heldBack[0]?.amount ?? 0);
      return { ok: true, balance, versionId, returned, kept, returnedTo: to(returned), pool };
    }
  }
  // Not reached, or no answer and nothing written when read: a refusal. The copies stay (the call may still land
  // and name them; they go with the account), and sending again is answered by the team's object once, by its key.
  if (answer === null) return refusal("unavailable", TEAM_POOL_UNREACHABLE, balance);
  if (prefix) await deleteCopies(env, prefix);
  // Not an active member of the job's team (removed since): the version is not theirs to return any more.
  if (answer.code === "not_found") return refusal("not_found", VERSION_NOT_FOUND, balance);
  return refusal(answer.code, answer.error, balance);
}

function returnCreditCall(
  env: Pick<Env, "TEAM_OBJECT">,
  teamId: string,
  request: Parameters<ReturnType<typeof teamObject>["returnCredit"]>[1],
) {
  return teamObject(env, teamId).returnCredit(teamId, request);
}

type Found = {
  version: typeof photoVersions.$inferSelect;
  originalKey: string;
  job: typeof jobs.$inferSelect | null;
};

/** Copies the source, the result and its change map under the candidate prefix; null when a picture is gone. */
async function copyPair(
  env: Pick<Env, "PHOTOS">,
  db: Database,
  row: Found,
  userId: string,
  versionId: string,
): Promise<string | null> {
  const prefix = candidatePrefix(userId, versionId);
  const from = row.job ? await sourceKey(db, row.job, row.originalKey) : row.originalKey;
  const parts: [string, string | null][] = [
    ["source", from],
    ["result", row.version.key],
    ["changes.png", row.version.structureMapKey],
  ];
  for (const [name, key] of parts) {
    if (!key) continue;
    const object = await env.PHOTOS.get(key);
    if (!object) {
      if (name === "changes.png") continue;
      await deleteCopies(env, prefix);
      return null;
    }
    await env.PHOTOS.put(`${prefix}${name}`, object.body, { httpMetadata: object.httpMetadata });
  }
  return prefix;
}

async function deleteCopies(env: Pick<Env, "PHOTOS">, prefix: string): Promise<void> {
  await env.PHOTOS.delete([`${prefix}source`, `${prefix}result`, `${prefix}changes.png`]);
}
