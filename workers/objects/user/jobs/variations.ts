import type { Database } from "@db/client";
import { inList } from "@db/lists";
import { type Job, jobs, type Photo } from "@db/schema";
import { createProviderClient, type ProviderCallRecord, ProviderError } from "@workers/adapters/provider";
import { log } from "@workers/lib/log";
import type { Stmt } from "@workers/objects/user/batch";
import type { Changed } from "@workers/objects/user/credits/changes";
import * as credits from "@workers/objects/user/credits/changes";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { CheckDesk } from "./checks";
import * as jobsService from "./job-rows";
import { atListingSize } from "./listing-size";
import { PaidPhotoGone } from "./paid-photos";
import * as produce from "./produce";
import { stageInputFor } from "./stage-call";
import {
  type Checked,
  delivered,
  type RoomCheck,
  refusalsSpent,
  refusedStatements,
  retryParams,
  roomCheck,
  STRUCTURE_REFUSED,
  sourceKey,
} from "./structure";
import { callStatements, failedStatement, failureCause, providerCalls, succeededStatements } from "./tally";
import { reportUncheckedShare } from "./unchecked";

// Variations (issue 15): one staging request for 1 to 4 results. Each result is
// its own job with its own one-credit reservation (reserved together by
// queue.startMany); the group's first job (the lead) makes the one provider call
// with num_images = the group's size. Every result that arrives commits its
// job's credit and becomes a version; each one that does not is refunded on its
// own. The lead's result becomes the photo's shown version; the person may
// choose another. docs/decisions/0140-batches-variations-rerolls.md

export const MISSING_RESULT = "The provider returned fewer results than asked for. Your credit has been returned.";

/** A lead of a group of more than one. */
export function isGroupLead(job: Pick<Job, "id" | "groupId">): boolean {
  return job.groupId === job.id;
}

/**
 * The group's jobs, lead first, then in the order they were asked for. They
 * share one created_at and their ids are random, so the order is the rows'
 * insertion order (rowid): result i of the provider's answer goes to job i.
 */
export async function members(db: Database, lead: Job): Promise<Job[]> {
  const rows = await db
    .select()
    .from(jobs)
    .where(eq(jobs.groupId, lead.id))
    .orderBy(asc(jobs.createdAt), sql`rowid`)
    .all();
  return [lead, ...rows.filter((r) => r.id !== lead.id)];
}

/** Marks the lead's siblings running with it (the lead itself was marked by the runner). */
async function markSiblingsRunning(db: Database, group: Job[], now: number): Promise<Job[]> {
  const ids = group.slice(1).map((j) => j.id);
  if (ids.length === 0) return [group[0]!];
  await db
    .update(jobs)
    .set({ status: "running", startedAt: now })
    .where(and(inList(jobs.id, ids), inArray(jobs.status, ["queued", "running"])));
  // Only the ones still open take part (one may have been refunded by the reservation timeout).
  const open = await db
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(inList(jobs.id, ids), eq(jobs.status, "running")))
    .all();
  const still = new Set(open.map((o) => o.id));
  return [group[0]!, ...group.slice(1).filter((j) => still.has(j.id))];
}

/** The statements that record one variation: the lead's also points the photo at its result. */
function succeed(
  db: Database,
  job: Job,
  result: jobsService.JobResult,
  now: number,
  isLead: boolean,
  checked: Checked,
): Stmt[] {
  const [version, photoUpdate, jobUpdate] = jobsService.succeedStatements(db, job, result, now, delivered(checked));
  return isLead ? [version!, photoUpdate!, jobUpdate!] : [version!, jobUpdate!];
}

export interface GroupRunner {
  env: Env;
  db: Database;
  now: () => number;
  /** Runs a credit change in the user's serial queue (the user object's #change). */
  change: <T>(fn: (now: number) => Promise<Changed<T>>) => Promise<T>;
  /** Where the group's structure checks are sent and awaited (checks.ts). */
  checks: CheckDesk;
}

/** A member's result: its description, its bytes, and what the structure check said of it. */
interface Made {
  result: jobsService.JobResult;
  bytes: Uint8Array;
  checked: Checked;
  /** The choices that made it (a second try's new seed and lower creativity). */
  job: Job;
}

/**
 * Runs a lead's provider call for its whole group and settles every member on its own. Members whose result
 * changed the room are tried once more together, in one more call with the second try's choices (structure.ts),
 * unless the user's free refusals of the day are spent: then they are delivered flagged and charged.
 */
/** `photo`: the lead's photo as its run read it, or why it may no longer be paid for (paidPhotoGone). */
export async function runGroup(r: GroupRunner, userId: string, lead: Job, photo: Photo | PaidPhotoGone): Promise<void> {
  const group = await markSiblingsRunning(r.db, await members(r.db, lead), r.now());
  // The group's provider calls are counted with the first member's end (callStatements empties the list).
  const tally = providerCalls();
  let made: (Made | null)[];
  let spent = false;
  try {
    if (photo instanceof PaidPhotoGone) throw photo;
    const source = await sourceKey(r.db, lead, photo.originalKey);
    if (source) r.checks.prepare(source);
    const check = roomCheck(r.checks, userId, lead, source);
    made = await produceGroup(r.env, r.db, photo, lead, group, check, r.now(), tally.onCall);
    const again = group.filter((_, i) => made[i]?.checked.verdict === "refused");
    spent = again.length > 0 && (await refusalsSpent(r.db, userId, r.now()));
    if (again.length > 0 && !spent) {
      const retryLead = { ...lead, params: retryParams(lead.params) };
      const second = await produceGroup(r.env, r.db, photo, retryLead, again, check, r.now(), tally.onCall);
      for (const [k, job] of again.entries()) made[group.indexOf(job)] = second[k] ?? made[group.indexOf(job)]!;
    }
  } catch (err) {
    const message = produce.failureMessage(lead.kind, err);
    if (err instanceof ProviderError || err instanceof PaidPhotoGone)
      log.warn("variations failed", { failure: failureCause(err), error: err.message });
    else log.error("variations failed unexpectedly", { err, where: "job" });
    for (const job of group) {
      await r.change((now) =>
        credits.refund(r.db, userId, job.id, message, now, {
          writes: [
            jobsService.failJobStatement(r.db, job.id, message, now),
            failedStatement(r.db, now, failureCause(err)),
            ...callStatements(r.db, now, tally.calls),
          ],
        }),
      );
      await r.env.PHOTOS.delete(jobsService.jobResultKeys(job));
    }
    return;
  }
  // The page waits for the lead and then reads the photo's versions once: the other members are settled first and
  // the lead last, and thumbnails are made only after all of them, so the page finds the whole group.
  const thumbs: (() => Promise<void>)[] = [];
  const order = [...group.entries()];
  order.push(order.shift()!);
  for (const [i, job] of order) {
    const m = made[i];
    if (!m) {
      await r.change((now) =>
        credits.refund(r.db, userId, job.id, MISSING_RESULT, now, {
          writes: [
            jobsService.failJobStatement(r.db, job.id, MISSING_RESULT, now),
            failedStatement(r.db, now, "bad_answer"),
            ...callStatements(r.db, now, tally.calls),
          ],
        }),
      );
      continue;
    }
    if (m.checked.verdict === "refused" && !spent) {
      const shown = await produce.thumbFirst(r.env, m.result);
      await r.change((now) =>
        credits.refund(r.db, userId, job.id, STRUCTURE_REFUSED, now, {
          writes: [...refusedStatements(r.db, m.job, shown, m.checked, now), ...callStatements(r.db, now, tally.calls)],
        }),
      );
      continue;
    }
    const settled = await r.change((now) =>
      credits.commit(r.db, userId, job.id, now, {
        writes: [
          ...succeed(r.db, m.job, m.result, now, i === 0, m.checked),
          ...succeededStatements(r.db, now, delivered(m.checked)),
          ...callStatements(r.db, now, tally.calls),
        ],
      }),
    );
    const kept = settled.ok && (await jobsService.getJob(r.db, job.id))?.status === "succeeded";
    if (kept && m.checked.verdict === "unchecked") await reportUncheckedShare(r.db, r.now());
    if (!kept) await r.env.PHOTOS.delete(jobsService.jobResultKeys(job));
    else thumbs.push(() => produce.finishThumb(r.env, r.db, m.job, m.result, r.now()));
  }
  for (const thumb of thumbs) await thumb();
}

/**
 * One provider call for `group` with the lead's choices; each image stored under its member's keys and checked
 * against the source (null where none arrived).
 */
async function produceGroup(
  env: Env,
  db: Database,
  photo: Photo,
  lead: Job,
  group: Job[],
  check: RoomCheck,
  now: number,
  onCall: (call: ProviderCallRecord) => void,
): Promise<(Made | null)[]> {
  const timeoutMs = jobsService.providerTimeoutMs(env);
  const client = createProviderClient(env, { timeoutMs, onCall });
  const images = await client.stageMany(await stageInputFor(env, db, lead, photo, now, group.length));
  const deadline = jobsService.jobDeadline(now, timeoutMs);
  const out: (Made | null)[] = [];
  for (const [i, member] of group.entries()) {
    const bytes = images[i];
    if (!bytes) {
      out.push(null);
      continue;
    }
    // A result that is not an image is a result that did not arrive: that job is refunded on its own.
    const sized = await atListingSize(client, bytes, deadline);
    const job = {
      ...member,
      params: { ...member.params, seed: lead.params.seed, designCreativity: lead.params.designCreativity },
    };
    const result = await produce.storeResult(env, member, sized).catch(() => null);
    if (!result) {
      out.push(null);
      continue;
    }
    const checked = await check(result.key);
    out.push({ result, bytes: sized, checked, job });
  }
  return out;
}
