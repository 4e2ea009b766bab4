import { reachablePhoto } from "@db/access";
import type { Database } from "@db/client";
import {
  apiCallbacks,
  type Job,
  type JobKind,
  type JobParams,
  jobs,
  type Photo,
  type PhotoVersion,
  photos,
  photoVersions,
} from "@db/schema";
import { DEFAULT_PROVIDER_TIMEOUT_MS } from "@workers/adapters/provider";
import { photoPrefix, resultOwner } from "@workers/lib/photo-storage";
import type { Stmt } from "@workers/objects/user/batch";
import { and, desc, eq, inArray, isNull, lt, or, type SQL, sql } from "drizzle-orm";

// AI jobs as D1 has them: staging, sky replacement, furniture removal. The job
// row is written in the same batch as its credit's reservation (key = job id);
// the result is recorded as a new version in the batch that commits the credit,
// or the job is failed in the batch that refunds it (runner.ts).
// docs/decisions/0070-ai-jobs-in-the-user-object.md

export type { Job, JobKind, JobParams };

export const JOB_KINDS = ["stage", "sky", "removal"] as const;
export const INTERRUPTED_MESSAGE = "The job was interrupted before it finished. Your credit has been returned.";
export const GENERIC_FAILURE: Record<JobKind, string> = {
  stage: "Failed to process image",
  sky: "Failed to replace sky",
  removal: "Failed to remove furniture",
};
/** How long past the provider's timeout the alarm waits before calling a running job lost. */
export const JOB_WATCH_MARGIN_MS = 30_000;
/** The longest a GET /api/jobs/:id?wait holds before answering with the job as it is (docs/decisions/0146). */
export const MAX_JOB_WAIT_MS = 20_000;

export function isJobKind(v: unknown): v is JobKind {
  return typeof v === "string" && (JOB_KINDS as readonly string[]).includes(v);
}

export function providerTimeoutMs(env: Pick<Env, "PROVIDER_TIMEOUT_MS">): number {
  const n = Number(env.PROVIDER_TIMEOUT_MS);
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_PROVIDER_TIMEOUT_MS;
}

/** When a job started at `startedAt` must have its result in hand, enlargement included (the alarm's watch). */
export function jobDeadline(startedAt: number, timeoutMs: number): number {
  return startedAt + timeoutMs + JOB_WATCH_MARGIN_MS;
}

export function versionKey(userId: string, photoId: string, versionId: string): string {
  return `${photoPrefix(userId, photoId)}versions/${versionId}.jpg`;
}

export function versionThumbKey(userId: string, photoId: string, versionId: string): string {
  return `${photoPrefix(userId, photoId)}versions/${versionId}.thumb.jpg`;
}

/**
 * The change map of a version (docs/decisions/0260-change-map-with-the-version.md): beside its bytes, under the
 * photo's prefix, so whatever deletes the photo's objects deletes it too.
 */
export function versionChangesKey(userId: string, photoId: string, versionId: string): string {
  return `${photoPrefix(userId, photoId)}versions/${versionId}.changes.png`;
}

export interface StartJobInput {
  jobId: string;
  photoId: string;
  kind: JobKind;
  params: JobParams;
  /** The request that asked for the job (logged with its run and provider calls). */
  requestId?: string;
  /** The plan's queue priority (plan-limits.ts): 1 for Professional; 0 when left out. */
  priority?: number;
}

export function insertJobStatement(db: Database, userId: string, input: StartJobInput, now: number): Stmt {
  return db.insert(jobs).values({
    id: input.jobId,
    userId,
    photoId: input.photoId,
    kind: input.kind,
    params: input.params,
    status: "queued",
    attempts: 0,
    createdAt: now,
    requestId: input.requestId ?? null,
    priority: input.priority ?? 0,
  });
}

/**
 * A public API job's callback row ('waiting'), written in the batch that records its job (callbacks.ts delivers it
 * once the job has ended).
 */
export function insertCallbackStatement(
  db: Database,
  row: { jobId: string; userId: string; apiKeyId: string; url: string },
  now: number,
): Stmt {
  return db.insert(apiCallbacks).values({ ...row, status: "waiting", createdAt: now });
}

/** A job's provider call is tried at most this often (a restart mid-call retries it once). */
export const MAX_ATTEMPTS = 2;

/** Puts a job whose instance was lost back in the queue for its second attempt. */
export async function requeue(db: Database, jobId: string): Promise<void> {
  await db
    .update(jobs)
    .set({ status: "queued" })
    .where(and(eq(jobs.id, jobId), eq(jobs.status, "running")));
}

/**
 * Where a job's result is stored. The version id is the job id, so a retried
 * attempt overwrites the same keys and a failed job's bytes can always be found
 * and deleted.
 */
export function jobResultKeys(job: Pick<Job, "id" | "userId" | "teamId" | "photoId">): string[] {
  const owner = resultOwner(job);
  return [
    versionKey(owner, job.photoId, job.id),
    versionThumbKey(owner, job.photoId, job.id),
    versionChangesKey(owner, job.photoId, job.id),
  ];
}

export function failJobStatement(db: Database, jobId: string, message: string, now: number): Stmt {
  return db
    .update(jobs)
    .set({ status: "failed", error: message, finishedAt: now })
    .where(and(eq(jobs.id, jobId), inArray(jobs.status, ["queued", "running"])));
}

export async function getJob(db: Database, jobId: string): Promise<Job | undefined> {
  return db.select().from(jobs).where(eq(jobs.id, jobId)).get();
}

export async function openJobs(db: Database, userId: string): Promise<Job[]> {
  return db
    .select()
    .from(jobs)
    .where(and(eq(jobs.userId, userId), inArray(jobs.status, ["queued", "running"])))
    .all();
}

/**
 * One of the user's jobs and the version it produced, in one D1 round trip (the page polls this until the job
 * ends); undefined for a job that is not theirs.
 */
export async function jobWithVersion(db: Database, userId: string, jobId: string): Promise<JobWithVersion | undefined> {
  return jobWithVersionFrom(userId, await db.batch(jobWithVersionQueries(db, jobId)));
}

/**
 * A job with its version, and the key of the image its photo shows now (`shownKey`: null for the original, undefined
 * when the photo is gone), so an answer can say whether this result is the one shown (ADR 0360: a version chosen
 * before the job ended stays shown).
 */
export type JobWithVersion = { job: Job; version: PhotoVersion | undefined; shownKey: string | null | undefined };

/** Whether a job has reached its end (succeeded or failed): nothing about it changes after that but its thumbnail. */
export function hasEnded(job: Pick<Job, "status">): boolean {
  return job.status === "succeeded" || job.status === "failed";
}

/** A job's status, as a read to run along a batch (its answer: `statusRead`). */
export function jobStatusQuery(db: Database, jobId: string) {
  return db.select({ status: jobs.status }).from(jobs).where(eq(jobs.id, jobId));
}

/** The status jobStatusQuery read in a batch, from that batch's answer for it. */
export function statusRead(answer: unknown): Job["status"] | undefined {
  return (answer as { status: Job["status"] }[] | undefined)?.[0]?.status;
}

/** jobWithVersion's three reads, in one batch. */
function jobWithVersionQueries(db: Database, jobId: string) {
  return [
    db.select().from(jobs).where(eq(jobs.id, jobId)),
    db
      .select()
      .from(photoVersions)
      // The job is the user's (checked below); its version is the photo owner's, a teammate's in a team listing.
      .where(eq(photoVersions.jobId, jobId)),
    db
      .select({ key: photos.processedKey })
      .from(photos)
      .where(eq(photos.id, db.select({ id: jobs.photoId }).from(jobs).where(eq(jobs.id, jobId)))),
  ] as const;
}

/** What jobWithVersion answers, from the results of jobWithVersionQueries. */
function jobWithVersionFrom(userId: string, results: readonly unknown[]): JobWithVersion | undefined {
  const [jobRows, versionRows, shownRows] = results as [Job[], PhotoVersion[], { key: string | null }[]];
  const job = jobRows[0];
  if (!job || job.userId !== userId) return undefined;
  const version = job.versionId
    ? versionRows.find((v) => v.id === job.versionId && v.photoId === job.photoId)
    : undefined;
  return { job, version, shownKey: shownRows[0]?.key };
}

/**
 * Marks a queued job running and reads it with its photo, and whether the user still reaches that photo (db/access.ts:
 * a member removed from the team since does not), in one D1 round trip; undefined when another start got there first
 * (nothing changed then).
 */
export async function startRunning(
  db: Database,
  userId: string,
  jobId: string,
  now: number,
): Promise<{ job: Job; photo: Photo | undefined; reachable: boolean } | undefined> {
  const jobPhoto = db.select({ id: jobs.photoId }).from(jobs).where(eq(jobs.id, jobId));
  const [marked, photo, reached] = await db.batch([
    db
      .update(jobs)
      .set({ status: "running", startedAt: now, attempts: sql`${jobs.attempts} + 1` })
      .where(and(eq(jobs.id, jobId), eq(jobs.status, "queued")))
      .returning(),
    db.select().from(photos).where(eq(photos.id, jobPhoto)),
    db
      .select({ id: photos.id })
      .from(photos)
      .where(and(eq(photos.id, jobPhoto), reachablePhoto(userId))),
  ]);
  const job = marked[0];
  return job ? { job, photo: photo[0], reachable: reached.length > 0 } : undefined;
}

export interface JobResult {
  versionId: string;
  key: string;
  /** The version's thumbnail: at first the image itself while `pendingThumb` is being made. */
  thumbKey: string;
  /** Where the real thumbnail goes once made, after the job is committed (finishThumb). */
  pendingThumb?: { key: string; image: Uint8Array };
  contentType: string;
  bytes: number;
  width: number;
  height: number;
}

/** What the structure check said of a result, as its version stores it (docs/decisions/0215-flag-when-unsure.md). */
export interface StoredCheck {
  verdict: "passed" | "flagged" | "refused" | "unchecked";
  score: number | null;
  reasons: string[];
  /** A flagged result: flagged by its score, or refused and delivered because the day's free refusals were spent. */
  flaggedBy?: "score" | "daily_limit";
  /** The R2 key of the change map the check Worker stored for this result (absent: it stored none). */
  mapKey?: string;
  /** An unchecked result: why (counted on the operations page, not stored on the version). */
  cause?: "timeout" | "unsent" | "failed" | "unjudgeable" | "no_source";
}

/**
 * The columns that store a check (migrations/0021): a flagged result is 'passed' in structure_verdict with the reason
 * it is flagged beside it, which D1 reads back as structure_outcome 'flagged' (PhotoVersion.structureVerdict).
 */
function checkValues(c: StoredCheck) {
  return {
    storedVerdict: c.verdict === "flagged" ? ("passed" as const) : c.verdict,
    structureFlagged: c.verdict === "flagged" ? (c.flaggedBy ?? "score") : null,
    structureScore: c.score,
    structureReasons: c.reasons.length > 0 ? c.reasons : null,
    structureMapKey: c.mapKey ?? null,
  };
}

/** The photo_versions row of a job's result, with the structure check's verdict when it ran. */
export function versionValues(
  job: Job,
  result: JobResult,
  now: number,
  checked?: StoredCheck,
): Omit<typeof photoVersions.$inferInsert, "userId"> & { userId: SQL } {
  return {
    id: result.versionId,
    photoId: job.photoId,
    // The photo's owner, whoever ran the job (a teammate, in a team listing): every read of a photo's versions is
    // scoped by it. Who made it is `createdBy`.
    userId: sql`(SELECT user_id FROM photos WHERE id = ${job.photoId})`,
    createdBy: job.userId,
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
    ...(checked ? checkValues(checked) : {}),
  };
}

/**
 * What a photo's row becomes when its owner makes one of its versions the shown one (choosing it, keeping a refused
 * result, alone or on a team's listing): that version, chosen now, so a result asked for before stays a version
 * (docs/decisions/0360-a-chosen-version-stands.md). The thumbnail is read by the write itself: a result's thumbnail is
 * made after its commit (workers/objects/user/jobs/produce.ts finishThumb), so a version read earlier may still
 * name the image itself.
 */
export function chosenVersionValues(version: Pick<PhotoVersion, "id" | "key" | "contentType">, now: number) {
  return {
    processedKey: version.key,
    processedThumbKey: sql<string>`(select ${photoVersions.thumbKey} from ${photoVersions} where ${photoVersions.id} = ${version.id})`,
    processedContentType: version.contentType,
    processedAt: now,
    chosenAt: now,
  };
}

/**
 * The batch that records a finished job's version and points the photo at it, unless its owner chose the version the
 * photo shows after this job was asked for (docs/decisions/0360-a-chosen-version-stands.md): a variation or a retry
 * that ends after the choice is kept as a version, not shown over it.
 */
export function succeedStatements(
  db: Database,
  job: Job,
  result: JobResult,
  now: number,
  /** What the structure check said of the result (structure.ts); left out, the version is as before the check. */
  checked?: StoredCheck & { verdict: "passed" | "flagged" | "unchecked" },
): Stmt[] {
  return [
    db.insert(photoVersions).values(versionValues(job, result, now, checked)),
    db
      .update(photos)
      .set({
        processedKey: result.key,
        processedThumbKey: result.thumbKey,
        processedContentType: result.contentType,
        processedAt: now,
      })
      .where(and(eq(photos.id, job.photoId), or(isNull(photos.chosenAt), lt(photos.chosenAt, job.createdAt)))),
    db
      .update(jobs)
      .set({ status: "succeeded", versionId: result.versionId, finishedAt: now })
      .where(and(eq(jobs.id, job.id), eq(jobs.status, "running"))),
  ];
}

/** The image a sky or removal job works on: the newest version, else the original. */
export async function sourceVariant(db: Database, photo: Photo): Promise<string> {
  const v = await db
    .select({ id: photoVersions.id })
    .from(photoVersions)
    // A result the structure check refused is not a starting point until its owner keeps it (ADR 0162).
    .where(and(eq(photoVersions.photoId, photo.id), sql`${photoVersions.structureVerdict} IS NOT 'refused'`))
    .orderBy(desc(photoVersions.createdAt), desc(photoVersions.id))
    .limit(1)
    .get();
  return v?.id ?? "original";
}

export async function listVersions(db: Database, userId: string, photoId: string) {
  return db
    .select()
    .from(photoVersions)
    .where(and(eq(photoVersions.photoId, photoId), eq(photoVersions.userId, userId)))
    .orderBy(desc(photoVersions.createdAt), desc(photoVersions.id))
    .all();
}

export async function getVersion(db: Database, userId: string, photoId: string, versionId: string) {
  return db
    .select()
    .from(photoVersions)
    .where(and(eq(photoVersions.id, versionId), eq(photoVersions.photoId, photoId), eq(photoVersions.userId, userId)))
    .get();
}

/** What the API tells the owner about a job (never the provider's address or key). */
export function jobView(job: Job) {
  return {
    id: job.id,
    photoId: job.photoId,
    kind: job.kind,
    params: job.params,
    status: job.status,
    error: job.error,
    versionId: job.versionId,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
  };
}
