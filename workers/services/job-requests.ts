import { type Job, type JobKind, type JobParams, type PhotoVersion, users } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import {
  getVersion,
  isJobKind,
  jobView,
  jobWithVersion,
  MAX_JOB_WAIT_MS,
  sourceVariant,
  userObject,
} from "@workers/objects/client";
import { eq } from "drizzle-orm";
import { z } from "zod";
import { designStyleCode, isSkyType, QUICK_FURNITURE_STYLES, QUICK_ROOM_TYPES, ROOM_TYPES } from "~/shared/catalog";
import { fail, NOT_FOUND, ok, type Result } from "~/shared/result";
import {
  ADVANCED_REFUSED_MESSAGE,
  COLOR_SCHEME_CODES,
  DEFAULT_CREATIVITY,
  PROMPT_MAX,
  planAllowsAdvanced,
  SPECIALITY_DECOR_CODES,
} from "~/shared/staging-options";
import { hasControlCharacters } from "~/shared/text";
import type { Deps } from "./deps";
import { alreadyStarted, startFailure, startQueued, variationsFrom } from "./job-queue";
import { getPhoto } from "./library";

// What a person asks of the AI (POST /api/photos/:id/jobs), checked and turned
// into provider codes here, then handed to the user's Durable Object, which
// reserves the credit and runs the job.

export const MISSING_OPTIONS = "Please select all required options";
export const INVALID_SKY_TYPE = "Invalid sky type";

/** Any JSON object; the fields are read below so each missing one gets the spec's message. */
export const jobRequestBody = z.record(z.string(), z.unknown(), { message: "The request body must be a JSON object." });

const ROOM_CODES = new Set([...ROOM_TYPES, ...QUICK_ROOM_TYPES].map((r) => r.code));
const ROOM_NAMES = new Map([...ROOM_TYPES, ...QUICK_ROOM_TYPES].map((r) => [r.name.toLowerCase(), r.code]));

function roomCode(value: string): string | undefined {
  const v = value.trim().toLowerCase();
  return ROOM_CODES.has(v) ? v : ROOM_NAMES.get(v);
}

function styleCode(value: string): string {
  const quick = QUICK_FURNITURE_STYLES.find((s) => s.name.toLowerCase() === value.trim().toLowerCase());
  return quick?.code ?? designStyleCode(value);
}

function text(v: unknown): string | undefined {
  return typeof v === "string" && v.trim().length > 0 && v.length <= 100 ? v : undefined;
}

const advancedFields = z.object({
  colorScheme: z
    .string()
    .refine((v) => COLOR_SCHEME_CODES.has(v), "Unknown colour palette.")
    .optional(),
  specialityDecor: z
    .string()
    .refine((v) => SPECIALITY_DECOR_CODES.has(v), "Unknown decor theme.")
    .optional(),
  /** Deprecated: sent by no current provider client, so accepted for old integrations and ignored. */
  keepOriginalFloor: z.boolean().optional(),
  designCreativity: z
    .number("Creativity must be a number from 0 to 1.")
    .min(0, "Creativity must be a number from 0 to 1.")
    .max(1, "Creativity must be a number from 0 to 1.")
    .optional(),
  prompt: z
    .string()
    .trim()
    .max(PROMPT_MAX, `Instructions must be at most ${PROMPT_MAX} characters.`)
    .refine((v) => !hasControlCharacters(v), "Instructions cannot contain control characters.")
    .optional(),
});

type AdvancedParams = Pick<JobParams, "colorScheme" | "specialityDecor" | "designCreativity" | "prompt">;

/** The advanced options asked for (only what differs from the provider's defaults), or why they are refused. */
export async function advancedOptionsFrom(
  body: Record<string, unknown>,
  plan: () => Promise<string | null>,
): Promise<Result<{ options: AdvancedParams }>> {
  const parsed = advancedFields.safeParse({
    colorScheme: body.colorScheme ?? undefined,
    specialityDecor: body.specialityDecor ?? undefined,
    keepOriginalFloor: body.keepOriginalFloor ?? undefined,
    designCreativity: body.designCreativity ?? undefined,
    prompt: body.prompt ?? undefined,
  });
  if (!parsed.success) return fail("invalid", parsed.error.issues[0]?.message ?? MISSING_OPTIONS);
  const o = parsed.data;
  const options: AdvancedParams = {};
  if (o.colorScheme && o.colorScheme !== "COLOR_SCHEME_0") options.colorScheme = o.colorScheme;
  if (o.specialityDecor && o.specialityDecor !== "SPECIALITY_DECOR_0") options.specialityDecor = o.specialityDecor;
  if (o.designCreativity !== undefined && o.designCreativity !== DEFAULT_CREATIVITY)
    options.designCreativity = o.designCreativity;
  if (o.prompt) options.prompt = o.prompt;
  if (Object.keys(options).length > 0 && !planAllowsAdvanced(await plan())) {
    return fail("forbidden", ADVANCED_REFUSED_MESSAGE);
  }
  return ok({ options });
}

/** The plan the user is on now, as the payment webhook last recorded it. */
async function currentPlan(db: Deps["db"], userId: string): Promise<string | null> {
  const row = await db.select({ plan: users.plan }).from(users).where(eq(users.id, userId)).get();
  return row?.plan ?? null;
}

/** The job's kind and provider parameters from the request's fields, or the spec's message. */
export function jobParamsFrom(body: Record<string, unknown>): Result<{ kind: JobKind; params: JobParams }> {
  const kind = body.kind;
  if (!isJobKind(kind)) return fail("invalid", MISSING_OPTIONS);
  const params: JobParams = {};
  if (kind === "stage") {
    const room = text(body.roomType);
    const style = text(body.designStyle);
    const code = room ? roomCode(room) : undefined;
    if (!code || !style) return fail("invalid", MISSING_OPTIONS);
    params.roomType = code;
    params.designStyle = styleCode(style);
  } else if (kind === "sky") {
    if (body.skyType === undefined || body.skyType === null || body.skyType === "") {
      return fail("invalid", MISSING_OPTIONS);
    }
    if (!isSkyType(body.skyType)) return fail("invalid", INVALID_SKY_TYPE);
    params.skyType = body.skyType;
  }
  return ok({ kind, params });
}

/** What the public API adds to a job request (docs/decisions/0120-public-api.md). */
export interface ApiJobOptions {
  /** Retries with this key get the first answer and are never charged again. */
  idempotency?: { key: string; hash: string };
  /** Where the signed job.succeeded / job.failed event is POSTed, and the key whose secret signs it. */
  callback?: { url: string; apiKeyId: string };
}

/** Starts a job on one of the user's photos: a credit is reserved before it is queued, or nothing happens. */
export async function requestJob(
  deps: Pick<Deps, "db" | "env">,
  userId: string,
  photoId: string,
  body: Record<string, unknown>,
  opts: {
    /** A request of the public API (its own idempotency and callback). */
    api?: ApiJobOptions;
    /** The page's submission key (its Idempotency-Key header): the same request sent again starts nothing more. */
    submission?: string;
  } = {},
): Promise<
  Result<{
    job: ReturnType<typeof jobView> | { id: string; status: "queued" };
    credits: number;
    replayed?: boolean;
    jobIds?: string[];
  }>
> {
  const { api, submission } = opts;
  const asked = jobParamsFrom(body);
  if (!asked.ok) return asked;
  const { kind, params } = asked;
  if (kind === "stage") {
    const advanced = await advancedOptionsFrom(body, () => currentPlan(deps.db, userId));
    if (!advanced.ok) return advanced;
    Object.assign(params, advanced.options);
  }
  const from = body.sourceVersionId;
  const fromVersion = from !== undefined && from !== null && from !== "" && from !== "original";
  // Staging from the original needs nothing of the photo's row: the user's object checks the photo is theirs and
  // out of the trash in the round trip that reads the balance, and answers "Not found." as here (one D1 round trip
  // fewer on the way to the provider).
  const objectChecksPhoto = !api && !fromVersion && (kind === "stage" || from === "original");
  if (from === "original") params.source = "original";
  if (!objectChecksPhoto) {
    const photo = await getPhoto(deps.db, userId, photoId);
    if (!photo || photo.trashedAt !== null) return NOT_FOUND;
    if (fromVersion) {
      const version = typeof from === "string" ? await getVersion(deps.db, userId, photo.id, from) : undefined;
      if (!version) return fail("not_found", "That version of the photo was not found.");
      params.source = version.id;
    } else if (kind !== "stage" && from !== "original") params.source = await sourceVariant(deps.db, photo);
    if (api) return requestApiJob(deps, userId, { photoId: photo.id, kind, params }, api);
  }
  // Through the user's queue: the plan's concurrency and priority, a seed, 1-4 variations (issue 15).
  const count = variationsFrom(body, kind);
  if (!count.ok) return count;
  const started = await startQueued(
    deps,
    userId,
    { photoId, kind, params },
    count.count,
    objectChecksPhoto,
    submission,
  );
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
    credits: started.balance,
    ...(existing ? { replayed: true } : {}),
    ...(count.count > 1 ? { jobIds: started.ids } : {}),
  });
}

async function requestApiJob(
  deps: Pick<Deps, "env">,
  userId: string,
  job: { photoId: string; kind: JobKind; params: JobParams },
  api: ApiJobOptions,
) {
  // A keyed request's job id is derived inside the user's object, from the key and its generation (api-jobs.ts).
  const jobId = randomToken();
  const started = await userObject(deps.env, userId).startApiJob(userId, { job: { jobId, ...job }, ...api });
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
): Promise<{ job: Job; version: PhotoVersion | undefined } | undefined> {
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

export { getJob, getVersion, type JobParams, jobView, jobWithVersion, listVersions } from "@workers/objects/client";
