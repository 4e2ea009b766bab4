import type { Database } from "@db/client";
import type { Job } from "@db/schema";
import { ProviderError } from "@workers/adapters/provider";
import { log } from "@workers/lib/log";
import { observed } from "@workers/lib/observed";
import { teamObject } from "@workers/objects/team-stub";
import type { Stmt } from "@workers/objects/user/batch";
import type { Changed } from "@workers/objects/user/credits/changes";
import * as credits from "@workers/objects/user/credits/changes";
import { findHeld, staleReservationKeys } from "@workers/objects/user/credits/reservations";
import type { CheckDesk } from "./checks";
import { JobClock, RecentTimings } from "./clock";
import * as queue from "./job-queue";
import * as rows from "./job-rows";
import { PaidPhotoGone, paidPhotoGone } from "./paid-photos";
import { failureMessage, finishThumb, produce, thumbFirst } from "./produce";
import { type Slot, takeSlot } from "./slots";
import {
  delivered,
  refusalsSpent,
  refusedStatements,
  retriesOnRefusal,
  retryParams,
  roomCheck,
  STRUCTURE_REFUSED,
  sourceKey,
} from "./structure";
import { callStatements, failedStatement, failureCause, providerCalls, succeededStatements } from "./tally";
import { reportUncheckedShare } from "./unchecked";
import * as variations from "./variations";

// The job runner: the part of the user's object that runs its AI jobs. It owns
// which provider calls run in this instance (the plan's concurrency, its queue
// order), runs each (mark running, call, store, then commit or refund through
// the object's change queue), and, for the alarm, recovers jobs an evicted
// instance left behind. docs/decisions/0070-ai-jobs-in-the-user-object.md,
// 0085-jobs-held-by-the-alarm.md, 0140-batches-variations-rerolls.md

/** What the runner asks of the object's front. */
export interface RunnerHost {
  env: Env;
  db: Database;
  /** Where structure checks are sent and their answers awaited (checks.ts). */
  checks: CheckDesk;
  now(): number;
  /** Runs a change of the user's data in the object's order (UserObject#change). */
  change<T>(userId: string, fn: (now: number) => Promise<Changed<T>>): Promise<T>;
  /** Work that must outlive the request that started it: held by the alarm handler until it settles. */
  hold(work: Promise<void>): void;
  /** A job started here needs an alarm handler holding it. */
  needsHolding(): Promise<void>;
  /** A run stopped on a D1 error: the alarm tries again in a moment. */
  retrySoon(): Promise<void>;
}

export class JobRunner {
  /** Jobs run by this instance right now, from their launch to their commit or refund. */
  #active = new Map<string, Promise<void>>();
  /** Those holding a plan place: launch to the end of their provider work, never the check or commit (ADR 0240). */
  #calling = new Set<string>();
  /** Free second tries waiting for a place, first come first served, ahead of any queued job. */
  #placeWaiting: { jobId: string; grant: () => void }[] = [];
  /** The plan's concurrency as the last pump read it. */
  #concurrency: number | undefined;
  /** Thumbnails of committed results, still being made. */
  #finishing = new Set<Promise<void>>();
  #pumping = false;
  #pumpAgain = false;
  /** This instance of the user's object, for the provider gate (slots.ts). */
  readonly #instance = crypto.randomUUID();
  /** Where the last jobs' time went (clock.ts): read by the bench through the dev tools. */
  readonly timings = new RecentTimings();

  constructor(private readonly host: RunnerHost) {}

  /** Job ids whose provider work runs here: what the plan's concurrency counts. */
  get running(): string[] {
    return [...this.#calling];
  }

  /** Whether anything started here is still under way (the alarm holds it until it ends). */
  get busy(): boolean {
    return this.#active.size > 0 || this.#finishing.size > 0;
  }

  /** Settles when everything under way now has ended. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#active.values(), ...this.#finishing]);
  }

  /**
   * Gives the plan's free places to the second tries waiting for one, then launches queued jobs while fewer than the
   * plan's concurrency (`concurrency` when just read) make provider calls here.
   */
  async pump(userId: string, concurrency?: number): Promise<void> {
    if (this.#pumping) {
      this.#pumpAgain = true;
      return;
    }
    this.#pumping = true;
    try {
      let known = concurrency;
      do {
        this.#pumpAgain = false;
        // Every job of this instance is left out (one past its provider call shows running in D1 anyway); the
        // places taken are the provider calls, and the second tries waiting for one.
        const { jobs: next, concurrency: limit } = await queue.nextToRun(
          this.host.db,
          userId,
          [...this.#active.keys()],
          known,
          this.#calling.size + this.#placeWaiting.length,
        );
        this.#concurrency = limit;
        while (this.#placeWaiting.length > 0 && this.#calling.size < limit) {
          const waiting = this.#placeWaiting.shift()!;
          this.#calling.add(waiting.jobId);
          waiting.grant();
        }
        // Places taken while D1 answered (a second try's) are not given twice.
        for (const job of next.slice(0, Math.max(0, limit - this.#calling.size))) this.#launch(userId, job);
        // A second look (asked for meanwhile) reads the plan and the queue again.
        known = undefined;
      } while (this.#pumpAgain);
    } finally {
      this.#pumping = false;
    }
    if (this.#active.size > 0) await this.host.needsHolding();
  }

  #launch(userId: string, queued: Job): void {
    const jobId = queued.id;
    if (this.#active.has(jobId)) return;
    this.#calling.add(jobId);
    const entry = { where: "job", requestId: queued.requestId, userId, jobId };
    const run = observed(
      this.host.env,
      (p) => this.host.hold(p.then(() => undefined)),
      entry,
      () => this.#run(userId, queued),
    ).then(
      async () => {
        this.#active.delete(jobId);
        this.#calling.delete(jobId);
        // The next queued job takes the freed place (before this promise settles, so the alarm holds it too).
        await this.pump(userId).catch(() => undefined);
        // A team's job: its pool follows the credit settled here (its alarm does, should this call be lost; ADR 0270).
        if (queued.teamId) await this.#tellTeam(queued.teamId);
      },
      async () => {
        // D1 refused a write the run could not do without (marking the job running, or settling its credit): the
        // job stays as D1 has it, queued or running, with its credit held. Pumping again at once would try the same
        // write in a tight loop; the alarm tries again in a moment (its pump starts a queued job, its recovery a
        // running one that no instance runs). `observed` has logged and reported it.
        this.#active.delete(jobId);
        this.#calling.delete(jobId);
        await this.host.retrySoon().catch(() => undefined);
      },
    );
    this.#active.set(jobId, run);
    this.host.hold(run);
  }

  /**
   * A job's provider work has ended: its place goes to the next provider call (a waiting second try, else the next
   * queued job) while its result is checked and committed. Held by the alarm like the run.
   */
  #providerDone(userId: string, jobId: string): void {
    if (this.#calling.delete(jobId)) this.host.hold(this.pump(userId).catch(() => undefined));
  }

  /**
   * A place among the plan's provider calls for a job's free second try: at once when one is free and no other
   * second try waits, else at the next pump that finds one, ahead of the queued jobs.
   */
  async #placeAgain(userId: string, jobId: string): Promise<void> {
    const limit = this.#concurrency;
    if (limit !== undefined && this.#calling.size < limit && this.#placeWaiting.length === 0) {
      this.#calling.add(jobId);
      return;
    }
    const granted = new Promise<void>((resolve) => this.#placeWaiting.push({ jobId, grant: resolve }));
    this.host.hold(this.pump(userId).catch(() => undefined));
    await granted;
  }

  /**
   * Waits for a slot at the provider gate (the job stays queued meanwhile, and its provider timeout has not started),
   * then runs the job; the slot goes back as soon as the job's provider calls have ended, or when the run ends
   * (slots.ts).
   */
  async #run(userId: string, queued: Job): Promise<void> {
    const clock = new JobClock(queued.id, queued.photoId);
    this.timings.keep(clock.timings);
    const slot = await clock.time("slotWait", () => takeSlot(this.host.env, userId, queued, this.#instance));
    try {
      await this.#runHolding(userId, queued, slot, clock);
    } finally {
      await slot.release();
      clock.end();
    }
  }

  /** Marks a queued job running, calls the provider, and commits or refunds its credit. */
  async #runHolding(userId: string, queued: Job, slot: Slot, clock: JobClock): Promise<void> {
    const { env, db } = this.host;
    const calls = providerCalls();
    const tally = {
      calls: calls.calls,
      onCall: (call: Parameters<typeof calls.onCall>[0]) => {
        calls.onCall(call);
        const end = Date.now();
        clock.add("providerCall", end - call.ms, end);
      },
    };
    const started = await clock.time("d1Write", () => rows.startRunning(db, userId, queued.id, this.host.now()));
    if (!started) return;
    const { job } = started;
    const gone = paidPhotoGone(started.photo, started.reachable);
    if (variations.isGroupLead(job)) {
      const change = <T>(fn: (now: number) => Promise<Changed<T>>) => this.host.change(userId, fn);
      return variations.runGroup(
        { env, db, now: () => this.host.now(), change, checks: this.host.checks },
        userId,
        job,
        gone ?? started.photo!,
      );
    }
    // The result's R2 write: every way out waits for it to settle before deleting the job's bytes.
    let writeSettled: Promise<void> = Promise.resolve();
    try {
      // Trashed, or out of the member's reach, while it waited in the queue: refunded before any provider call.
      if (gone) throw gone;
      // The source's gray is reduced while the provider works (ADR 0322): the check then reduces only the result.
      const source = started.photo ? await sourceKey(db, job, started.photo.originalKey) : null;
      if (source) this.host.checks.prepare(source);
      let attempt = await produce(env, db, job, this.host.now(), {
        photo: started.photo,
        onCall: tally.onCall,
        clock,
      });
      // The provider's part is done: the check and the commit run without the slot, and without the plan's place.
      // The gate hears of it beside them, not before them (held like the run; #run's own release then returns at once).
      this.host.hold(slot.release());
      this.#providerDone(userId, job.id);
      writeSettled = attempt.stored.catch(() => undefined);
      // The structure check, before any charge (structure.ts): passed or flagged is charged; refused is tried once
      // more, free, when a second call can differ, then refunded, unless the day's free refusals are spent.
      // The check Worker reads the result from R2: it is judged once it is stored.
      let made = job;
      const check = roomCheck(this.host.checks, userId, job, source, clock);
      await attempt.stored;
      let checked = await check(attempt.result.key);
      const spent = checked.verdict === "refused" && (await refusalsSpent(db, userId, this.host.now()));
      if (checked.verdict === "refused" && !spent && retriesOnRefusal(job.kind)) {
        made = { ...job, params: retryParams(job.params) };
        // The free second try is another provider call: it waits for a place of the plan's and a slot at the gate of
        // its own (the job shows running), and gives both back when its provider work ends.
        await clock.time("slotWait", () => this.#placeAgain(userId, job.id));
        try {
          const again = await clock.time("slotWait", () => takeSlot(env, userId, job, this.#instance));
          try {
            attempt = await produce(env, db, made, this.host.now(), {
              photo: started.photo,
              onCall: tally.onCall,
              clock,
            });
          } finally {
            await again.release();
          }
        } finally {
          this.#providerDone(userId, job.id);
        }
        writeSettled = attempt.stored.catch(() => undefined);
        await attempt.stored;
        checked = await check(attempt.result.key);
      }
      const { result, stored } = attempt;
      if (checked.verdict === "refused" && !spent) {
        // Refused (twice for a staging): not charged; the result stays visible, labelled, for its owner to keep.
        await stored;
        const refused = checked;
        const shown = await thumbFirst(env, result);
        await this.host.change(userId, (now) =>
          credits.refund(db, userId, job.id, STRUCTURE_REFUSED, now, {
            writes: [...refusedStatements(db, made, shown, refused, now), ...callStatements(db, now, tally.calls)],
          }),
        );
        return;
      }
      const passed = delivered(checked);
      const kept = await clock.time("d1Write", () =>
        this.host.change(userId, (now) =>
          this.#commit(userId, made, result, stored, now, passed, callStatements(db, now, tally.calls)),
        ),
      );
      // Refunded meanwhile (the alarm gave up on it), or no longer running: the result is not kept.
      if (!kept) {
        await writeSettled;
        await env.PHOTOS.delete(rows.jobResultKeys(job));
        return;
      }
      if (passed.verdict === "unchecked") await reportUncheckedShare(db, this.host.now());
      this.#finish(finishThumb(env, db, made, result, this.host.now(), clock));
    } catch (err) {
      const message = failureMessage(job.kind, err);
      // The provider's failures are the job's ordinary ends; anything else is a fault of ours, and a person hears of it.
      if (err instanceof ProviderError || err instanceof PaidPhotoGone)
        log.warn("job failed", { failure: failureCause(err), error: err.message });
      else log.error("job failed unexpectedly", { err, where: "job" });
      const settled = await this.host.change(userId, (now) =>
        credits.refund(db, userId, job.id, message, now, {
          writes: [
            rows.failJobStatement(db, job.id, message, now),
            failedStatement(db, now, failureCause(err)),
            ...callStatements(db, now, tally.calls),
          ],
        }),
      );
      // The commit was written before the fault: the job succeeded and its credit is spent, so its result stays.
      if (!settled.ok && settled.status === "committed") return;
      // A failed job keeps no bytes: whatever this attempt stored goes.
      await writeSettled;
      await env.PHOTOS.delete(rows.jobResultKeys(job));
    }
  }

  /** The change that commits a job's credit with its version; true when the job succeeded and its result is kept. */
  async #commit(
    userId: string,
    job: Job,
    result: rows.JobResult,
    stored: Promise<void>,
    now: number,
    checked: Parameters<typeof rows.succeedStatements>[4],
    counted: Stmt[],
  ): Promise<Changed<boolean>> {
    const { db } = this.host;
    await stored;
    const found = await findHeld(db, userId, job.id, "committed");
    if (found.settled) return credits.untouched(false);
    const committed = await credits.commitHeld(db, userId, found.held, now, {
      writes: [
        ...rows.succeedStatements(db, job, result, now, checked),
        ...succeededStatements(db, now, checked),
        ...counted,
      ],
      // The job's row is updated only while it is queued or running: read back in the same batch, it says whether
      // this result is kept.
      reads: [rows.jobStatusQuery(db, job.id)],
    });
    if (!committed.answer.ok) return credits.untouched(false);
    return credits.untouched(rows.statusRead(committed.answer.read[0]) === "succeeded");
  }

  async #tellTeam(teamId: string): Promise<void> {
    try {
      await teamObject(this.host.env, teamId).reconcile(teamId);
    } catch (err) {
      log.warn("team pool not told of a job's end", { err: String(err), teamId });
    }
  }

  #finish(work: Promise<void>): void {
    const done = work.finally(() => this.#finishing.delete(done));
    this.#finishing.add(done);
    this.host.hold(done);
  }

  /**
   * For the alarm: jobs running in D1 but in no instance (the one that ran them was evicted) are tried once more,
   * then failed and refunded; reservations held past their timeout whose job is not alive are refunded.
   */
  async recover(userId: string, now: number): Promise<Changed<void>> {
    const { env, db } = this.host;
    let effect = credits.untouched(undefined).effect;
    const refund = async (key: string, message: string) => {
      const r = await credits.refund(db, userId, key, message, now, {
        writes: [rows.failJobStatement(db, key, message, now), failedStatement(db, now, "interrupted")],
      });
      effect = credits.after(effect, r.effect);
    };
    for (const job of await rows.openJobs(db, userId)) {
      if (this.#active.has(job.id)) continue;
      // Variations follow their lead; queued jobs start through the queue.
      if (queue.followsLead(job) || job.status === "queued") continue;
      // The provider call can be repeated (the result overwrites the same keys), so it is tried once more.
      if (job.attempts < rows.MAX_ATTEMPTS) {
        await rows.requeue(db, job.id);
        continue;
      }
      for (const lost of [job, ...(await queue.openSiblings(db, job))]) {
        await refund(lost.id, rows.INTERRUPTED_MESSAGE);
        await env.PHOTOS.delete(rows.jobResultKeys(lost));
      }
    }
    // A job waiting in this user's queue, or running here (its provider call has its own timeout), has not died
    // however long ago its credit was reserved: a batch can wait longer than the timeout.
    const alive = await this.#aliveJobIds(userId);
    for (const key of await staleReservationKeys(db, userId, now)) {
      if (!alive.has(key)) await refund(key, "Job did not finish in time");
    }
    return { answer: undefined, effect };
  }

  /** Jobs queued (the pump starts them) or running in this instance, with the variations that follow them. */
  async #aliveJobIds(userId: string): Promise<Set<string>> {
    const open = await rows.openJobs(this.host.db, userId);
    const alive = new Set(open.filter((j) => j.status === "queued" || this.#active.has(j.id)).map((j) => j.id));
    for (const job of open) if (queue.followsLead(job) && alive.has(job.groupId!)) alive.add(job.id);
    return alive;
  }
}
