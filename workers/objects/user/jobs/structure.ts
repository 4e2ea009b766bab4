import type { Database } from "@db/client";
import { countStatement } from "@db/ops-counts";
import { type Job, type JobParams, jobs, photoVersions } from "@db/schema";
import { type Checked, UNCHECKED } from "@workers/lib/structure/verdict";
import type { Stmt } from "@workers/objects/user/batch";
import { and, eq, inArray } from "drizzle-orm";
import { DEFAULT_CREATIVITY } from "~/shared/staging-options";
import type { CheckDesk } from "./checks";
import type { JobClock } from "./clock";
import { type JobResult, versionValues } from "./rows";

// The structure check as a step of a job (issue 33, docs/decisions/0162-results-true-to-the-room.md): a result is
// compared with the image it started from before its credit is committed. One that changed walls, windows or doors
// is tried once more, free, asking the provider to keep closer to the photo; refused twice, its credit goes back
// and the result stays visible, labelled, for its owner to keep for a credit. The check itself runs in the check
// Worker (checks.ts, workers/checker), so no picture is decoded, reduced or compared on the user's object.

/** What the person reads when a result is refused twice. */
export const STRUCTURE_REFUSED = "This result changed the room's walls, windows or doors, so it was not charged.";

export type { Checked };
export { UNCHECKED };

/** Checks results of one job (or one variations group), each named by its R2 key, against the image it started from. */
export type RoomCheck = (resultKey: string) => Promise<Checked>;

/**
 * The check of a job's results against the picture stored under `sourceKey`, for a job of `kind`: each result is
 * one message to the check Worker, awaited through `desk` (checks.ts). No source: every result is "unchecked".
 */
export function roomCheck(
  desk: CheckDesk,
  userId: string,
  kind: Job["kind"],
  sourceKey: string | null,
  clock?: JobClock,
): RoomCheck {
  return async (resultKey) => (sourceKey ? desk.request({ userId, kind, sourceKey, resultKey }, clock) : UNCHECKED);
}

/** The R2 key of the image a job starts from (its original, or the version it names); null when that is gone. */
export async function sourceKey(db: Database, job: Job, originalKey: string): Promise<string | null> {
  const from = job.params.source;
  if (!from || from === "original") return originalKey;
  const version = await db
    .select({ key: photoVersions.key })
    .from(photoVersions)
    .where(and(eq(photoVersions.id, from), eq(photoVersions.userId, job.userId)))
    .get();
  return version?.key ?? null;
}

/** The choices of the free second try: a new seed, and half the creativity (the provider's default when unset). */
export function retryParams(params: JobParams): JobParams {
  const creativity = params.designCreativity ?? DEFAULT_CREATIVITY;
  const seed = crypto.getRandomValues(new Uint32Array(1))[0]! % 2_147_483_647;
  return { ...params, seed, designCreativity: Math.round(Math.max(0.05, creativity / 2) * 100) / 100 };
}

/**
 * The rows of a result refused twice: its version, kept but not shown (the photo keeps what it showed), and the job
 * failed with the message and pointing at that version. Written in the batch that refunds the job's credit.
 */
export function refusedStatements(db: Database, job: Job, result: JobResult, checked: Checked, now: number): Stmt[] {
  return [
    db.insert(photoVersions).values(versionValues(job, result, now, checked)),
    db
      .update(jobs)
      .set({ status: "failed", error: STRUCTURE_REFUSED, versionId: result.versionId, finishedAt: now })
      .where(and(eq(jobs.id, job.id), inArray(jobs.status, ["queued", "running"]))),
    countStatement(db, now, "job_refused"),
  ];
}
