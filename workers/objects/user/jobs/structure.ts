import type { Database } from "@db/client";
import { countStatement } from "@db/ops-counts";
import { type Job, type JobParams, jobs, photoVersions } from "@db/schema";
import { type Checked, UNCHECKED } from "@workers/lib/structure/verdict";
import type { Stmt } from "@workers/objects/user/batch";
import { and, count, eq, gte, inArray } from "drizzle-orm";
import { newSeed } from "~/shared/staging-codes";
import { DEFAULT_CREATIVITY } from "~/shared/staging-options";
import { FREE_REFUSALS_PER_DAY } from "~/shared/version-view";
import type { CheckDesk } from "./checks";
import type { JobClock } from "./clock";
import { type JobResult, type StoredCheck, versionValues } from "./job-rows";

// The structure check as a step of a job (issue 33, docs/decisions/0162-results-true-to-the-room.md, and its three
// outcomes, 0215-flag-when-unsure.md): a result is compared with the image it started from before its credit is
// committed. One the check passed or flagged is delivered and charged (a flagged one marked "Check the walls and
// windows"). One it refused is tried once more, free, when a second call can differ (a staging: a new seed and
// less creativity); refused again, or a removal or sky the provider would only repeat, its credit goes back and the
// result stays visible, labelled, for its owner to keep for a credit. Past FREE_REFUSALS_PER_DAY refusals of the
// user's day, a refused result is delivered flagged and charged instead, saying why. The check itself runs in the
// check Worker (checks.ts, workers/checker), so no picture is decoded, reduced or compared on the user's object.

/** What the person reads when a result is refused twice. */
export const STRUCTURE_REFUSED = "This result changed the room's walls, windows or doors, so it was not charged.";

export type { Checked };
export { UNCHECKED };

/** Checks results of one job (or one variations group), each named by its R2 key, against the image it started from. */
export type RoomCheck = (resultKey: string) => Promise<Checked>;

/**
 * The check of a job's results against the picture stored under `sourceKey`, for a job of `kind`: each result is
 * one message to the check Worker, awaited through `desk` (checks.ts), which stores the result's change map beside it
 * (ADR 0260; a team job's beside its result under the team's prefix, ADR 0298). No source: every result is
 * "unchecked".
 */
export function roomCheck(
  desk: CheckDesk,
  userId: string,
  job: Pick<Job, "kind" | "teamId">,
  sourceKey: string | null,
  clock?: JobClock,
): RoomCheck {
  const { kind } = job;
  const team = job.teamId ? { teamId: job.teamId } : {};
  return async (resultKey) =>
    sourceKey
      ? desk.request({ userId, kind, sourceKey, resultKey, mapKey: changesKeyOf(resultKey), ...team }, clock)
      : { ...UNCHECKED, cause: "no_source" };
}

/** The change map's key of a result stored under `resultKey` (rows.versionChangesKey: `<version>.changes.png`). */
export function changesKeyOf(resultKey: string): string {
  return `${resultKey.replace(/\.[a-z]+$/, "")}.changes.png`;
}

/** The R2 key of the image a job starts from (its original, or the version it names); null when that is gone. */
export async function sourceKey(db: Database, job: Job, originalKey: string): Promise<string | null> {
  const from = job.params.source;
  if (!from || from === "original") return originalKey;
  const version = await db
    .select({ key: photoVersions.key })
    .from(photoVersions)
    .where(and(eq(photoVersions.id, from), eq(photoVersions.photoId, job.photoId)))
    .get();
  return version?.key ?? null;
}

/**
 * Whether a refused result is tried again: only a staging, whose call sends a seed and a creativity the provider
 * honours. A removal or sky call sends the image (and a mask) alone (workers/objects/user/jobs/produce.ts): a second
 * call would be the same request, another provider charge for no new choice.
 */
export function retriesOnRefusal(kind: Job["kind"]): boolean {
  return kind === "stage";
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * How many of the user's results the check refused since midnight UTC of `now`, counted from their versions
 * (refused, or refused and then kept): the rows are the count, so nothing can drift from them.
 */
export async function refusedToday(db: Database, userId: string, now: number): Promise<number> {
  const row = await db
    .select({ n: count() })
    .from(photoVersions)
    .where(
      and(
        eq(photoVersions.userId, userId),
        gte(photoVersions.createdAt, now - (now % DAY_MS)),
        inArray(photoVersions.storedVerdict, ["refused", "kept"]),
      ),
    )
    .get();
  return row?.n ?? 0;
}

/** Whether the user's free refusals of the day are spent: a refused result is then delivered flagged and charged. */
export async function refusalsSpent(db: Database, userId: string, now: number): Promise<boolean> {
  return (await refusedToday(db, userId, now)) >= FREE_REFUSALS_PER_DAY;
}

/**
 * A result that is delivered and charged, as its version stores it: passed, flagged or unchecked as the check said,
 * or, refused once the day's free refusals were spent, flagged for that reason.
 */
export function delivered(checked: Checked): StoredCheck & { verdict: "passed" | "flagged" | "unchecked" } {
  const { score, reasons } = checked;
  const map = checked.mapKey ? { mapKey: checked.mapKey } : {};
  if (checked.verdict === "unchecked")
    return { verdict: "unchecked", score, reasons, cause: checked.cause ?? "failed" };
  if (checked.verdict === "refused") return { verdict: "flagged", score, reasons, flaggedBy: "daily_limit", ...map };
  return { verdict: checked.verdict, score, reasons, ...map };
}

/** The choices of the free second try: a new seed, and half the creativity (the provider's default when unset). */
export function retryParams(params: JobParams): JobParams {
  const creativity = params.designCreativity ?? DEFAULT_CREATIVITY;
  return { ...params, seed: newSeed(), designCreativity: Math.round(Math.max(0.05, creativity / 2) * 100) / 100 };
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
