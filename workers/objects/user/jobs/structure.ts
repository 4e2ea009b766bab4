import type { Database } from "@db/client";
import { countStatement } from "@db/ops-counts";
import { type Job, type JobParams, jobs, photoVersions, type StructureVerdict } from "@db/schema";
import { imagesFor } from "@workers/lib/images";
import { log } from "@workers/lib/log";
import { analysisSize, checkStructure, toAnalysis } from "@workers/lib/structure/check";
import { describeImage } from "@workers/lib/thumbnail";
import type { Stmt } from "@workers/objects/user/batch";
import { and, eq, inArray } from "drizzle-orm";
import { DEFAULT_CREATIVITY } from "~/shared/staging-options";
import type { JobResult } from "./rows";

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

/**
 * The check of `result` against `source` for a job of `kind`. A check that cannot run (the image service failed,
 * an image it cannot read) is "unchecked": the result is delivered and charged as any other, never refused for it.
 */
export async function checkResult(
  env: Env,
  kind: Job["kind"],
  source: Uint8Array,
  result: Uint8Array,
): Promise<Checked> {
  try {
    const edges = [source, result].map((b) => {
      const { width, height } = describeImage(b);
      return Math.max(width, height);
    });
    if (Math.min(...edges) < MIN_CHECKED_EDGE) return { verdict: "unchecked", score: null };
    const images = imagesFor(env);
    const [src, res] = await Promise.all([
      images.analysisGray(source, REDUCED_EDGE),
      images.analysisGray(result, REDUCED_EDGE),
    ]);
    const size = analysisSize(src.width, src.height);
    const verdict = checkStructure(
      toAnalysis(src.data, src.width, src.height, size),
      toAnalysis(res.data, res.width, res.height, size),
      { kind },
    );
    return { verdict: verdict.pass ? "passed" : "refused", score: Math.round(verdict.score * 1000) / 1000 };
  } catch (err) {
    log.warn(`structure check not run: ${err instanceof Error ? err.message : String(err)}`);
    return { verdict: "unchecked", score: null };
  }
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
    db.insert(photoVersions).values({
      id: result.versionId,
      photoId: job.photoId,
      userId: job.userId,
      jobId: job.id,
      kind: job.kind,
      params: job.params,
      key: result.key,
      thumbKey: result.thumbKey,
      contentType: result.contentType,
      bytes: result.bytes,
      width: result.width,
      height: result.height,
      createdAt: now,
      structureVerdict: "refused",
      structureScore: checked.score,
    }),
    db
      .update(jobs)
      .set({ status: "failed", error: STRUCTURE_REFUSED, versionId: result.versionId, finishedAt: now })
      .where(and(eq(jobs.id, job.id), inArray(jobs.status, ["queued", "running"]))),
    countStatement(db, now, "job_refused"),
  ];
}
