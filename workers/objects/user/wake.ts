import type { Database } from "@db/client";
import { sql } from "drizzle-orm";
import * as background from "./background";
import { RESERVATION_TIMEOUT_MS } from "./credits/ledger-rows";
import * as callbacks from "./jobs/callbacks";
import { JOB_WATCH_MARGIN_MS, providerTimeoutMs } from "./jobs/job-rows";

// The wake plan of the user's object: when its alarm must next run. The alarm
// expires grants, makes monthly plan grants, refunds reservations whose job
// died, delivers API callbacks, runs the purge and exports, and holds every
// provider call running here (docs/decisions/0085-jobs-held-by-the-alarm.md).
// Times on this object's clock (a test may move it forward) are turned into
// the runtime's real clock here.

/** How soon the alarm tries again a job whose run stopped on a D1 error. */
export const RUN_RETRY_MS = 1000;

export class WakePlan {
  /** Whether an alarm handler runs now (it holds whatever is under way until it ends). */
  inAlarm = false;
  /** When the alarm should try again a job whose run stopped on an error (real clock), if one did. */
  #retryAt: number | null = null;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly db: Database,
    private readonly env: Env,
  ) {}

  /**
   * Sets the alarm for the earliest reason to wake. `clockOffset` turns this object's clock into the real one;
   * `busy`: work runs here that an alarm handler must hold (wake now, unless a handler runs already).
   */
  async schedule(userId: string, clockOffset: number, now: number, busy: boolean): Promise<void> {
    const jobsAt = await nextWakeAt(this.db, userId, providerTimeoutMs(this.env));
    // Public API callbacks of jobs that reached a final state become due (docs/decisions/0120-public-api.md).
    const callbackAt = await callbacks.afterChange(this.storage, this.db, userId, now);
    if (busy && !this.inAlarm) {
      await this.storage.setAlarm(Date.now());
      return;
    }
    let at = jobsAt === null ? callbackAt : callbackAt === null ? jobsAt : Math.min(jobsAt, callbackAt);
    // Account purge and data exports, on the real clock.
    const backgroundAt = await background.nextAt(this.storage);
    if (backgroundAt !== null) at = Math.min(at ?? Number.POSITIVE_INFINITY, backgroundAt + clockOffset);
    let real = at === null ? null : Math.max(at - clockOffset, Date.now() + 1000);
    if (this.#retryAt !== null) real = Math.min(real ?? Number.POSITIVE_INFINITY, this.#retryAt);
    if (real === null) await this.storage.deleteAlarm();
    else await this.storage.setAlarm(real);
  }

  /** Moves the alarm to `ms` from now, unless it is already due sooner. */
  async wakeIn(ms: number): Promise<void> {
    const at = Date.now() + ms;
    const current = await this.storage.getAlarm();
    if (current === null || current > at) await this.storage.setAlarm(at);
  }

  /** Work is under way that an alarm handler must hold: wake now (a running handler holds it already). */
  async holdNow(): Promise<void> {
    if (!this.inAlarm) await this.storage.setAlarm(Date.now());
  }

  /** A job's run stopped on a D1 error: the alarm tries again in a moment. */
  async retrySoon(): Promise<void> {
    this.#retryAt = Date.now() + RUN_RETRY_MS;
    await this.wakeIn(RUN_RETRY_MS);
  }

  /** The alarm that runs now is the retry. */
  retried(): void {
    this.#retryAt = null;
  }

  /** After a group of reservations only: their timeout is the one new reason to wake. */
  wakeForReservations(): Promise<void> {
    return this.wakeIn(RESERVATION_TIMEOUT_MS);
  }
}

/**
 * When the alarm should next wake for credits and jobs, in one query: the earliest grant expiry, reservation
 * timeout, monthly plan grant (paid_periods) or job watch (its provider call's timeout and a margin).
 */
async function nextWakeAt(db: Database, userId: string, timeoutMs: number): Promise<number | null> {
  const row = await db.get<{ at: number | null }>(sql`
    SELECT min(at) AS at FROM (
      SELECT min(expires_at) AS at FROM credit_grants WHERE user_id = ${userId} AND remaining > 0
      UNION ALL
      SELECT min(created_at) + ${RESERVATION_TIMEOUT_MS} FROM credit_reservations
        WHERE user_id = ${userId} AND status = 'held'
      UNION ALL
      SELECT min(next_grant_at) FROM paid_periods WHERE user_id = ${userId}
      UNION ALL
      SELECT min(coalesce(started_at, created_at)) + ${JOB_WATCH_MARGIN_MS} + ${timeoutMs}
        FROM jobs WHERE user_id = ${userId} AND status IN ('queued', 'running')
    )`);
  return row?.at ?? null;
}
