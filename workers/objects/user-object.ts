import { DurableObject } from "cloudflare:workers";
import { createDb, type Database } from "../../db/client";
import { devToolsEnabled } from "../context";
import * as ledger from "../services/ledger";

/**
 * One instance per user (addressed by user id). It is the only writer of that
 * user's credits: every change runs here, one at a time, so concurrent
 * requests from many isolates can never interleave a read-check-write.
 */
export class UserObject extends DurableObject<Env> {
  #db: Database;
  #queue: Promise<unknown> = Promise.resolve();
  #clockOffset = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#db = createDb(env.DB);
    ctx.blockConcurrencyWhile(async () => {
      this.#clockOffset = (await ctx.storage.get<number>("clockOffset")) ?? 0;
    });
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
    const at = await ledger.nextWakeAt(this.#db, userId);
    if (at === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(Math.max(at, Date.now() + 1000) - this.#clockOffset);
  }

  #change<T>(userId: string, fn: (now: number) => Promise<T>): Promise<T> {
    return this.#serial(async () => {
      await this.#bind(userId);
      const result = await fn(this.#now());
      await this.#scheduleAlarm(userId);
      return result;
    });
  }

  /** Health probe: proves the object answers and its storage writes. */
  async ping(): Promise<{ ok: true; pings: number }> {
    const pings = ((await this.ctx.storage.get<number>("pings")) ?? 0) + 1;
    await this.ctx.storage.put("pings", pings);
    return { ok: true, pings };
  }

  balance(userId: string): Promise<number> {
    return this.#change(userId, async (now) => {
      await ledger.expireGrants(this.#db, userId, now);
      const row = await this.#db.query.users.findFirst({
        where: (u, { eq }) => eq(u.id, userId),
        columns: { credits: true },
      });
      return row?.credits ?? 0;
    });
  }

  grant(userId: string, input: ledger.GrantInput) {
    const { alsoRun: _ignored, ...plain } = input;
    return this.#change(userId, (now) => ledger.grant(this.#db, userId, plain, now));
  }

  reserve(userId: string, key: string, amount: number, reason: string) {
    return this.#change(userId, (now) => ledger.reserve(this.#db, userId, key, amount, reason, now));
  }

  commit(userId: string, key: string) {
    return this.#change(userId, (now) => ledger.commit(this.#db, userId, key, now));
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

  /** Test and development only: moves this object's clock forward. */
  async advanceClockForTesting(ms: number): Promise<void> {
    if (!devToolsEnabled(this.env)) throw new Error("Clock control is disabled");
    this.#clockOffset += ms;
    await this.ctx.storage.put("clockOffset", this.#clockOffset);
  }

  override async alarm(): Promise<void> {
    const userId = await this.ctx.storage.get<string>("userId");
    if (!userId) return;
    await this.#change(userId, async (now) => {
      for (const key of await ledger.staleReservationKeys(this.#db, userId, now)) {
        await ledger.refund(this.#db, userId, key, "Job did not finish in time", now);
      }
      await ledger.expireGrants(this.#db, userId, now);
    });
  }
}

export function userObject(env: Env, userId: string): DurableObjectStub<UserObject> {
  return env.USER_OBJECT.get(env.USER_OBJECT.idFromName(userId));
}
