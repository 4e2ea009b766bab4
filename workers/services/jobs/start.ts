import { type JobKind, type JobParams, users } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { currentRequestId } from "@workers/lib/log";
import {
  getVersion,
  type JobWithVersion,
  jobView,
  jobWithVersion,
  MAX_JOB_WAIT_MS,
  sourceVariant,
  userObject,
} from "@workers/objects/client";
import { looksOf } from "@workers/services/jobs/looks";
import type { Deps } from "@workers/services/request-deps";
import { type PhotoAccess, photoAccess } from "@workers/services/teams/access";
import { eq } from "drizzle-orm";
import { z } from "zod";
import type { JobRequest } from "~/shared/job-request";
import { MASK_MESSAGES } from "~/shared/masks";
import { fail, NOT_FOUND, ok, type Result } from "~/shared/result";
import { REFUSED_NOT_A_SOURCE, VERSION_NOT_FOUND } from "~/shared/version-view";
import type { CallbackCheck } from "./callback-url";
import { checkJobMask } from "./job-mask";
import { advancedOptions, jobParams, variationsOf } from "./request";
import { alreadyStarted, startFailure, startQueued } from "./start-queued";

// A job asked for one photo (POST /api/photos/:id/jobs, the public API's POST /photos/:id/jobs): the request,
// checked by its one schema (request.ts), turned into provider codes, and handed to the user's Durable Object,
// which reserves the credit and runs the job.

/** The plan the user is on now, as the payment webhook last recorded it. */
export async function currentPlan(db: Deps["db"], userId: string): Promise<string | null> {
  const row = await db.select({ plan: users.plan }).from(users).where(eq(users.id, userId)).get();
  return row?.plan ?? null;
}

/**
 * Where the signed job.succeeded / job.failed event is POSTed, the key whose secret signs it, and the check its
 * address passes before anything is reserved. The public API's routes make it (`jobCallback` in callback-url.ts).
 */
export interface JobCallback {
  url: string;
  apiKeyId: string;
  check: CallbackCheck;
}

/** What the public API adds to a job request (docs/decisions/0120-public-api.md). */
export interface ApiJobOptions {
  /** Retries with this key get the first answer and are never charged again. */
  idempotency?: { key: string; hash: string };
  callback?: JobCallback;
}

/** Starts a job on one of the user's photos: a credit is reserved before it is queued, or nothing happens. */
export async function requestJob(
  deps: Pick<Deps, "db" | "env">,
  userId: string,
  photoId: string,
  body: Omit<JobRequest, "variations"> & Pick<Partial<JobRequest>, "variations">,
  opts: {
    /** A request of the public API (its own idempotency and callback). */
    api?: ApiJobOptions;
    /** The page's submission key (its Idempotency-Key header): the same request sent again starts nothing more. */
    submission?: string;
    /**
     * A team API key's job: `userId` is the team's runner and the pool pays under the key's name (ADR 0295); its
     * callback, when it names one, is checked here before anything is reserved (ADR 0315).
     */
    teamKey?: { teamId: string; payer: string; callback?: JobCallback };
    /** The caller's own photoAccess read for this user and photo (null: not reachable), so it is not read twice. */
    access?: PhotoAccess | null;
  } = {},
): Promise<
  Result<{
    job: ReturnType<typeof jobView> | { id: string; status: "queued" };
    credits: number;
    replayed?: boolean;
    jobIds?: string[];
  }>
> {
  const { api, submission, teamKey } = opts;
  const asked = jobParams(body);
  if (!asked.ok) return asked;
  const { kind, params } = asked;
  // Whose rows the photo is: the user's, or a teammate's in a team listing the user is an active member of (ADR 0280).
  // This one read also gives the photo's row and its team (who pays): nothing below reads them again.
  const access = opts.access !== undefined ? opts.access : await photoAccess(deps.db, userId, photoId);
  if (!access) return NOT_FOUND;
  const { ownerId: owner, photo, teamId } = access;
  if (kind === "stage") {
    const advanced = await advancedOptions(body, () => currentPlan(deps.db, userId));
    if (!advanced.ok) return advanced;
    Object.assign(params, advanced.options);
    // The listing's look as it is now, fixed in the job's parameters (docs/decisions/0190-one-look-for-a-listing.md);
    // read only when the photo's folder names one.
    const look = access.folderHasLook ? (await looksOf(deps.db, owner, [photoId])).get(photoId) : undefined;
    if (look) params.styleReference = look;
  }
  const source = sourceOf(kind, body.sourceVersionId);
  const mask = body.maskId;
  if (mask !== undefined && kind !== "removal") return fail("invalid", MASK_MESSAGES.onlyRemoval);
  if (source.from === "original" && source.named) params.source = "original";
  // A photo in the trash is refused by the user's object, where every paid action starts (ADR 0202).
  if (source.from === "version") {
    const version = await getVersion(deps.db, owner, photo.id, source.id);
    if (!version) return fail("not_found", VERSION_NOT_FOUND);
    if (version.structureVerdict === "refused") return fail("conflict", REFUSED_NOT_A_SOURCE);
    params.source = version.id;
  } else if (source.from === "latest") params.source = await sourceVariant(deps.db, photo);
  if (mask !== undefined) {
    // The brush's mask (ADR 0195): this photo's, the size of the image the removal starts from; kept in the job.
    const fits = await checkJobMask({ db: deps.db, bucket: deps.env.PHOTOS }, photo, params.source ?? "original", mask);
    if (!fits.ok) return fits;
    params.mask = mask;
  }
  if (api) return requestApiJob(deps, userId, { photoId: photo.id, kind, params }, api);
  // Through the user's queue: the plan's concurrency and priority, a seed, 1-4 variations (issue 15).
  const count = variationsOf(body);
  if (!count.ok) return count;
  if (teamKey?.callback) {
    const checked = await teamKey.callback.check(teamKey.callback.url);
    if (!checked.ok) return checked;
  }
  const paidBy = teamKey && { ...teamKey, callback: teamKey.callback && withoutCheck(teamKey.callback) };
  const started = await startQueued(deps, userId, { photoId, kind, params, teamId }, count.count, submission, paidBy);
  // Sent before (a lost answer, a resend): the jobs that sending started, charged once. Otherwise the lead job as
  // the object just wrote it (the page only needs its id and polls; no D1 re-read).
  const existing = alreadyStarted(started);
  let job: ReturnType<typeof jobView>;
  if (existing) job = jobView(existing);
  else if (!started.ok) return startFailure(started);
  else {
    job = {
      id: started.ids[0]!,
      photoId,
      kind,
      params: started.params,
      status: "queued",
      error: null,
      versionId: null,
      createdAt: started.createdAt,
      startedAt: null,
      finishedAt: null,
    };
  }
  return ok({
    job,
    // A team key's caller is told the team's pool; anyone else their own credits.
    credits: teamKey && started.pool !== null ? started.pool : started.balance,
    ...(existing ? { replayed: true } : {}),
    ...(count.count > 1 ? { jobIds: started.ids } : {}),
  });
}

/**
 * Where a job starts, as its request names it: the original (named, or a staging that names none), a version of the
 * photo, or, for a removal or sky that names none, the photo's latest result that may be a source (sourceVariant).
 */
type Source = { from: "original"; named: boolean } | { from: "version"; id: string } | { from: "latest" };

function sourceOf(kind: JobKind, sourceVersionId: string | null | undefined): Source {
  if (sourceVersionId === "original") return { from: "original", named: true };
  if (sourceVersionId) return { from: "version", id: sourceVersionId };
  return kind === "stage" ? { from: "original", named: false } : { from: "latest" };
}

/** The callback as the user's object keeps it: its address and key, not the check it passed. */
function withoutCheck({ url, apiKeyId }: JobCallback): { url: string; apiKeyId: string } {
  return { url, apiKeyId };
}

async function requestApiJob(
  deps: Pick<Deps, "env">,
  userId: string,
  job: { photoId: string; kind: JobKind; params: JobParams },
  api: ApiJobOptions,
) {
  if (api.callback) {
    const checked = await api.callback.check(api.callback.url);
    if (!checked.ok) return checked;
  }
  // A keyed request's job id is derived inside the user's object, from the key and its generation (api-jobs.ts).
  const jobId = randomToken();
  const started = await userObject(deps.env, userId).startApiJob(userId, {
    job: { jobId, ...job, requestId: currentRequestId() },
    ...(api.idempotency ? { idempotency: api.idempotency } : {}),
    ...(api.callback ? { callback: withoutCheck(api.callback) } : {}),
  });
  if (!started.ok) return startFailure(started);
  return ok({ ...started.answer, replayed: started.replayed });
}

/**
 * The long poll (docs/decisions/0146-job-long-poll.md): waits in the user's object until the job has ended or
 * `seconds` have passed, and answers with the job as jobWithVersion reads it. One request instead of a poll every 1.5 s, and
 * the answer leaves the moment the result is committed.
 */
export async function waitForJobWithVersion(
  deps: Pick<Deps, "db" | "env">,
  userId: string,
  jobId: string,
  seconds: number,
): Promise<JobWithVersion | undefined> {
  // The object answers with the job as it last read it: no second read here once the job has ended.
  if (seconds > 0) return userObject(deps.env, userId).waitForJob(userId, jobId, seconds * 1000);
  return jobWithVersion(deps.db, userId, jobId);
}

const WAIT_MESSAGE = `wait must be a whole number of seconds from 0 to ${MAX_JOB_WAIT_MS / 1000}`;

/**
 * `?wait=` of GET /api/jobs/:id: whole seconds in decimal digits, at most MAX_JOB_WAIT_MS; absent is 0. Digits
 * only: a number parser would also take "", "0x10" and "1e1".
 */
export const jobWaitQuery = z.object({
  wait: z
    .string()
    .regex(/^\d+$/, { message: WAIT_MESSAGE })
    .transform(Number)
    .pipe(z.number().max(MAX_JOB_WAIT_MS / 1000, { message: WAIT_MESSAGE }))
    .optional()
    .transform((seconds) => seconds ?? 0),
});

export { getJob, type JobParams, jobView, jobWithVersion } from "@workers/objects/client";
