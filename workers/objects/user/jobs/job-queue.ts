import type { Database } from "@db/client";
import { inList, notInList } from "@db/lists";
import {
  apiCallbacks,
  batches,
  creditLedger,
  creditReservations,
  type Job,
  type JobKind,
  type JobParams,
  jobs,
} from "@db/schema";
import { canonicalJson } from "@workers/lib/canonical-json";
import { randomToken } from "@workers/lib/crypto";
import { run, type Stmt } from "@workers/objects/user/batch";
import type { Changed } from "@workers/objects/user/credits/changes";
import * as credits from "@workers/objects/user/credits/changes";
import { reserveGroup } from "@workers/objects/user/credits/group";
import {
  expireGrants,
  insufficient,
  type Refusal,
  refusal,
  userNotFound,
} from "@workers/objects/user/credits/ledger-rows";
import * as reservations from "@workers/objects/user/credits/reservations";
import { loadView, loadViewAndPlan, planQuery } from "@workers/objects/user/credits/view";
import { and, asc, desc, eq, inArray, isNull, or, sql } from "drizzle-orm";
import { PLANS } from "~/shared/catalog";
import { REROLL_PAID_MESSAGE } from "~/shared/listing";
import { insertCallbackStatement } from "./job-rows";
import { paidPhotoRefusal, paidPhotosQuery } from "./paid-photos";
import { DEFAULT_CONCURRENCY, limitsOf } from "./plan-limits";

export { DEFAULT_CONCURRENCY, limitsOf, type PlanLimits } from "./plan-limits";

// The user's job queue (issue 15): many jobs started in one step (a batch, the
// variations of one request, a re-roll, a retry), each with its own
// reservation, and the order and number in which they reach the provider. A
// job waits "queued" in D1 until the user's object has fewer provider calls
// running than the plan's batchConcurrency (app/shared/catalog.ts); higher
// priority (Professional) first, then oldest first. One job's failure never
// touches another's. docs/decisions/0140-batches-variations-rerolls.md

/** A failed job retried again while its first retry is recorded (two retry requests at once): refused here. */
export const ALREADY_RETRIED = "These photos are already being retried.";
/** A request sent again with its submission key (a page's job request, the new-batch form): see `submitted`. */
export const JOBS_ALREADY_STARTED = "These jobs have already been started.";
/** A submission key sent again with a different request (another photo, kind or choice): refused. */
export const SUBMISSION_REUSED = "This request's key was already used for a different request.";

export interface QueuedJobInput {
  jobId: string;
  photoId: string;
  kind: JobKind;
  params: JobParams;
  /** 1, or 0 for the free re-roll. */
  cost: 0 | 1;
  /** What the ledger says the credit is for. */
  reason: string;
  batchId?: string | null;
  groupId?: string | null;
  rerollOf?: string | null;
  retryOf?: string | null;
  /**
   * The team whose pool already holds this job's credit (its object took it, keyed by the job's id): the member's
   * own reservation is then 0 credits, settled here like any other, and the team's follows it (ADR 0270).
   */
  teamId?: string | null;
}

/** A job whose credit is the member's own to reserve here (not free, not paid by a team's pool). */
function ownCost(j: QueuedJobInput): number {
  return j.teamId ? 0 : j.cost;
}

export interface StartManyInput {
  /** A new batch to record with its jobs. */
  batch?: { id: string; folderId: string | null; designStyle: string };
  jobs: QueuedJobInput[];
  /** The request that asked for these jobs: its id is logged with each job's run and provider calls. */
  requestId?: string;
  /**
   * The job ids (and a batch's id) come from the request's submission key (services/jobs/start-queued.ts, `submittedJobIds`): when the
   * first job exists already, the request was sent before and nothing is written. The same request is answered
   * JOBS_ALREADY_STARTED with that job; another request under the same key SUBMISSION_REUSED. Read in the round
   * trip of the balance, before the photos and the balance: a resend finds its jobs after their credits were spent.
   */
  submitted?: boolean;
  /**
   * A team API key's job that named a callback (docs/decisions/0315-team-key-callbacks.md): its signed callback row,
   * written in the jobs' batch (the lead job's), delivered as a personal key's (callbacks.ts).
   */
  callback?: { url: string; apiKeyId: string };
}

export type StartManyResult =
  | {
      ok: true;
      balance: number;
      jobIds: string[];
      /** The jobs' creation time on the object's clock (what their rows say). */
      createdAt: number;
      /** The plan's provider concurrency as read in this turn (the pump needs no second read of the plan). */
      concurrency: number;
    }
  | (Refusal & {
      /** The request was sent before under its key (JOBS_ALREADY_STARTED): the first job it started. */
      existing?: Job;
    });

function insertJob(
  db: Database,
  userId: string,
  j: QueuedJobInput,
  priority: number,
  now: number,
  requestId: string | undefined,
): Stmt {
  return db.insert(jobs).values({
    id: j.jobId,
    userId,
    photoId: j.photoId,
    kind: j.kind,
    params: j.params,
    status: "queued",
    attempts: 0,
    createdAt: now,
    batchId: j.batchId ?? null,
    groupId: j.groupId ?? null,
    priority,
    cost: j.cost,
    rerollOf: j.rerollOf ?? null,
    retryOf: j.retryOf ?? null,
    requestId: requestId ?? null,
    teamId: j.teamId ?? null,
  });
}

/**
 * A job that costs nothing still has a reservation (of 0), so it is committed
 * or refunded like any other, and the ledger records it with its reason.
 */
function freeReservation(db: Database, userId: string, j: QueuedJobInput, now: number): Stmt[] {
  return [
    db.insert(creditReservations).values({
      key: j.jobId,
      userId,
      amount: 0,
      allocations: [],
      status: "held",
      createdAt: now,
    }),
    db.insert(creditLedger).values({
      id: randomToken(),
      userId,
      kind: "reserve",
      amount: 0,
      reason: j.reason,
      idempotencyKey: `reserve:${j.jobId}`,
      reservationKey: j.jobId,
      createdAt: now,
    }),
  ];
}

/**
 * Records every job with its own reservation, or none of them: the whole cost must be available first. Runs inside
 * the user's serial queue, in three steps: read what decides the request (one D1 round trip), refuse it, or write it.
 */
export async function startMany(
  db: Database,
  userId: string,
  input: StartManyInput,
  now: number,
): Promise<Changed<StartManyResult>> {
  const read = await readForStart(db, userId, input);
  const before = beforeTheBalance(read, input);
  if (before) return credits.untouched(before);
  // Grants due to expire go first; the view is then the one read after it.
  let view = read.view;
  const expired = view?.grants.some((g) => g.expiresAt <= now) ?? false;
  if (expired) {
    await expireGrants(db, userId, now);
    view = await loadView(db, userId);
  }
  const refused = (r: Refusal) => (expired ? credits.moved(r) : credits.untouched(r));
  if (view === null) return refused(userNotFound());
  const refusal = onTheBalance(read, input, view.balance);
  if (refusal) return refused(refusal);
  return writeJobs(db, userId, input, view, limitsOf(read.plan), now, expired);
}

/**
 * Everything a start is decided on, in one D1 round trip: the balance, the open grants and the plan (the queue's
 * order comes from the plan here, where the user's changes are serialised, not from each caller); the jobs' photos
 * (paid work only on the user's photos out of the trash: paid-photos.ts); whether the request's first job exists
 * already (a resend); whether a free re-roll of the same request was started (ADR 0201); and whether a failed job
 * being retried was retried already.
 */
async function readForStart(db: Database, userId: string, input: StartManyInput) {
  const lead = input.jobs[0];
  const photoIds = [...new Set(input.jobs.map((j) => j.photoId))];
  const freeRerollOf = input.jobs.flatMap((j) => (j.cost === 0 && j.rerollOf ? [j.rerollOf] : []));
  const retried = input.jobs.flatMap((j) => (j.retryOf ? [j.retryOf] : []));
  // A read the request has no use for is not sent (null): most starts send the photos' read alone.
  const loaded = await loadViewAndPlan(db, userId, {
    photos: paidPhotosQuery(db, userId, photoIds),
    submitted:
      input.submitted && lead
        ? db
            .select({ job: jobs, callbackUrl: apiCallbacks.url })
            .from(jobs)
            .leftJoin(apiCallbacks, eq(apiCallbacks.jobId, jobs.id))
            .where(and(eq(jobs.id, lead.jobId), eq(jobs.userId, userId)))
        : null,
    freeReroll: freeRerollOf.length > 0 ? freeRerollQuery(db, freeRerollOf) : null,
    retriedAgain:
      retried.length > 0 ? db.select({ id: jobs.id }).from(jobs).where(inList(jobs.retryOf, retried)) : null,
  });
  return { view: loaded.view, plan: loaded.plan, photoIds, ...loaded.read };
}

type StartRead = Awaited<ReturnType<typeof readForStart>>;

/** A resend (its first job exists) or a photo that is not the user's to pay for: refused before the balance. */
function beforeTheBalance(read: StartRead, input: StartManyInput): (Refusal & { existing?: Job }) | null {
  const balance = read.view?.balance ?? 0;
  const sent = read.submitted[0];
  const lead = input.jobs[0];
  if (sent && lead) {
    // A team key's job started with another callback address (or none) is another request: compared here, where
    // sendings are serialised, so two sent at once cannot both be told they started it (docs/decisions/0357).
    const sameCallback = sent.callbackUrl === (input.callback?.url ?? null);
    if (!sameRequest(sent.job, lead) || !sameCallback) return refusal("conflict", SUBMISSION_REUSED, balance);
    return { ...refusal("conflict", JOBS_ALREADY_STARTED, balance), existing: sent.job };
  }
  const teamOf = new Map(input.jobs.map((j) => [j.photoId, j.teamId ?? null]));
  return paidPhotoRefusal(read.photos, read.photoIds, balance, (id) => teamOf.get(id) ?? null);
}

/** Too few credits, a second free re-roll of one request, or a retry of a job already retried. */
function onTheBalance(read: StartRead, input: StartManyInput, balance: number): Refusal | null {
  const total = input.jobs.reduce((n, j) => n + ownCost(j), 0);
  if (balance < total) return insufficient(balance);
  if (read.freeReroll.length > 0) return refusal("conflict", REROLL_PAID_MESSAGE, balance);
  if (read.retriedAgain.length > 0) return refusal("conflict", ALREADY_RETRIED, balance);
  return null;
}

/** Every paid reservation, every job row, the batch and any free re-roll in one D1 batch: all or none. */
async function writeJobs(
  db: Database,
  userId: string,
  input: StartManyInput,
  view: NonNullable<StartRead["view"]>,
  { priority, concurrency }: { priority: number; concurrency: number },
  now: number,
  expired: boolean,
): Promise<Changed<StartManyResult>> {
  const lead = input.jobs[0];
  const extra: Stmt[] = [
    ...(input.batch
      ? [
          db.insert(batches).values({
            id: input.batch.id,
            userId,
            folderId: input.batch.folderId,
            designStyle: input.batch.designStyle,
            createdAt: now,
          }),
        ]
      : []),
    ...input.jobs
      .filter((j) => ownCost(j) === 0)
      .flatMap((j) => [
        ...freeReservation(db, userId, j, now),
        insertJob(db, userId, j, priority, now, input.requestId),
      ]),
    ...(input.callback && lead
      ? [insertCallbackStatement(db, { jobId: lead.jobId, userId, ...input.callback }, now)]
      : []),
  ];
  const paid = input.jobs.filter((j) => ownCost(j) > 0);
  const jobIds = input.jobs.map((j) => j.jobId);
  if (paid.length === 0) {
    await run(db, extra);
    const answer: StartManyResult = { ok: true, balance: view.balance, jobIds, createdAt: now, concurrency };
    return expired ? credits.withView(answer, view) : credits.untouched(answer);
  }
  // With the view just read, the group is decided without looking its (new) keys up: one D1 batch.
  const { answers, view: after } = await reserveGroup(
    db,
    userId,
    view,
    paid.map((j, i) => ({
      key: j.jobId,
      amount: j.cost,
      reason: j.reason,
      writes: [insertJob(db, userId, j, priority, now, input.requestId), ...(i === 0 ? extra : [])],
    })),
    now,
  );
  const short = answers.find((a) => !a.ok);
  if (short && !short.ok) {
    // Cannot happen after the check on the balance; if it does, nothing of this request stays held.
    for (const [i, a] of answers.entries()) {
      if (!a.ok) continue;
      const key = paid[i]!.jobId;
      const failed = db
        .update(jobs)
        .set({ status: "failed", error: "Request could not be started", finishedAt: now })
        .where(eq(jobs.id, key));
      await reservations.refund(db, userId, key, "Request could not be started", now, { writes: [failed] });
    }
    return credits.moved(short);
  }
  return credits.withView({ ok: true, balance: answers.at(-1)!.balance, jobIds, createdAt: now, concurrency }, after);
}

/**
 * The free re-roll of a staging request (`rootId`, its first job), once started: queued, running, succeeded, failed,
 * refused by the structure check or refunded, it was the one (docs/decisions/0201-the-free-re-roll-is-used-once-started.md).
 * The quote (services/jobs/rerolls.ts) and the start above read the same rows, so what is said is what is charged.
 */
export function freeRerollQuery(db: Database, rootIds: string | readonly string[]) {
  return db
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(inList(jobs.rerollOf, typeof rootIds === "string" ? [rootIds] : rootIds), eq(jobs.cost, 0)))
    .limit(1);
}

/** A variation that is not its group's first: it runs with (and settles after) its lead's one provider call. */
export function followsLead(job: Pick<Job, "id" | "groupId">): boolean {
  return job.groupId !== null && job.groupId !== job.id;
}

/**
 * The queued jobs to start now: as many as the plan's concurrency leaves free beside the `taken` places (the provider
 * calls of this instance; all of `running` when not given), none of `running` (the jobs this instance runs);
 * priority first, then oldest. Variations other than a group's lead never start on their own. With the plan's
 * concurrency, as read or as `known`.
 */
export async function nextToRun(
  db: Database,
  userId: string,
  running: string[],
  /** The plan's concurrency when the caller read it in this turn. */
  known?: number,
  taken = running.length,
): Promise<{ jobs: Job[]; concurrency: number }> {
  if (known !== undefined) {
    const free = known - taken;
    return { jobs: free <= 0 ? [] : await queuedQuery(db, userId, running, free).all(), concurrency: known };
  }
  // The plan and the first queued jobs in one round trip: as many as the largest plan could start.
  const [planRows, rows] = await db.batch([planQuery(db, userId), queuedQuery(db, userId, running, MAX_CONCURRENCY)]);
  const { concurrency } = limitsOf(planRows[0]?.plan);
  const free = concurrency - taken;
  return { jobs: free <= 0 ? [] : rows.slice(0, free), concurrency };
}

/**
 * Whether a stored job was started by the same request as `asked`: the photo, the kind and every choice. The seed
 * is left out: each sending draws a new one.
 */
export function sameRequest(stored: Job, asked: QueuedJobInput): boolean {
  const choices = ({ seed: _seed, ...rest }: JobParams) => canonicalJson(rest);
  return (
    stored.photoId === asked.photoId &&
    stored.kind === asked.kind &&
    (stored.rerollOf ?? null) === (asked.rerollOf ?? null) &&
    choices(stored.params) === choices(asked.params)
  );
}

/** The first `limit` queued jobs that start on their own (not variations after a lead), besides `running`. */
function queuedQuery(db: Database, userId: string, running: string[], limit: number) {
  return db
    .select()
    .from(jobs)
    .where(
      and(
        eq(jobs.userId, userId),
        eq(jobs.status, "queued"),
        or(isNull(jobs.groupId), eq(jobs.groupId, jobs.id)),
        running.length > 0 ? notInList(jobs.id, running) : undefined,
      ),
    )
    .orderBy(desc(jobs.priority), asc(jobs.createdAt), asc(jobs.id))
    .limit(limit);
}

/** The most provider calls any plan runs at once. */
const MAX_CONCURRENCY = Math.max(DEFAULT_CONCURRENCY, ...PLANS.map((p) => p.batchConcurrency));

/** The open variations of a lead's group, besides the lead. */
export async function openSiblings(db: Database, lead: Pick<Job, "id" | "groupId">): Promise<Job[]> {
  if (lead.groupId !== lead.id) return [];
  return db
    .select()
    .from(jobs)
    .where(and(eq(jobs.groupId, lead.id), sql`${jobs.id} <> ${lead.id}`, inArray(jobs.status, ["queued", "running"])))
    .all();
}
