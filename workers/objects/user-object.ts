import { DurableObject } from "cloudflare:workers";
import { createDb, type Database } from "@db/client";
import { config } from "@workers/config";
import { devToolsEnabled } from "@workers/lib/dev-tools";
import { withInjectedLatency } from "@workers/lib/injected-latency";
import { log } from "@workers/lib/log";
import { observed } from "@workers/lib/observed";
import type { ResultKind } from "@workers/lib/structure/measures";
import { isWireLimits, type WireLimits } from "@workers/lib/structure/verdict";
import * as background from "@workers/objects/user/background";
import * as credits from "@workers/objects/user/credits/changes";
import { type Changed, untouched } from "@workers/objects/user/credits/changes";
import { CreditDesk, type GroupOutcome, type PendingRequest } from "@workers/objects/user/credits/desk";
import type { AuditEntry, GrantInput } from "@workers/objects/user/credits/grants";
import type { ReserveAnswer } from "@workers/objects/user/credits/group";
import { cachedBalance } from "@workers/objects/user/credits/view";
import * as apiJobs from "@workers/objects/user/jobs/api-jobs";
import * as callbacks from "@workers/objects/user/jobs/callbacks";
import { CheckDesk } from "@workers/objects/user/jobs/checks";
import type { JobTimings } from "@workers/objects/user/jobs/clock";
import * as queue from "@workers/objects/user/jobs/job-queue";
import type * as rows from "@workers/objects/user/jobs/job-rows";
import { keepRefused } from "@workers/objects/user/jobs/keep";
import { returnChangedRoom } from "@workers/objects/user/jobs/recourse";
import { JobRunner } from "@workers/objects/user/jobs/runner";
import { LiveChannel } from "@workers/objects/user/live";
import { applyPaymentEvent } from "@workers/objects/user/payments/apply";
import { grantDueMonths } from "@workers/objects/user/payments/periods";
import type { PaymentEvent } from "@workers/objects/user/payments/types";
import { WakePlan } from "@workers/objects/user/wake";

export type { LiveBalance } from "@workers/objects/user/live";

type TestLimits = Partial<Record<ResultKind, WireLimits>>;

/**
 * One instance per user (addressed by user id): the RPC front of that user's credits and jobs, and the only place
 * that orders their work. Every change runs here, one at a time, so concurrent requests from many isolates can
 * never interleave a read-check-write. Its parts own their state: the credit desk (the credit view and the
 * reservations waiting for their group), the job runner (the provider calls running here), the wake plan (the
 * alarm) and the live channel (open pages and long polls). docs/decisions/0154-the-user-objects-parts.md
 */
export class UserObject extends DurableObject<Env> {
  #db: Database;
  #queue: Promise<unknown> = Promise.resolve();
  #clockOffset = 0;
  #desk: CreditDesk;
  #runner: JobRunner;
  #wake: WakePlan;
  #live: LiveChannel;
  #checks: CheckDesk;
  #groupTurnQueued = false;

  constructor(ctx: DurableObjectState, given: Env) {
    // The bench's production-like storage latency, with dev tools only (workers/lib/injected-latency.ts).
    const env = withInjectedLatency(given);
    super(ctx, env);
    this.#db = createDb(env.DB);
    this.#desk = new CreditDesk(this.#db);
    this.#wake = new WakePlan(ctx.storage, this.#db, env);
    this.#live = new LiveChannel(ctx, this.#db);
    // Structure checks go to the check Worker (workers/checker) and come back through structureChecked below.
    this.#checks = new CheckDesk(async (request) => {
      await env.STRUCTURE_CHECKS.send(request, { contentType: "json" });
    });
    this.#runner = new JobRunner({
      env,
      db: this.#db,
      checks: this.#checks,
      now: () => this.#now(),
      change: (userId, fn) => this.#change(userId, fn),
      hold: (work) => ctx.waitUntil(work),
      needsHolding: () => this.#wake.holdNow(),
      retrySoon: () => this.#wake.retrySoon(),
    });
    ctx.blockConcurrencyWhile(async () => {
      this.#clockOffset = (await ctx.storage.get<number>("clockOffset")) ?? 0;
      this.#checks.limitsForTesting = (await ctx.storage.get<TestLimits>("structureLimitsForTesting")) ?? null;
    });
    // Keep-alive pings are answered without waking a hibernating object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }

  /** Runs `fn` after every earlier change of this user has finished. */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  #now(): number {
    return Date.now() + this.#clockOffset;
  }

  async #bind(userId: string): Promise<void> {
    const bound = await this.ctx.storage.get<string>("userId");
    if (bound === undefined) await this.ctx.storage.put("userId", userId);
    else if (bound !== userId) throw new Error("UserObject called for a different user");
  }

  #scheduleAlarm(userId: string): Promise<void> {
    return this.#wake.schedule(userId, this.#clockOffset, this.#now(), this.#runner.busy);
  }

  /** #scheduleAlarm as the next serial turn, after whatever the caller starts now. */
  #scheduleAlarmNextTurn(userId: string): void {
    this.#serial(() => this.#scheduleAlarm(userId)).catch((err) =>
      log.error("alarm after a change", { err, where: "user-object" }),
    );
  }

  /**
   * Runs one change of this user's data after every earlier one. Its effect on the credit view comes with its answer
   * (credits/changes.ts) and is applied here; then the long polls wake, the alarm follows, the open pages are told.
   * `alarmNextTurn`: the caller starts jobs as soon as this resolves, and the alarm is computed in the next turn.
   */
  #change<T>(userId: string, fn: (now: number) => Promise<Changed<T>>, opts: { alarmNextTurn?: boolean } = {}) {
    return this.#serial(async () => {
      await this.#bind(userId);
      let outcome: Changed<T>;
      try {
        outcome = await fn(this.#now());
      } catch (err) {
        this.#desk.forget();
        throw err;
      }
      this.#desk.apply(outcome.effect);
      this.#live.changed();
      // The change is written: what follows it must not make its caller believe it failed (a runner would then
      // refund a committed job and delete the result it paid for). A failed alarm is tried again in the next turn.
      if (opts.alarmNextTurn) this.#scheduleAlarmNextTurn(userId);
      else
        await this.#scheduleAlarm(userId).catch((err) => {
          log.error("alarm after a change", { err, where: "user-object" });
          this.#scheduleAlarmNextTurn(userId);
        });
      await this.#live.broadcast(userId).catch((err) => log.warn("broadcast after a change", { err }));
      return outcome.answer;
    });
  }

  /** A reservation decided in the next group turn with every other that arrives meanwhile (ADR 0135). */
  #reserveInGroup(userId: string, request: PendingRequest): Promise<ReserveAnswer> {
    const answer = this.#desk.request(userId, request);
    this.#queueGroupTurn();
    return answer;
  }

  #queueGroupTurn(): void {
    if (this.#groupTurnQueued || this.#desk.waiting === 0) return;
    this.#groupTurnQueued = true;
    this.#serial(async () => {
      // A lone request waits one turn of the event loop: requests sent with it join this group.
      if (this.#desk.waiting === 1) await new Promise((resolve) => setTimeout(resolve, 0));
      this.#groupTurnQueued = false;
      const turn = this.#desk.turn(
        () => this.#now(),
        (userId) => this.#bind(userId),
        (userId, outcome) => this.#afterGroup(userId, outcome),
        () => this.#wake.wakeForReservations(),
      );
      // Whatever is left (or arrives while this batch is in flight) gets the next turn.
      this.#queueGroupTurn();
      await turn;
    }).catch(() => undefined);
  }

  async #afterGroup(userId: string, outcome: GroupOutcome): Promise<void> {
    if (!outcome.changed) return;
    this.#live.changed();
    // A group that only takes reservations adds one reason to wake: their timeout (set beside its batch, else now).
    if (outcome.onlyReservations) {
      if (!outcome.alarmSet) await this.#wake.wakeForReservations();
    }
    // A group that started jobs has its alarm computed in the next turn, after the caller launches them.
    else this.#scheduleAlarmNextTurn(userId);
    await this.#live.broadcast(userId);
  }

  /** The long poll of GET /api/jobs/:id?wait (docs/decisions/0146-job-long-poll.md). */
  waitForJob(userId: string, jobId: string, ms: number): Promise<rows.JobWithVersion | undefined> {
    return this.#live.waitForJob(userId, jobId, ms);
  }

  /** Opens a live balance channel; reached only through GET /api/me/live, which checked the session and origin. */
  override async fetch(request: Request): Promise<Response> {
    const userId = request.headers.get("X-User-Id");
    if (request.headers.get("Upgrade") !== "websocket" || !userId) {
      return new Response("Expected a WebSocket upgrade", { status: 426 });
    }
    await this.#bind(userId);
    return this.#live.open(userId);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    // The page may ask for the balance again (e.g. after its tab wakes up).
    if (message !== "refresh") return;
    const userId = await this.ctx.storage.get<string>("userId");
    if (userId) ws.send(JSON.stringify(await this.#live.balance(userId)));
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, "closing");
    } catch {
      // Already closed.
    }
  }

  /** Health probe: proves the object answers and its storage writes. */
  async ping(): Promise<{ ok: true; pings: number }> {
    const pings = ((await this.ctx.storage.get<number>("pings")) ?? 0) + 1;
    await this.ctx.storage.put("pings", pings);
    return { ok: true, pings };
  }

  /**
   * The check Worker's verdict on a result (workers/checker): true when a job here waited for it. Not a change: the
   * job that waits commits or refunds in its own turn. Outside the serial queue, so an answer is never stuck behind
   * the work that waits for it.
   */
  structureChecked(checkId: string, checked: unknown, timing?: unknown): boolean {
    return typeof checkId === "string" && this.#checks.answer(checkId, checked, timing);
  }

  /** Where this instance's last jobs' time went (jobs/clock.ts): for the bench, through GET /api/dev/bench/job-timings. */
  jobTimings(): JobTimings[] {
    return this.#runner.timings.list();
  }

  balance(userId: string): Promise<number> {
    return this.#change(userId, async (now) => {
      const caught = await this.#catchUp(userId, now);
      return { answer: (await cachedBalance(this.#db, userId)) ?? 0, effect: caught.effect };
    });
  }

  grant(userId: string, input: GrantInput) {
    return this.#change(userId, (now) => credits.grant(this.#db, userId, input, now));
  }

  /** Applies a verified Stripe event (as plain data): its record, the subscription, the plan fields, any grant. */
  applyPaymentEvent(userId: string, event: PaymentEvent) {
    return this.#change(userId, async (now) => credits.moved(await applyPaymentEvent(this.#db, userId, event, now)));
  }

  /** The free trial credits (SIGNUP_CREDITS), once per user, only once their e-mail is verified. */
  grantSignupCredits(userId: string) {
    const amount = config(this.env).SIGNUP_CREDITS;
    return this.#change(userId, (now) => credits.grantSignupCredits(this.#db, userId, amount, now));
  }

  reserve(userId: string, key: string, amount: number, reason: string): Promise<ReserveAnswer> {
    return this.#reserveInGroup(userId, { key, amount, reason });
  }

  commit(userId: string, key: string) {
    return this.#change(userId, async (now) => {
      const done = await credits.commit(this.#db, userId, key, now);
      const { read: _read, ...answer } = done.answer.ok ? done.answer : { ...done.answer, read: [] };
      return { answer, effect: done.effect };
    });
  }

  refund(userId: string, key: string, reason: string) {
    return this.#change(userId, (now) => credits.refund(this.#db, userId, key, reason, now));
  }

  deduct(userId: string, amount: number, reason: string, key: string, actorId: string | null, audit?: AuditEntry) {
    return this.#change(userId, (now) => credits.deduct(this.#db, userId, amount, reason, key, actorId, now, audit));
  }

  /**
   * Starts many jobs at once (a page's job, a batch, variations, a re-roll, retries), each with its own reservation,
   * all or none; they wait in this user's queue until the plan's concurrency lets them reach the provider (ADR 0140).
   * Like every paid entry here (startApiJob, keepRefused), it refuses a photo in the trash first (ADR 0202).
   */
  async startJobs(userId: string, input: queue.StartManyInput): Promise<queue.StartManyResult> {
    // Before the batch that writes the callback's row: the flag only saves a query when no callback is open.
    if (input.callback) await callbacks.markOpen(this.ctx.storage);
    const result = await this.#change(userId, (now) => queue.startMany(this.#db, userId, input, now), {
      alarmNextTurn: true,
    });
    if (!result.ok) return result;
    await this.#runner.pump(userId, result.concurrency);
    return result;
  }

  /** A job started through the public API: idempotent per Idempotency-Key, with an optional signed callback. */
  async startApiJob(userId: string, input: apiJobs.ApiJobInput) {
    const result = await this.#change(userId, (now) => apiJobs.start(this.#db, this.ctx.storage, userId, input, now));
    if (result.ok && result.launch) await this.#runner.pump(userId);
    return result;
  }

  /** "Keep it anyway": a result the structure check refused, kept for one credit (jobs/keep.ts). */
  keepRefused(userId: string, photoId: string, versionId: string) {
    return this.#change(userId, (now) => keepRefused(this.env, this.#db, userId, photoId, versionId, now));
  }

  /** "This result changed the room": a passed or marked result's credit back, once (jobs/recourse.ts). */
  returnChangedRoom(userId: string, photoId: string, versionId: string, keepPair: boolean) {
    return this.#change(userId, (now) =>
      returnChangedRoom(this.env, this.#db, userId, photoId, versionId, keepPair, now),
    );
  }

  /**
   * Tests and development only: the check Worker as if it were down. Each check's message is dropped and its result
   * counts as unchecked (cause timeout) after `waitMs`; null runs checks again. Kept in memory only.
   */
  stopChecksForTesting(waitMs: number | null): void {
    if (!devToolsEnabled(this.env)) throw new Error("Structure check control is disabled");
    this.#checks.stoppedForTesting = waitMs;
  }

  /** Test and development only: moves this object's clock forward. */
  async advanceClockForTesting(ms: number): Promise<void> {
    if (!devToolsEnabled(this.env)) throw new Error("Clock control is disabled");
    this.#clockOffset += ms;
    await this.ctx.storage.put("clockOffset", this.#clockOffset);
  }

  /**
   * Test and development only: the structure check's limits for this user's results, per kind (null: back to the
   * production ones), so a test can run a refusal while production refuses nothing (docs/decisions/0215).
   */
  async setStructureLimitsForTesting(limits: TestLimits | null): Promise<void> {
    if (!devToolsEnabled(this.env)) throw new Error("Structure limits control is disabled");
    if (limits !== null && !Object.values(limits).every(isWireLimits)) throw new Error("Not structure limits");
    this.#checks.limitsForTesting = limits;
    if (limits === null) await this.ctx.storage.delete("structureLimitsForTesting");
    else await this.ctx.storage.put("structureLimitsForTesting", limits);
  }

  /**
   * Tests only: settles when the jobs running here have ended, or after `maxMs` (false then). A job's last steps (its
   * place given back, its timings line) run after its result is visible; a file's tests wait for them so that no line
   * is logged from here after the file's last test (test/support/setup.ts says why).
   */
  async settledForTesting(maxMs: number): Promise<boolean> {
    if (!devToolsEnabled(this.env)) throw new Error("Job control is disabled");
    const deadline = Date.now() + Math.min(Math.max(0, maxMs), 30_000);
    while (this.#runner.busy) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        this.#runner.settled(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, left);
        }),
      ]);
      clearTimeout(timer);
    }
    return true;
  }

  /** Test and development only: each of this user's structure checks takes `ms` longer in the check Worker. */
  async setCheckDelayForTesting(ms: number): Promise<void> {
    if (!devToolsEnabled(this.env)) throw new Error("Check delay control is disabled");
    this.#checks.delayMsForTesting = ms > 0 ? ms : null;
  }

  /** Account deletion or a data export: queued here, run in batches by the alarm (ADR 0112). */
  startBackground(userId: string, task: { kind: "purge" } | { kind: "export"; exportId: string }) {
    return this.#change(userId, async (now) => {
      if (task.kind === "purge") await background.beginPurge(this.ctx.storage, now);
      else await background.queueExport(this.ctx.storage, task.exportId);
      return untouched(undefined);
    });
  }

  /** The alarm's run, under its own request id; an error escaping it is logged and reported (ADR 0183). */
  override alarm(): Promise<void> {
    return observed(
      this.env,
      (p) => this.ctx.waitUntil(p),
      { where: "user-object alarm" },
      () => this.#alarm(),
    );
  }

  async #alarm(): Promise<void> {
    const userId = await this.ctx.storage.get<string>("userId");
    if (!userId) return;
    // This alarm is the retry (its pump and recovery below); a run that stops again asks for another.
    this.#wake.retried();
    if (await background.runDue(this.env, this.#db, this.ctx.storage, userId)) {
      await this.ctx.storage.setAlarm(Date.now() + 50);
      return;
    }
    this.#wake.inAlarm = true;
    try {
      await this.#change(userId, async (now) => {
        const recovered = await this.#runner.recover(userId, now);
        const caught = await this.#catchUp(userId, now);
        return { answer: undefined, effect: credits.after(recovered.effect, caught.effect) };
      });
      await this.#runner.pump(userId);
      await callbacks.deliverDue(this.env, this.#db, userId, this.#now());
      // Hold every job running here until it ends (its provider call has its own timeout), then deliver the
      // callbacks of the jobs that just ended.
      await Promise.resolve();
      while (this.#runner.busy) {
        await this.#runner.settled();
        await callbacks.deliverDue(this.env, this.#db, userId, this.#now());
      }
    } finally {
      this.#wake.inAlarm = false;
    }
    await this.#serial(() => this.#scheduleAlarm(userId));
  }

  /** Time-driven changes that are due: expiries, then yearly plans' monthly grants. */
  async #catchUp(userId: string, now: number): Promise<Changed<void>> {
    const expired = await credits.expire(this.#db, userId, now);
    const granted = await grantDueMonths(this.#db, userId, now);
    return {
      answer: undefined,
      effect: credits.after(expired.effect, granted > 0 ? { view: "moved" } : expired.effect),
    };
  }
}

/** The user's object (tests reach it directly; everything else through workers/objects/client.ts). */
export function userObject(env: Pick<Env, "USER_OBJECT">, userId: string): DurableObjectStub<UserObject> {
  return env.USER_OBJECT.get(env.USER_OBJECT.idFromName(userId));
}
