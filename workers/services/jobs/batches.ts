import { activeMember } from "@db/access";
import { inList } from "@db/lists";
import { type Batch, batches, type Job, type JobParams, jobs, photos, type StyleReference, users } from "@db/schema";
import { keyedToken, randomToken } from "@workers/lib/crypto";
import { currentRequestId } from "@workers/lib/log";
import { SUBMISSION_REUSED, userObject } from "@workers/objects/client";
import { currentBalance } from "@workers/services/account";
import { looksOf } from "@workers/services/jobs/looks";
import type { Deps } from "@workers/services/request-deps";
import type { UserRef } from "@workers/services/sessions";
import { folderAccess, reachablePhoto } from "@workers/services/teams/access";
import { payerOfPhotos, startPaidBy } from "@workers/services/teams/funding";
import { myTeams } from "@workers/services/teams/teams";
import { and, asc, desc, eq, gte, isNotNull, or, type Placeholder, sql } from "drizzle-orm";
import { z } from "zod";
import { jobFields, stagingChoices } from "~/shared/job-request";
import { type BatchItemStatus, itemStatus, MAX_BATCH_PHOTOS } from "~/shared/listing";
import { BATCH_LOOK_CHOICES, LOOK_STRENGTH_MESSAGE, lookStrengthOf } from "~/shared/listing-look";
import { fail, NOT_FOUND, ok, type Result } from "~/shared/result";
import { newSeed } from "~/shared/staging-codes";
import { MISSING_OPTIONS } from "~/shared/staging-options";
import { wrongPayerMessage } from "~/shared/teams";
import { advancedOptions, jobParams } from "./request";
import { currentPlan } from "./start";
import { alreadyStarted, startFailure, submittedJobIds } from "./start-queued";

// Staging a whole listing (issue 15): batches, variations, the free re-roll,
// retries and the chosen version. Every start goes to the user's Durable
// Object (startJobs), which reserves each job's credit, all or none, and
// queues them. docs/decisions/0140-batches-variations-rerolls.md
// A batch of a team listing's photos spends the team's pool, taken first by the team's object for every job, as any
// team job (docs/decisions/0310-a-team-listings-batch.md).

type Db = Deps["db"];

// ---- Batches ----

/** What a page's form that cannot be read is told: nothing in it can be trusted, so it is drawn again. */
export const FORM_NOT_UNDERSTOOD = "The form was not understood. Reload the page and try again.";

/**
 * A form's submission key (the new-batch form's, a batch's retry form's): randomToken()'s 32 base32 letters,
 * minted when the form is drawn (batchForm, batchPage); absent is allowed, any other value is refused.
 */
export const submissionField = z
  .string()
  .regex(/^[a-z2-7]{32}$/, FORM_NOT_UNDERSTOOD)
  .optional();

const PAID_BY_MESSAGE = 'paidBy must be "own" or the id of a team you belong to.';

/** A batch: one style for every photo and a room each, the job request's fields (request.ts) with its choices. */
const batchBody = z.object({
  folderId: z.string().max(64).nullish(),
  designStyle: jobFields.designStyle.unwrap().min(1, MISSING_OPTIONS),
  items: z
    .array(
      z.object({ photoId: z.string().min(1).max(64), roomType: jobFields.roomType.unwrap().min(1, MISSING_OPTIONS) }),
      {
        message: "Choose at least one photo.",
      },
    )
    .min(1, "Choose at least one photo.")
    .max(MAX_BATCH_PHOTOS, `A batch takes at most ${MAX_BATCH_PHOTOS} photos.`),
  ...stagingChoices,
  submission: submissionField,
  /**
   * Where the batch is paid from, as the library-wide form chose it (docs/decisions/0318): "own" or a team's id. Absent:
   * wherever its photos are (one place, ADR 0310). Given, every photo must be paid from there.
   */
  paidBy: z.union([z.literal("own"), z.string().regex(/^[a-z0-9]{1,64}$/)], { error: PAID_BY_MESSAGE }).optional(),
  /** Whether the photos follow their listing's look (the default) or not in this batch (docs/decisions/0190). */
  look: z.enum(BATCH_LOOK_CHOICES, { error: 'look must be "listing" or "none".' }).optional(),
  /** How closely, for this batch: one of the named steps; absent, each listing's own strength. */
  lookStrength: z
    .number(LOOK_STRENGTH_MESSAGE)
    .refine((v) => lookStrengthOf(v) !== null, LOOK_STRENGTH_MESSAGE)
    .optional(),
});

export type BatchRequest = z.input<typeof batchBody> & Record<string, unknown>;

/** Starts one staging job per photo (one style for all, a room type each), each with its own credit. */
export async function startBatch(
  deps: Pick<Deps, "db" | "env">,
  userId: string,
  body: Record<string, unknown>,
): Promise<Result<{ batchId: string; credits: number; jobs: number }>> {
  const parsed = batchBody.safeParse(body);
  if (!parsed.success) return fail("invalid", parsed.error.issues[0]?.message ?? MISSING_OPTIONS);
  const { items, designStyle } = parsed.data;
  const folderId = parsed.data.folderId || null;
  // The user's own folder, or a listing of a team they are an active member of (ADR 0280); anyone else's is the 404
  // of a made-up id, before anything is read of its photos or written.
  if (folderId && !(await folderAccess(deps.db, userId, folderId))) {
    return fail("not_found", "That folder was not found.");
  }
  const { paidBy } = parsed.data;
  const chosen = await chosenPayer(deps.db, userId, paidBy);
  if (!chosen) return fail("not_found", "That team was not found.");
  const chosenTeam = chosen.team;
  const ids = items.map((i) => i.photoId);
  if (new Set(ids).size !== ids.length) return fail("invalid", "A photo is in the batch twice.");
  // Photos the user may reach, paid from one place: their own credits, or one team's pool (ADR 0310). One in the trash
  // is refused by the user's object with the words that say so (ADR 0202).
  const payer = await payerOfPhotos(deps.db, userId, ids);
  if (!payer.ok) return payer;
  const { teamId, owners } = payer;
  if (paidBy !== undefined && teamId !== (chosenTeam?.id ?? null)) {
    return fail("conflict", wrongPayerMessage(payer.first, chosenTeam?.name ?? null));
  }
  const advanced = await advancedOptions(parsed.data, () => currentPlan(deps.db, userId));
  if (!advanced.ok) return advanced;
  // Each photo's listing look as it is now, fixed in its job (a batch started with a look keeps it to the end).
  const { look: useLooks, lookStrength } = parsed.data;
  const looks = useLooks === "none" ? new Map() : await looksOfOwners(deps.db, owners);
  const planned: { photoId: string; params: JobParams }[] = [];
  for (const item of items) {
    const p = jobParams({ kind: "stage", roomType: item.roomType, designStyle });
    if (!p.ok) return p;
    const look = looks.get(item.photoId);
    const styleReference = look && { ...look, ...(lookStrength !== undefined ? { strength: lookStrength } : {}) };
    planned.push({
      photoId: item.photoId,
      params: { ...p.params, ...advanced.options, source: "original", ...(styleReference ? { styleReference } : {}) },
    });
  }
  // The form's submission key names the batch and its jobs: the same form sent twice (a double tap before the
  // page's script runs, a resent POST on a bad connection) finds the jobs its first sending started. Every photo
  // was checked above, so a batch whose first job went with its purged photo is refused before this.
  const { submission } = parsed.data;
  const batchId = submission ? keyedToken("batch", userId, submission) : randomToken();
  const jobIds = submittedJobIds("batch", userId, submission, planned.length);
  const reason = "AI stage (batch)";
  // A team listing's batch: the pool's credits for every photo taken first, all or none (the pool, the member's limit,
  // the frozen pool refuse before anything reaches the provider), then the jobs recorded naming the team (ADR 0270).
  const { started } = await startPaidBy(deps.env, teamId, userId, jobIds, reason, () =>
    userObject(deps.env, userId).startJobs(userId, {
      requestId: currentRequestId(),
      batch: { id: batchId, folderId, designStyle: planned[0]!.params.designStyle! },
      submitted: submission !== undefined,
      jobs: planned.map((p, i) => ({
        jobId: jobIds[i]!,
        photoId: p.photoId,
        kind: "stage" as const,
        params: { ...p.params, seed: newSeed() },
        cost: 1 as const,
        reason,
        batchId,
        teamId,
      })),
    }),
  );
  // Sent again: the batch the first sending started, nothing charged twice.
  if (alreadyStarted(started)) return ok({ batchId, credits: started.balance, jobs: 0 });
  if (!started.ok) return startFailure(started);
  return ok({ batchId, credits: started.balance, jobs: planned.length });
}

export interface BatchItemView {
  photoId: string;
  photoName: string;
  jobId: string;
  status: BatchItemStatus;
  error: string | null;
  roomType: string | null;
  /** Set once the result has landed. */
  thumbUrl: string | null;
  imageUrl: string | null;
  /** How many attempts this photo has had in the batch (1 + retries). */
  attempts: number;
}

export interface BatchView {
  id: string;
  folderId: string | null;
  designStyle: string;
  createdAt: number;
  items: BatchItemView[];
  counts: Record<BatchItemStatus, number>;
  open: boolean;
}

/** The batch's progress: per photo its newest job (a retry replaces the failure it retries). */
export async function batchView(db: Db, userId: string, batchId: string): Promise<BatchView | null> {
  const batch = await db
    .select()
    .from(batches)
    .where(and(eq(batches.id, batchId), eq(batches.userId, userId)))
    .get();
  if (!batch) return null;
  return (await batchViews(db, [batch]))[0]!;
}

/**
 * Where a batch is paid from as the library's form chose it (docs/decisions/0318): absent or "own" is the user's own
 * credits (`team` null); a team's id must be a team the user is an active member of (with the user's teams, for the
 * page's picker). Null: a team that is not theirs, removed or made up, answered as the 404 of a made-up id (ADR 0271).
 */
export async function chosenPayer(
  db: Db,
  userId: string,
  paidBy: string | null | undefined,
): Promise<{ team: { id: string; name: string } | null } | null> {
  if (!paidBy || paidBy === "own") return { team: null };
  const team = (await myTeams(db, userId)).find((t) => t.id === paidBy);
  return team ? { team } : null;
}

/**
 * A batch's progress as a viewer sees it (docs/decisions/0317-teammates-see-a-team-batch.md): their own batch, or a
 * team batch (its jobs on a team's pool) when they are an active member of that team, whoever started it. A
 * stranger's, a removed member's and a made-up id are alike: null. `startedBy` names the member when it is not the
 * viewer's own; only the member who started it retries it.
 */
export async function viewableBatch(
  db: Db,
  viewerId: string,
  batchId: string,
): Promise<{ view: BatchView; mine: boolean; startedBy: string } | null> {
  const row = await db
    .select({ batch: batches, startedBy: users.name })
    .from(batches)
    .leftJoin(users, eq(users.id, batches.userId))
    .where(
      and(
        eq(batches.id, batchId),
        or(
          eq(batches.userId, viewerId),
          // One payer per batch (ADR 0310): every job of a team batch names the same team.
          sql`EXISTS (SELECT 1 FROM jobs tj WHERE tj.batch_id = ${batches.id} AND tj.team_id IS NOT NULL AND ${activeMember(sql`tj.team_id`, viewerId)})`,
        ),
      ),
    )
    .get();
  if (!row) return null;
  const mine = row.batch.userId === viewerId;
  // A teammate sees the photos they may reach themselves (the team listing's), the member what they may reach.
  const [view] = await batchViews(db, [row.batch], mine ? undefined : viewerId);
  return { view: view!, mine, startedBy: row.startedBy ?? "A former member" };
}

type BatchRow = { job: Job; photoName: string };

/**
 * The views of several batches from one read of their jobs (no read at all for none). Each lists the photos its
 * member may still reach, or, given a teammate `viewerId`, the team's photos that viewer may reach.
 */
export async function batchViews(db: Db, list: Batch[], viewerId?: string): Promise<BatchView[]> {
  if (list.length === 0) return [];
  const rows = await db
    .select({ job: jobs, photoName: photos.name })
    .from(jobs)
    .innerJoin(photos, eq(photos.id, jobs.photoId))
    .where(
      and(
        inList(
          jobs.batchId,
          list.map((b) => b.id),
        ),
        // Only photos the batch's member may still reach: a team listing's batch shows nothing of the team's to a
        // member removed since (ADR 0271, 0310); its personal photos are theirs. A teammate: the team's jobs only.
        viewerId ? and(isNotNull(jobs.teamId), reachablePhoto(viewerId)) : reachablePhoto(jobs.userId),
      ),
    )
    .orderBy(asc(jobs.createdAt), asc(jobs.id))
    .all();
  return list.map((b) =>
    viewOf(
      b,
      rows.filter((r) => r.job.batchId === b.id),
    ),
  );
}

function viewOf(batch: Batch, rows: BatchRow[]): BatchView {
  const byPhoto = new Map<string, { job: Job; photoName: string; attempts: number }>();
  for (const r of rows) {
    const seen = byPhoto.get(r.job.photoId);
    byPhoto.set(r.job.photoId, { job: r.job, photoName: r.photoName, attempts: (seen?.attempts ?? 0) + 1 });
  }
  const items = [...byPhoto.values()]
    .map(({ job, photoName, attempts }): BatchItemView => {
      const base = job.versionId ? `/api/photos/${job.photoId}/versions/${job.versionId}` : null;
      return {
        photoId: job.photoId,
        photoName,
        jobId: job.id,
        status: itemStatus(job.status),
        error: job.error,
        roomType: job.params.roomType ?? null,
        thumbUrl: base && `${base}/thumb`,
        imageUrl: base && `${base}/image`,
        attempts,
      };
    })
    .sort(
      (a, b) => a.photoName.localeCompare(b.photoName, "en", { numeric: true }) || a.photoId.localeCompare(b.photoId),
    );
  const counts: Record<BatchItemStatus, number> = { queued: 0, processing: 0, done: 0, failed: 0 };
  for (const i of items) counts[i.status]++;
  return {
    id: batch.id,
    folderId: batch.folderId,
    designStyle: batch.designStyle,
    createdAt: batch.createdAt,
    items,
    counts,
    open: counts.queued + counts.processing > 0,
  };
}

/** Each photo's listing look, read under the user whose rows it is (a team listing's photo: its uploader's, ADR 0280). */
async function looksOfOwners(db: Db, owners: Map<string, string>): Promise<Map<string, StyleReference>> {
  const byOwner = new Map<string, string[]>();
  for (const [photoId, owner] of owners) byOwner.set(owner, [...(byOwner.get(owner) ?? []), photoId]);
  const looks = new Map<string, StyleReference>();
  for (const [owner, ids] of byOwner) for (const [id, look] of await looksOf(db, owner, ids)) looks.set(id, look);
  return looks;
}

/** The user's newest batches, newest first (the dashboard shows them again on return). */
export async function recentBatches(db: Db, userId: string, limit = 3, since = 0): Promise<BatchView[]> {
  return batchViews(db, await recentBatchesQuery(db, userId, limit, since).all());
}

/** The user's newest batches (those created at `since` or later), for a D1 batch with other reads. */
export function recentBatchesQuery(db: Db, userId: UserRef, limit = 3, since: number | Placeholder = 0) {
  return db
    .select()
    .from(batches)
    .where(and(eq(batches.userId, userId), gte(batches.createdAt, since)))
    .orderBy(desc(batches.createdAt), desc(batches.id))
    .limit(limit);
}

/** The jobs a retry under `submission` started for the user (its ids come from the key: submittedJobIds). */
function retriedUnder(db: Db, userId: string, submission: string, atMost: number) {
  const ids = submittedJobIds("batch-retry", userId, submission, atMost);
  return db
    .select({ id: jobs.id, batchId: jobs.batchId })
    .from(jobs)
    .where(and(eq(jobs.userId, userId), inList(jobs.id, ids)))
    .all();
}

/**
 * Starts a new job (and credit) for every photo of the batch whose newest job failed.
 *
 * Under a submission key (the retry form's hidden field, the API's Idempotency-Key), the key names the new jobs, so
 * the same retry sent again (its answer lost on one bar of signal, a second tap on the same form) is answered with
 * what its first sending started, charged once, instead of "Nothing in this batch has failed." Without a key a
 * second retry is refused as before: the object keeps one retry per failure either way.
 */
export async function retryBatch(
  deps: Pick<Deps, "db" | "env">,
  userId: string,
  batchId: string,
  submission?: string,
): Promise<Result<{ retried: number; credits: number; replayed?: boolean }>> {
  const view = await batchView(deps.db, userId, batchId);
  if (!view) {
    // A teammate sees a team batch (ADR 0317) but does not spend under another member's name: the retry is its
    // member's. Anyone else: the 404 of a made-up batch.
    const seen = await viewableBatch(deps.db, userId, batchId);
    return seen ? fail("forbidden", `Only ${seen.startedBy}, who started this batch, can retry it.`) : NOT_FOUND;
  }
  // A batch shows only the photos its member may reach: none left (a team listing's, the member removed since) is
  // the 404 of a made-up batch, as its photos are (ADR 0310).
  if (view.items.length === 0) return NOT_FOUND;
  if (submission !== undefined) {
    const earlier = await retriedUnder(deps.db, userId, submission, view.items.length);
    if (earlier.some((j) => j.batchId !== batchId)) return fail("conflict", SUBMISSION_REUSED);
    if (earlier.length > 0) {
      return ok({ retried: earlier.length, credits: await currentBalance(deps.env, userId), replayed: true });
    }
  }
  const failed = view.items.filter((i) => i.status === "failed");
  if (failed.length === 0) return fail("conflict", "Nothing in this batch has failed.");
  const rows = await deps.db
    .select()
    .from(jobs)
    .where(
      inList(
        jobs.id,
        failed.map((f) => f.jobId),
      ),
    )
    .all();
  // In the progress list's order, so two sendings at once name the same jobs in the same order.
  const byId = new Map(rows.map((j) => [j.id, j]));
  const old = failed.flatMap((f) => byId.get(f.jobId) ?? []);
  const jobIds = submittedJobIds("batch-retry", userId, submission, old.length);
  // Paid from where the photos are now, as a new batch would be (a team listing's pool, ADR 0310): a photo since out
  // of reach is not found, and nothing is taken.
  const payer = await payerOfPhotos(
    deps.db,
    userId,
    old.map((j) => j.photoId),
  );
  if (!payer.ok) return payer;
  const reason = "AI stage (batch retry)";
  const { started } = await startPaidBy(deps.env, payer.teamId, userId, jobIds, reason, () =>
    userObject(deps.env, userId).startJobs(userId, {
      requestId: currentRequestId(),
      submitted: submission !== undefined,
      jobs: old.map((j, i) => ({
        jobId: jobIds[i]!,
        photoId: j.photoId,
        kind: j.kind,
        params: { ...j.params, seed: newSeed() },
        cost: 1 as const,
        reason,
        batchId,
        retryOf: j.id,
        teamId: payer.teamId,
      })),
    }),
  );
  // The same retry sent at the same moment under its key: the other sending started it.
  if (alreadyStarted(started)) return ok({ retried: old.length, credits: started.balance, replayed: true });
  // Another retry of the same failures got there first (two requests at once): it charged them once, and the
  // object refuses this one as a conflict that says so.
  if (!started.ok) return startFailure(started);
  return ok({ retried: old.length, credits: started.balance });
}
