import { DurableObject } from "cloudflare:workers";
import { createDb, type Database } from "@db/client";
import { type Job, type Photo, users } from "@db/schema";
import { config } from "@workers/config";
import { devToolsEnabled } from "@workers/lib/dev-tools";
import * as apiJobs from "@workers/objects/user/api-jobs";
import * as background from "@workers/objects/user/background";
import * as callbacks from "@workers/objects/user/callbacks";
import * as jobsService from "@workers/objects/user/jobs";
import * as ledger from "@workers/objects/user/ledger";
import * as payments from "@workers/objects/user/payment-events";
import * as queue from "@workers/objects/user/queue";
import * as variations from "@workers/objects/user/variations";
import { eq, sql } from "drizzle-orm";

/** What the user's open pages are told after every change (see useLiveCredits). */
export interface LiveBalance {
  type: "balance";
  credits: number;
  plan: { name: string; credits: number } | null;
}

/**
 * Resolves true when `signal` wakes it (every function in `waiters` is called by the signaller), or false after
 * `ms`, whichever comes first; either way it leaves `waiters`.
 */
function signalOrTimeout(waiters: Set<() => void>, ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const wake = (signalled: boolean) => {
      clearTimeout(timer);
      waiters.delete(woken);
      resolve(signalled);
    };
    const woken = () => wake(true);
    const timer = setTimeout(() => wake(false), ms);
    waiters.add(woken);
  });
}

/** Wakes every waiter of signalOrTimeout on `waiters`. */
function signal(waiters: Set<() => void>): void {
  for (const wake of [...waiters]) wake();
}

/**
 * One instance per user (addressed by user id). It is the only writer of that
 * user's credits and plan: every change runs here, one at a time, so
 * concurrent requests from many isolates can never interleave a
 * read-check-write. After each change it pushes the balance to the user's open
 * pages over hibernating WebSockets (docs/decisions/0023-live-balance-push.md).
 */
export class UserObject extends DurableObject<Env> {
  #db: Database;
  #queue: Promise<unknown> = Promise.resolve();
  #clockOffset = 0;
  /**
   * Jobs whose provider call runs in this instance right now. While any runs,
   * an alarm handler awaits them (docs/decisions/0085-jobs-held-by-the-alarm.md):
   * a running alarm keeps the object alive for up to 15 minutes, where a bare
   * background promise is dropped when the idle object is evicted.
   */
  #active = new Map<string, Promise<void>>();
  /**
   * Thumbnails of committed results, held by the alarm like the jobs. Their decode is the heaviest CPU work here
   * (60-150 ms), so it is kept off every request's path: it runs while the object waits on the provider
   * (THUMB_AFTER_CALL_MS into a job's run, when its upload has left), or THUMB_DELAY_MS after its commit when no
   * call starts meanwhile.
   */
  #thumbs = new Set<Promise<void>>();
  /** Starts the thumbnails waiting for a quiet moment (see #thumbs). */
  #thumbsWaiting = new Set<() => void>();
  #inAlarm = false;
  /** One pump at a time; a call while one runs asks it to look again (workers/objects/user/queue.ts). */
  #pumping = false;
  /** When the alarm should try again a job whose run stopped on an error (real clock), if one did. */
  #retryRunAt: number | null = null;
  #pumpAgain = false;
  /**
   * This user's balance and open grants as of the last write, while exact
   * (docs/decisions/0135-ledger-group-commit.md): set by a reservation group
   * after its batch is written, dropped by every other change and by a failed
   * write. Null means "load it from D1 first".
   */
  #creditView: ledger.CreditView | null = null;
  /** The view a change read at the end of its own write batch (ledger.runAndView); it replaces the dropped one. */
  #viewFromChange: ledger.CreditView | null = null;
  /** Counts the changes of this user's data; a job waiter wakes at the next (see waitForJob). */
  #changes = 0;
  /**
   * The job the last change read at the end of its own write batch (a commit), handed to the waiters it wakes so
   * they answer without reading it again; `at` is that change's number in #changes.
   */
  #ended: { at: number; found: jobsService.JobWithVersion } | null = null;
  /** What the running change has read for #ended (see #change). */
  #endedFromChange: jobsService.JobWithVersion | null = null;
  #changeWaiters = new Set<() => void>();
  /** Reservations waiting for the next group turn, and whether that turn is queued. */
  #reserves: PendingReserve[] = [];
  #reserveTurnQueued = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#db = createDb(env.DB);
    ctx.blockConcurrencyWhile(async () => {
      this.#clockOffset = (await ctx.storage.get<number>("clockOffset")) ?? 0;
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

  async #scheduleAlarm(userId: string): Promise<void> {
    const jobsAt = await nextWakeAt(this.#db, userId, jobsService.providerTimeoutMs(this.env));
    // Public API callbacks of jobs that reached a final state (docs/decisions/0120-public-api.md).
    const callbackAt = await callbacks.afterChange(this.ctx.storage, this.#db, userId, this.#now());
    let at = jobsAt === null ? callbackAt : callbackAt === null ? jobsAt : Math.min(jobsAt, callbackAt);
    // Account purge and data exports (workers/objects/user/background.ts), on the real clock.
    const backgroundAt = await background.nextAt(this.ctx.storage);
    if (backgroundAt !== null) at = Math.min(at ?? Number.POSITIVE_INFINITY, backgroundAt + this.#clockOffset);
    // A job running here needs an alarm handler holding it: wake now (a running handler keeps holding it).
    if (this.#active.size > 0 && !this.#inAlarm) await this.ctx.storage.setAlarm(Date.now());
    else {
      // `at` is on this object's clock; the runtime's alarm runs on the real one.
      let real = at === null ? null : Math.max(at - this.#clockOffset, Date.now() + 1000);
      if (this.#retryRunAt !== null) real = Math.min(real ?? Number.POSITIVE_INFINITY, this.#retryRunAt);
      if (real === null) await this.ctx.storage.deleteAlarm();
      else await this.ctx.storage.setAlarm(real);
    }
  }

  /** #scheduleAlarm as the next serial turn, after whatever the caller starts now. */
  #scheduleAlarmNextTurn(userId: string): void {
    this.#serial(() => this.#scheduleAlarm(userId)).catch((err) => console.error("alarm after a change", err));
  }

  /** Moves the alarm to `ms` from now, unless it is already due sooner. */
  async #wakeIn(ms: number): Promise<void> {
    const at = Date.now() + ms;
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }

  /**
   * Runs one change of this user's data after every earlier one. It may write
   * credits through D1 directly, so the reservation groups' view of the
   * balance is dropped, unless the caller says the change leaves balance and
   * grants alone (a commit), or the change read the view in the same batch
   * that wrote (a grant hands it over through #keepView). `alarmNextTurn`: the caller starts jobs as soon as this
   * resolves (#pump, whose first reads are sent before the next serial turn begins), and the alarm is computed in
   * that next turn instead of before the answer.
   */
  #change<T>(
    userId: string,
    fn: (now: number) => Promise<T>,
    opts: { keepsCredits?: boolean; alarmNextTurn?: boolean } = {},
  ): Promise<T> {
    return this.#serial(async () => {
      await this.#bind(userId);
      let result: T;
      this.#viewFromChange = null;
      this.#endedFromChange = null;
      try {
        result = await fn(this.#now());
      } finally {
        if (!opts.keepsCredits) this.#creditView = this.#viewFromChange;
        this.#viewFromChange = null;
      }
      // Job waiters first: they only read what fn wrote, and need not wait for the alarm's reads.
      this.#wakeWaiters(this.#endedFromChange);
      if (opts.alarmNextTurn) this.#scheduleAlarmNextTurn(userId);
      else await this.#scheduleAlarm(userId);
      await this.#broadcastBalance(userId);
      return result;
    });
  }

  /**
   * Group commit of reservations (docs/decisions/0135-ledger-group-commit.md):
   * the request waits for the next group turn in the serial queue; every
   * reservation that arrived meanwhile is decided in that turn and written in
   * one D1 batch.
   */
  async #reserveInGroup(userId: string, request: ledger.ReserveRequestOf): Promise<ledger.ReserveAnswer> {
    if (!Number.isInteger(request.amount) || request.amount <= 0) {
      throw new Error("reserve amount must be a positive integer");
    }
    return await new Promise((resolve, reject) => {
      this.#reserves.push({ userId, request, resolve, reject });
      this.#queueReserveTurn();
    });
  }

  #queueReserveTurn(): void {
    if (this.#reserveTurnQueued || this.#reserves.length === 0) return;
    this.#reserveTurnQueued = true;
    this.#serial(() => this.#reserveTurn()).catch(() => undefined);
  }

  async #reserveTurn(): Promise<void> {
    // A lone request waits one turn of the event loop: requests sent with it (a burst from one
    // page, many isolates) join this group instead of waiting for the next one.
    if (this.#reserves.length === 1) await new Promise((resolve) => setTimeout(resolve, 0));
    this.#reserveTurnQueued = false;
    const taken = this.#reserves.splice(0, ledger.MAX_GROUP);
    // Whatever is left (or arrives while this batch is in flight) gets the next turn.
    this.#queueReserveTurn();
    const userId = taken[0]?.userId;
    if (userId === undefined) return;
    const group = taken.filter((p) => p.userId === userId);
    for (const p of taken) if (p.userId !== userId) p.reject(new Error("UserObject called for a different user"));
    let answers: ledger.ReserveAnswer[];
    let plainReservations = false;
    let alarmSet = false;
    let changed = true;
    try {
      await this.#bind(userId);
      const now = this.#now();
      const requests = group.map(({ request: r }) => ({
        key: r.key,
        amount: r.amount,
        reason: r.reason,
        alsoRun: r.alsoRun?.(now),
      }));
      // A group that only takes new reservations adds one wake: their timeout. Every other wake reason is already
      // covered by the alarm #scheduleAlarm set after the change that caused it. The alarm write overlaps the D1
      // round trips instead of following them (an early alarm finds nothing to do and reschedules, so it is
      // harmless when the group takes nothing or fails).
      const pure = requests.every((r) => r.alsoRun === undefined);
      const wake = pure
        ? this.#wakeIn(ledger.RESERVATION_TIMEOUT_MS).then(
            () => true,
            () => false,
          )
        : Promise.resolve(false);
      const done = await ledger.reserveGroup(this.#db, userId, this.#creditView, requests, now);
      alarmSet = await wake;
      this.#creditView = done.view;
      answers = done.answers;
      plainReservations = alarmSet && !done.expired;
      changed = done.wrote || done.expired;
    } catch (err) {
      // Nothing of the batch was written (D1 batches are atomic); the view may be wrong now.
      this.#creditView = null;
      for (const p of group) p.reject(err);
      return;
    }
    try {
      if (changed) this.#wakeWaiters();
      if (changed && !plainReservations) {
        // A group that started jobs: their callers launch them at once (#pump, which holds a running job with an
        // alarm of its own), so the full alarm computation runs as the next turn instead of before the answers.
        this.#scheduleAlarmNextTurn(userId);
      }
      if (changed) await this.#broadcastBalance(userId);
    } catch (err) {
      for (const p of group) p.reject(err);
      return;
    }
    group.forEach((p, i) => {
      const answer = answers[i];
      if (answer) p.resolve(answer);
      else p.reject(new Error("reservation group gave no answer"));
    });
  }

  async #liveBalance(userId: string): Promise<LiveBalance> {
    const row = await this.#db
      .select({ credits: users.credits, plan: users.plan, planCredits: users.planCredits })
      .from(users)
      .where(eq(users.id, userId))
      .get();
    return {
      type: "balance",
      credits: row?.credits ?? 0,
      plan: row?.plan ? { name: row.plan, credits: row.planCredits } : null,
    };
  }

  /**
   * After every change of this user's data, as soon as its writes are in: counts it and wakes the job waiters (see
   * waitForJob). The live balance follows (#broadcastBalance).
   */
  #wakeWaiters(ended: jobsService.JobWithVersion | null = null): void {
    this.#changes++;
    this.#ended = ended ? { at: this.#changes, found: ended } : null;
    signal(this.#changeWaiters);
  }

  /** Sends the live balance to the user's open pages, if any. */
  async #broadcastBalance(userId: string): Promise<void> {
    const sockets = this.ctx.getWebSockets();
    if (sockets.length === 0) return;
    const message = JSON.stringify(await this.#liveBalance(userId));
    for (const ws of sockets) {
      try {
        ws.send(message);
      } catch {
        // A socket closing right now: it is dropped from getWebSockets() on its own.
      }
    }
  }

  /**
   * The long poll of GET /api/jobs/:id?wait (docs/decisions/0146-job-long-poll.md): answers once job `jobId` of
   * `userId` has ended (succeeded or failed), is not theirs (undefined), or `ms` have passed, with the job and its
   * version as last read. Every change here wakes the waiters, which read the job again; a change that lands while
   * the job is being read is not missed (the count).
   */
  async waitForJob(userId: string, jobId: string, ms: number): ReturnType<typeof jobsService.jobWithVersion> {
    const deadline = Date.now() + Math.max(0, Math.min(ms, jobsService.MAX_JOB_WAIT_MS));
    for (;;) {
      const seen = this.#changes;
      const found = await jobsService.jobWithVersion(this.#db, userId, jobId);
      // The caller answers with this read: an ended job, not theirs, or (at the deadline) as it stands.
      if (!found || jobsService.hasEnded(found.job)) return found;
      if (this.#changes !== seen) continue;
      const left = deadline - Date.now();
      if (left <= 0) return found;
      if (await signalOrTimeout(this.#changeWaiters, left)) {
        // Woken by a change that read this job at the end of its own write batch (a commit): that read is the job
        // as it stands, since the waiter resumes before anything else runs here. Any later change drops it.
        const handed = this.#ended?.at === this.#changes ? this.#ended.found : undefined;
        if (handed?.job.id === jobId && jobsService.hasEnded(handed.job)) return handed;
      }
    }
  }

  /**
   * Opens a live balance channel (a WebSocket the runtime keeps while this
   * object hibernates). Only reached through GET /api/me/live, which has
   * checked the session and the page's origin and names the user.
   */
  override async fetch(request: Request): Promise<Response> {
    const userId = request.headers.get("X-User-Id");
    if (request.headers.get("Upgrade") !== "websocket" || !userId) {
      return new Response("Expected a WebSocket upgrade", { status: 426 });
    }
    await this.#bind(userId);
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server);
    server.send(JSON.stringify(await this.#liveBalance(userId)));
    return new Response(null, { status: 101, webSocket: client });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    // The page may ask for the balance again (e.g. after its tab wakes up).
    if (message !== "refresh") return;
    const userId = await this.ctx.storage.get<string>("userId");
    if (userId) ws.send(JSON.stringify(await this.#liveBalance(userId)));
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

  balance(userId: string): Promise<number> {
    return this.#change(userId, async (now) => {
      await this.#catchUp(userId, now);
      const row = await this.#db.query.users.findFirst({
        where: (u, { eq }) => eq(u.id, userId),
        columns: { credits: true },
      });
      return row?.credits ?? 0;
    });
  }

  grant(userId: string, input: ledger.GrantInput): Promise<ledger.LedgerResult<{ duplicate: boolean }>> {
    return this.#change(userId, async (now) => this.#keepView(await ledger.grant(this.#db, userId, input, now)));
  }

  /**
   * Takes the view a change read in its own write batch (it is exact: the batch that wrote also read it, inside
   * this object's queue) and answers the caller without it.
   */
  #keepView<A extends object>(
    result: ledger.LedgerResult<A & { view?: ledger.CreditView | null }>,
  ): ledger.LedgerResult<Omit<A, "view">> {
    if (!result.ok) return result;
    const { view, ...answer } = result;
    this.#viewFromChange = view ?? null;
    return answer as ledger.LedgerResult<Omit<A, "view">>;
  }

  /**
   * Applies a verified Stripe event (as plain data): its record, the
   * subscription state, the plan fields and any grant, in one D1 batch.
   */
  applyPaymentEvent(userId: string, event: payments.PaymentEvent): Promise<payments.ApplyResult> {
    return this.#change(userId, (now) => payments.applyPaymentEvent(this.#db, userId, event, now));
  }

  /**
   * The free trial credits (SIGNUP_CREDITS), once per user, only once their
   * e-mail is verified. The accounts flow calls this on the first verification.
   */
  grantSignupCredits(userId: string) {
    return this.#change(userId, async (now) =>
      this.#keepView(await ledger.grantSignupCredits(this.#db, userId, config(this.env).SIGNUP_CREDITS, now)),
    );
  }

  reserve(userId: string, key: string, amount: number, reason: string): Promise<ledger.ReserveAnswer> {
    return this.#reserveInGroup(userId, { key, amount, reason });
  }

  commit(userId: string, key: string) {
    // A commit settles a held reservation: balance and grants stay as they are.
    return this.#change(userId, (now) => ledger.commit(this.#db, userId, key, now), { keepsCredits: true });
  }

  refund(userId: string, key: string, reason: string) {
    return this.#change(userId, (now) => ledger.refund(this.#db, userId, key, reason, now));
  }

  deduct(
    userId: string,
    amount: number,
    reason: string,
    idempotencyKey: string,
    actorId: string | null,
    audit?: ledger.AuditEntry,
  ) {
    return this.#change(userId, (now) =>
      ledger.deduct(this.#db, userId, amount, reason, idempotencyKey, actorId, now, audit),
    );
  }

  /**
   * Starts an AI job: the job row and the reservation of one credit (key = job
   * id) in one atomic batch, then the provider call runs outside the serial
   * queue (other credit changes of the user are not held up by it). Returns at
   * once; the caller polls the job. docs/decisions/0070-ai-jobs-in-the-user-object.md
   */
  async startJob(userId: string, input: jobsService.StartJobInput) {
    const result = await this.#reserveInGroup(userId, {
      key: input.jobId,
      amount: 1,
      reason: `AI ${input.kind}`,
      alsoRun: (now) => [jobsService.insertJobStatement(this.#db, userId, input, now)],
    });
    if (result.ok) await this.#pump(userId);
    return result;
  }

  /**
   * Starts many jobs at once (a batch, variations, a re-roll, retries), each
   * with its own reservation, all or none; they wait in this user's queue until
   * the plan's concurrency lets them reach the provider.
   * docs/decisions/0140-batches-variations-rerolls.md
   */
  async startJobs(userId: string, input: queue.StartManyInput): Promise<queue.StartManyResult> {
    const result = await this.#change(
      userId,
      (now) => queue.startMany(this.#db, userId, input, now, [...this.#active.keys()]),
      { alarmNextTurn: true },
    );
    if (!result.ok) return result;
    const { firstQueued, ...answer } = result;
    await this.#pump(userId, result.concurrency, firstQueued);
    return answer;
  }

  /**
   * Launches queued jobs while fewer than the plan's concurrency run here (`concurrency` when just read, and
   * `firstQueued`, the first queued jobs, when read in the same turn: no read of the queue then).
   */
  async #pump(userId: string, concurrency?: number, firstQueued?: queue.QueuedToRun[]): Promise<void> {
    if (this.#pumping) {
      this.#pumpAgain = true;
      return;
    }
    this.#pumping = true;
    try {
      let known = concurrency;
      let listed = firstQueued;
      do {
        this.#pumpAgain = false;
        const next =
          known !== undefined && listed !== undefined
            ? listed.filter((q) => !this.#active.has(q.job.id)).slice(0, Math.max(known - this.#active.size, 0))
            : await queue.nextToRun(this.#db, userId, [...this.#active.keys()], known);
        for (const queued of next) this.#launch(userId, queued);
        // A second look (asked for meanwhile) reads the plan and the queue again.
        known = undefined;
        listed = undefined;
      } while (this.#pumpAgain);
    } finally {
      this.#pumping = false;
    }
    // A job launched here needs an alarm handler holding it.
    if (this.#active.size > 0 && !this.#inAlarm) await this.ctx.storage.setAlarm(Date.now());
  }

  /** A job started through the public API: idempotent per Idempotency-Key, with an optional signed callback. */
  async startApiJob(userId: string, input: apiJobs.ApiJobInput) {
    const result = await this.#change(userId, (now) => apiJobs.start(this.#db, this.ctx.storage, userId, input, now));
    if (result.ok && result.launch) await this.#pump(userId);
    return result;
  }

  #launch(userId: string, queued: queue.QueuedToRun): void {
    const jobId = queued.job.id;
    if (this.#active.has(jobId)) return;
    const run = this.#runJob(userId, queued).then(
      async () => {
        this.#active.delete(jobId);
        // The next queued job takes the freed place (before this promise settles, so the alarm holds it too).
        await this.#pump(userId).catch(() => undefined);
      },
      async (err) => {
        // D1 refused a write the run could not do without (marking the job running, or settling its credit): the
        // job stays as D1 has it, queued or running, with its credit held. Pumping again at once would try the same
        // write in a tight loop; the alarm tries again in a moment (its pump starts a queued job, its catch-up a
        // running one that no instance runs).
        console.error("a job's run stopped on an error; the alarm tries again", jobId, err);
        this.#active.delete(jobId);
        this.#retryRunAt = Date.now() + RUN_RETRY_MS;
        await this.#wakeIn(RUN_RETRY_MS).catch(() => undefined);
      },
    );
    this.#active.set(jobId, run);
    // Held until an alarm handler awaits it (set by #scheduleAlarm after the change that started it).
    this.ctx.waitUntil(run);
  }

  /**
   * Runs a queued job: marks it running, calls the provider, and commits or refunds its credit. With the job's photo
   * as read in the turn that reserved its credit, the call starts while the job is being marked running (one D1
   * round trip off the job's time), and a job that turns out not to be queued any more (nothing else should start
   * it) has its result thrown away uncharged. docs/decisions/0146-job-long-poll.md
   */
  async #runJob(userId: string, queued: queue.QueuedToRun): Promise<void> {
    const jobId = queued.job.id;
    let claimed: (running: boolean) => void = () => undefined;
    const early =
      queued.photo && !variations.isGroupLead(queued.job)
        ? this.#produce(queued.job, queued.photo, new Promise<boolean>((resolve) => (claimed = resolve)))
        : undefined;
    // Its failure is handled once the job is marked running; until then it must not count as unhandled.
    early?.catch(() => undefined);
    // Not marked running (no longer queued, or D1 failed): an early call's answer is not stored, and the call ends
    // before the job's place is freed.
    const unclaimed = async () => {
      claimed(false);
      await early?.catch(() => undefined);
    };
    let started: Awaited<ReturnType<typeof jobsService.startRunning>>;
    try {
      started = await jobsService.startRunning(this.#db, jobId, this.#now());
    } catch (err) {
      await unclaimed();
      throw err;
    }
    if (!started) return unclaimed();
    claimed(true);
    const { job, photo } = started;
    if (variations.isGroupLead(job)) {
      const change = <T>(fn: (now: number) => Promise<T>) => this.#change(userId, fn);
      return variations.runGroup({ env: this.env, db: this.#db, now: () => this.#now(), change }, userId, job);
    }
    // The result's R2 write is under way while the commit reads; every way out waits for it to settle (it never
    // rejects here: the commit sees its failure) before deleting the job's bytes.
    let writeSettled: Promise<void> = Promise.resolve();
    try {
      const { result, stored } = await (early ?? this.#produce(job, photo));
      writeSettled = stored.catch(() => undefined);
      const settled = await this.#change(
        userId,
        async (now) => {
          const committed = await ledger.commit(
            this.#db,
            userId,
            jobId,
            now,
            jobsService.succeedStatements(this.#db, job, result, now),
            { thenRead: jobsService.jobWithVersionQueries(this.#db, userId, jobId), writesAfter: stored },
          );
          if (!committed.ok || !committed.read) return { ...committed, succeeded: false };
          const read = jobsService.jobWithVersionFrom(userId, committed.read);
          this.#endedFromChange = read ?? null;
          return { ...committed, succeeded: read?.job.status === "succeeded" };
        },
        { keepsCredits: true },
      );
      // Refunded meanwhile (the alarm gave up on it), or no longer running: the result is not kept.
      if (!(settled.ok && settled.status === "committed" && settled.succeeded)) {
        await writeSettled;
        await this.env.PHOTOS.delete(jobsService.jobResultKeys(job));
        return;
      }
      // The person has the result; its thumbnail is made at the next quiet moment, held by the alarm like the call.
      this.#later(() => jobsService.finishThumb(this.env, this.#db, job, result, this.#now()));
    } catch (err) {
      const message = jobsService.failureMessage(job.kind, err);
      await this.#change(userId, (now) =>
        ledger.refund(this.#db, userId, jobId, message, now, [
          jobsService.failJobStatement(this.#db, jobId, message, now),
        ]),
      );
      // A failed job keeps no bytes: whatever this attempt stored goes.
      await writeSettled;
      await this.env.PHOTOS.delete(jobsService.jobResultKeys(job));
    }
  }

  /** The provider call of a job and the start of its result's R2 write (jobsService.produce). */
  #produce(job: Job, photo: Photo | undefined, storeWhen?: Promise<boolean>): ReturnType<typeof jobsService.produce> {
    const quiet = setTimeout(() => this.#whileProviderWorks(), THUMB_AFTER_CALL_MS);
    return jobsService
      .produce(this.env, this.#db, job, this.#now(), { photo, storeWhen })
      .finally(() => clearTimeout(quiet));
  }

  /** Runs `work` at the next quiet moment (see #thumbs), held by the alarm handler until it ends. */
  #later(work: () => Promise<void>): void {
    const done: Promise<void> = signalOrTimeout(this.#thumbsWaiting, THUMB_DELAY_MS)
      .then(work)
      .catch((err) => console.error("deferred work failed", err))
      .finally(() => this.#thumbs.delete(done));
    this.#thumbs.add(done);
    this.ctx.waitUntil(done);
  }

  /** A provider call is under way: the waiting thumbnails are made now, while nothing else waits on this object. */
  #whileProviderWorks(): void {
    signal(this.#thumbsWaiting);
  }

  /** Jobs queued (the pump starts them) or running in this instance, with the variations that follow them. */
  async #aliveJobIds(userId: string): Promise<Set<string>> {
    const open = await jobsService.openJobs(this.#db, userId);
    const alive = new Set(open.filter((j) => j.status === "queued" || this.#active.has(j.id)).map((j) => j.id));
    for (const job of open) if (queue.followsLead(job) && alive.has(job.groupId!)) alive.add(job.id);
    return alive;
  }

  /** Test and development only: moves this object's clock forward. */
  async advanceClockForTesting(ms: number): Promise<void> {
    if (!devToolsEnabled(this.env)) throw new Error("Clock control is disabled");
    this.#clockOffset += ms;
    await this.ctx.storage.put("clockOffset", this.#clockOffset);
  }

  /** Account deletion or a data export: queued here, run in batches by the alarm (docs/decisions/0112-account-deletion-and-export.md). */
  startBackground(userId: string, task: { kind: "purge" } | { kind: "export"; exportId: string }) {
    return this.#change(userId, async (now) => {
      if (task.kind === "purge") await background.beginPurge(this.ctx.storage, now);
      else await background.queueExport(this.ctx.storage, task.exportId);
    });
  }

  override async alarm(): Promise<void> {
    const userId = await this.ctx.storage.get<string>("userId");
    if (!userId) return;
    // This alarm is the retry (its pump and catch-up below); a run that stops again asks for another.
    this.#retryRunAt = null;
    if (await background.runDue(this.env, this.#db, this.ctx.storage, userId)) {
      await this.ctx.storage.setAlarm(Date.now() + 50);
      return;
    }
    this.#inAlarm = true;
    try {
      await this.#change(userId, async (now) => {
        for (const job of await jobsService.openJobs(this.#db, userId)) {
          if (this.#active.has(job.id)) continue;
          // Variations follow their lead; queued jobs start through the queue (workers/objects/user/queue.ts).
          if (queue.followsLead(job) || job.status === "queued") continue;
          // Running in D1 but not in this instance: the instance that ran it was evicted or restarted.
          // The provider call can be repeated (the result overwrites the same keys), so it is tried once
          // more; after that the credit goes back.
          if (job.attempts < jobsService.MAX_ATTEMPTS) {
            await jobsService.requeue(this.#db, job.id);
            continue;
          }
          const message = jobsService.INTERRUPTED_MESSAGE;
          for (const lost of [job, ...(await queue.openSiblings(this.#db, job))]) {
            await ledger.refund(this.#db, userId, lost.id, message, now, [
              jobsService.failJobStatement(this.#db, lost.id, message, now),
            ]);
            await this.env.PHOTOS.delete(jobsService.jobResultKeys(lost));
          }
        }
        // A job waiting in this user's queue, or running here (its provider call has its own timeout),
        // has not died however long ago its credit was reserved: a batch can wait longer than the timeout.
        const alive = await this.#aliveJobIds(userId);
        for (const key of await ledger.staleReservationKeys(this.#db, userId, now)) {
          if (alive.has(key)) continue;
          const reason = "Job did not finish in time";
          await ledger.refund(this.#db, userId, key, reason, now, [
            jobsService.failJobStatement(this.#db, key, reason, now),
          ]);
        }
        await this.#catchUp(userId, now);
      });
      await this.#pump(userId);
      await callbacks.deliverDue(this.env, this.#db, userId, this.#now());
      // Hold every job running here until it ends (its provider call has its own timeout), then
      // deliver the callbacks of the jobs that just ended.
      await Promise.resolve();
      while (this.#active.size > 0 || this.#thumbs.size > 0) {
        await Promise.allSettled([...this.#active.values(), ...this.#thumbs]);
        await callbacks.deliverDue(this.env, this.#db, userId, this.#now());
      }
    } finally {
      this.#inAlarm = false;
    }
    await this.#serial(() => this.#scheduleAlarm(userId));
  }

  /** Time-driven changes that are due: expiries, then yearly plans' monthly grants. */
  async #catchUp(userId: string, now: number): Promise<void> {
    await ledger.expireGrants(this.#db, userId, now);
    await payments.grantDueMonths(this.#db, userId, now);
  }
}

/**
 * When the alarm should next wake, in one query: the earliest grant expiry,
 * reservation timeout (ledger) or monthly plan grant (paid_periods).
 */
async function nextWakeAt(db: Database, userId: string, timeoutMs: number): Promise<number | null> {
  const row = await db.get<{ at: number | null }>(sql`
    SELECT min(at) AS at FROM (
      SELECT min(expires_at) AS at FROM credit_grants WHERE user_id = ${userId} AND remaining > 0
      UNION ALL
      SELECT min(created_at) + ${ledger.RESERVATION_TIMEOUT_MS} FROM credit_reservations
        WHERE user_id = ${userId} AND status = 'held'
      UNION ALL
      SELECT min(next_grant_at) FROM paid_periods WHERE user_id = ${userId}
      UNION ALL
      SELECT min(coalesce(started_at, created_at)) + ${jobsService.JOB_WATCH_MARGIN_MS} + ${timeoutMs}
        FROM jobs WHERE user_id = ${userId} AND status IN ('queued', 'running')
    )`);
  return row?.at ?? null;
}

/** How long after its job's commit a result's thumbnail is made at the latest (see UserObject#thumbs). */
export const THUMB_DELAY_MS = 1000;
/** How soon the alarm tries again a job whose run stopped on a D1 error (see UserObject#launch). */
export const RUN_RETRY_MS = 1000;
/** How far into a job's provider call the waiting thumbnails are made (its upload has left by then). */
export const THUMB_AFTER_CALL_MS = 50;

/** A reservation waiting for its group turn (see UserObject#reserveInGroup). */
interface PendingReserve {
  userId: string;
  request: ledger.ReserveRequestOf;
  resolve: (answer: ledger.ReserveAnswer) => void;
  reject: (err: unknown) => void;
}

export function userObject(env: Env, userId: string): DurableObjectStub<UserObject> {
  return env.USER_OBJECT.get(env.USER_OBJECT.idFromName(userId));
}
