import type { Database } from "@db/client";
import { countStatement } from "@db/ops-counts";
import { type Job, type JobParams, jobs, photoVersions, type StructureVerdict } from "@db/schema";
import { imagesFor } from "@workers/lib/images";
import { log } from "@workers/lib/log";
import { analysisSize, checkStructure, type Gray, toAnalysis } from "@workers/lib/structure/check";
import { describeImage } from "@workers/lib/thumbnail";
import type { Stmt } from "@workers/objects/user/batch";
import { and, eq, inArray } from "drizzle-orm";
import { DEFAULT_CREATIVITY } from "~/shared/staging-options";
import { type JobResult, versionValues } from "./rows";

// The structure check as a step of a job (issue 33, docs/decisions/0162-results-true-to-the-room.md): a result is
// compared with the image it started from before its credit is committed. One that changed walls, windows or doors
// is tried once more, free, asking the provider to keep closer to the photo; refused twice, its credit goes back
// and the result stays visible, labelled, for its owner to keep for a credit. The pictures are reduced by the
// platform's image service (workers/lib/images.ts), so no image is decoded on the user's object.

/** What the person reads when a result is refused twice. */
export const STRUCTURE_REFUSED = "This result changed the room's walls, windows or doors, so it was not charged.";

/** The gray image the platform reduces each picture to before the check reduces it to its analysis size. */
const REDUCED_EDGE = 640;
/**
 * Pictures smaller than this on their long edge are not judged: the check compares at 320 px, and a thumbnail-sized
 * picture has no architecture to read at that size. (Listing photos are 2048 px and up; uploads keep 2560 px.)
 */
export const MIN_CHECKED_EDGE = 256;

export interface Checked {
  verdict: Extract<StructureVerdict, "passed" | "refused" | "unchecked">;
  score: number | null;
}

/** What the check says when it cannot judge: delivered and charged as any other result, never refused for it. */
export const UNCHECKED: Checked = { verdict: "unchecked", score: null };

/** Checks results of one job (or one variations group) against the image it started from. */
export type RoomCheck = (result: Uint8Array) => Promise<Checked>;

/**
 * The check of a job's results against `source` for a job of `kind`, the source reduced once however many results
 * are judged (a retry, the members of a variations group): one Images call and one reduction on this object's
 * thread fewer per result. A check that cannot run (no source, the image service failed, an image it cannot read) is
 * "unchecked", never a refusal.
 */
export function roomCheck(env: Env, kind: Job["kind"], source: Uint8Array | null): RoomCheck {
  let room: Promise<{ gray: Gray; size: { width: number; height: number } } | null> | undefined;
  const reduceRoom = async () => {
    if (!source || longEdge(source) < MIN_CHECKED_EDGE) return null;
    const src = await imagesFor(env).analysisGray(source, REDUCED_EDGE);
    const size = analysisSize(src.width, src.height);
    return { gray: toAnalysis(src.data, src.width, src.height, size), size };
  };
  return async (result) => {
    try {
      room ??= reduceRoom();
      const reduced = await room;
      if (!reduced || longEdge(result) < MIN_CHECKED_EDGE) return UNCHECKED;
      const res = await imagesFor(env).analysisGray(result, REDUCED_EDGE);
      const verdict = checkStructure(reduced.gray, toAnalysis(res.data, res.width, res.height, reduced.size), { kind });
      return { verdict: verdict.pass ? "passed" : "refused", score: Math.round(verdict.score * 1000) / 1000 };
    } catch (err) {
      // A failed reduction of the room is tried again with the next result.
      room = undefined;
      log.warn(`structure check not run: ${err instanceof Error ? err.message : String(err)}`);
      return UNCHECKED;
    }
  };
}

function longEdge(bytes: Uint8Array): number {
  const { width, height } = describeImage(bytes);
  return Math.max(width, height);
}

/** The bytes of the image a job starts from (its original, or the version it names), as the provider fetched them. */
export async function sourceBytes(env: Env, db: Database, job: Job, originalKey: string): Promise<Uint8Array | null> {
  let key = originalKey;
  const from = job.params.source;
  if (from && from !== "original") {
    const version = await db
      .select({ key: photoVersions.key })
      .from(photoVersions)
      .where(and(eq(photoVersions.id, from), eq(photoVersions.userId, job.userId)))
      .get();
    if (!version) return null;
    key = version.key;
  }
  const object = await env.PHOTOS.get(key);
  return object ? new Uint8Array(await object.arrayBuffer()) : null;
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
