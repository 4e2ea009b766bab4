import { DurableObject } from "cloudflare:workers";
import { createDb, type Database } from "@db/client";
import { teamMembers, teams } from "@db/schema";
import { createMailer } from "@workers/adapters/mail";
import { devToolsEnabled } from "@workers/lib/dev-tools";
import { log } from "@workers/lib/log";
import * as pool from "@workers/objects/team/pool";
import * as seats from "@workers/objects/team/seats";
import { and, eq } from "drizzle-orm";

/** How often the alarm follows held team credits to their jobs while any is held. */
export const RECONCILE_EVERY_MS = 30_000;

/**
 * One instance per team (addressed by team id): the only writer of the team's credit pool, one change at a time,
 * like the user's object for a user's credits. A team job runs in its member's object; this object takes the
 * credit before it is recorded there and settles it once it has ended there (docs/decisions/0270-team-credit-pool.md).
 */
export class TeamObject extends DurableObject<Env> {
  #db: Database;
  #queue: Promise<unknown> = Promise.resolve();
  #clockOffset = 0;
  #reconcileQueued = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#db = createDb(env.DB);
    ctx.blockConcurrencyWhile(async () => {
      this.#clockOffset = (await ctx.storage.get<number>("clockOffset")) ?? 0;
    });
  }

  #now(): number {
    return Date.now() + this.#clockOffset;
  }

  /** Runs `fn` after every earlier change of this team's pool has finished. */
  #serial<T>(teamId: string, fn: (now: number) => Promise<T>): Promise<T> {
    const step = async () => {
      await this.#bind(teamId);
      return fn(this.#now());
    };
    const run = this.#queue.then(step, step);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #bind(teamId: string): Promise<void> {
    const bound = await this.ctx.storage.get<string>("teamId");
    if (bound === undefined) await this.ctx.storage.put("teamId", teamId);
    else if (bound !== teamId) throw new Error("TeamObject called for a different team");
  }

  async #wakeLater(): Promise<void> {
    const at = await this.ctx.storage.getAlarm();
    const due = Date.now() + RECONCILE_EVERY_MS;
    if (at === null || at > due) await this.ctx.storage.setAlarm(due);
  }

  /** Takes a job's credit from the pool, or refuses naming the pool, the member's limit, or the frozen pool. */
  async reserve(teamId: string, request: pool.TeamReserve) {
    const answer = await this.#serial(teamId, (now) => pool.reserve(this.#db, teamId, request, now));
    if (answer.ok && answer.status === "held") await this.#wakeLater();
    return answer;
  }

  /** Gives back held credits whose jobs will not run (the member's object refused to record them). */
  release(teamId: string, jobIds: string[], reason: string) {
    return this.#serial(teamId, async (now) => {
      for (const jobId of jobIds) await pool.settle(this.#db, teamId, jobId, "released", reason, now);
    });
  }

  /**
   * "This result changed the room" on a team job: its committed credit back to the pool, with the user's recourse
   * rows, in one batch in this team's turn (pool.returnCredit). Called by the member's object from its own turn.
   */
  returnCredit(teamId: string, request: pool.TeamReturn) {
    return this.#serial(teamId, (now) => pool.returnCredit(this.#db, teamId, request, now));
  }

  /**
   * "Keep it anyway" on a team listing's refused result: one pool credit and the version kept, in one batch in this
   * team's turn (pool.keepVersion). Called by the member's object from its own turn.
   */
  keepVersion(teamId: string, request: pool.TeamKeep) {
    return this.#serial(teamId, (now) => pool.keepVersion(this.#db, teamId, request, now));
  }

  grant(teamId: string, input: Parameters<typeof pool.grant>[2]) {
    return this.#serial(teamId, (now) => pool.grant(this.#db, teamId, input, now));
  }

  /** A team admin's limit for one member (null: none), set in the same order as the reservations it limits. */
  setMemberLimit(teamId: string, memberId: string, limit: number | null) {
    if (limit !== null && (!Number.isInteger(limit) || limit < 0)) throw new Error("limit must be a whole number");
    return this.#serial(teamId, async () => {
      const done = await this.#db
        .update(teamMembers)
        .set({ creditLimit: limit })
        .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, memberId)))
        .returning({ userId: teamMembers.userId });
      return done.length > 0;
    });
  }

  /** Freezes (a failed renewal) or thaws (a paid one) the pool: nothing is taken away either way. */
  setFrozen(teamId: string, frozen: boolean) {
    return this.#serial(teamId, async (now) => {
      await this.#db
        .update(teams)
        .set({ frozenAt: frozen ? now : null, updatedAt: now })
        .where(eq(teams.id, teamId));
    });
  }

  /**
   * Applies a verified Stripe seat fact (the webhook's SeatFactSink) in this team's turn: seats, freeze, the pool's
   * grant and the members' notices in one batch, once per event and once per invoice; then tells the members.
   * docs/decisions/0291-seat-facts-applied-by-the-team-object.md
   */
  async applySeatFact(
    teamId: string,
    fact: seats.AppliedSeatFact,
    event: seats.SeatEventMeta,
  ): Promise<{ outcome: "applied" | "ignored"; duplicate: boolean }> {
    const origin = this.env.APP_ORIGIN.replace(/\/$/, "");
    const answer = await this.#serial(teamId, (now) => seats.applySeats(this.#db, teamId, fact, event, now, origin));
    if (answer.notify) await this.#deliverNotices(teamId);
    return { outcome: answer.outcome, duplicate: answer.duplicate };
  }

  /** Sends the members' unsent billing notices (in this team's turn, so two callers never send one twice). */
  async #deliverNotices(teamId: string): Promise<void> {
    const mailer = createMailer(this.env);
    const left = await this.#serial(teamId, (now) => seats.deliverNotices(this.#db, mailer, teamId, now));
    if (left > 0) await this.#wakeLater();
  }

  /**
   * Follows held credits to their jobs (pool.reconcile). Called by a member's object when a team job ended there,
   * and by the alarm for whatever was not told (a crash between the two objects, an eviction). Calls that arrive
   * while one waits its turn join it.
   */
  async reconcile(teamId: string): Promise<{ settled: number; held: number }> {
    if (this.#reconcileQueued) {
      await this.#queue;
      return { settled: 0, held: -1 };
    }
    this.#reconcileQueued = true;
    const done = await this.#serial(teamId, (now) => {
      this.#reconcileQueued = false;
      return pool.reconcile(this.#db, teamId, now);
    });
    if (done.held > 0) await this.#wakeLater();
    return done;
  }

  override async alarm(): Promise<void> {
    const teamId = await this.ctx.storage.get<string>("teamId");
    if (!teamId) return;
    try {
      await this.reconcile(teamId);
      await this.#deliverNotices(teamId);
    } catch (err) {
      log.error("team alarm", { err, where: "team-object alarm" });
      await this.#wakeLater();
    }
  }

  /** Test and development only: moves this object's clock forward. */
  async advanceClockForTesting(ms: number): Promise<void> {
    if (!devToolsEnabled(this.env)) throw new Error("Clock control is disabled");
    this.#clockOffset += ms;
    await this.ctx.storage.put("clockOffset", this.#clockOffset);
  }
}
