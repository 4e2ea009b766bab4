import type { Database } from "@db/client";
import { users } from "@db/schema";
import { eq } from "drizzle-orm";
import * as jobRows from "./jobs/job-rows";

// The live channel of the user's object: the balance pushed to the user's open
// pages over hibernating WebSockets (docs/decisions/0023-live-balance-push.md),
// and the long polls of GET /api/jobs/:id?wait (docs/decisions/0146-job-long-poll.md),
// woken by every change of the user's data.

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
export function signalOrTimeout(waiters: Set<() => void>, ms: number): Promise<boolean> {
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
export function signal(waiters: Set<() => void>): void {
  for (const wake of [...waiters]) wake();
}

export class LiveChannel {
  /** Counts the changes of this user's data; a job waiter wakes at the next. */
  #changes = 0;
  #waiters = new Set<() => void>();

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly db: Database,
  ) {}

  /** After every change of this user's data, as soon as its writes are in: counts it and wakes the job waiters. */
  changed(): void {
    this.#changes++;
    signal(this.#waiters);
  }

  /**
   * Answers once job `jobId` of `userId` has ended (succeeded or failed), is not theirs (undefined), or `ms` have
   * passed, with the job and its version as last read. A change that lands while the job is being read is not
   * missed (the count).
   */
  async waitForJob(userId: string, jobId: string, ms: number): Promise<jobRows.JobWithVersion | undefined> {
    const deadline = Date.now() + Math.max(0, Math.min(ms, jobRows.MAX_JOB_WAIT_MS));
    for (;;) {
      const seen = this.#changes;
      const found = await jobRows.jobWithVersion(this.db, userId, jobId);
      // The caller answers with this read: an ended job, not theirs, or (at the deadline) as it stands.
      if (!found || jobRows.hasEnded(found.job)) return found;
      if (this.#changes !== seen) continue;
      const left = deadline - Date.now();
      if (left <= 0) return found;
      await signalOrTimeout(this.#waiters, left);
    }
  }

  async balance(userId: string): Promise<LiveBalance> {
    const row = await this.db
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

  /** Sends the live balance to the user's open pages, if any. */
  async broadcast(userId: string): Promise<void> {
    const sockets = this.ctx.getWebSockets();
    if (sockets.length === 0) return;
    const message = JSON.stringify(await this.balance(userId));
    for (const ws of sockets) {
      try {
        ws.send(message);
      } catch {
        // A socket closing right now: it is dropped from getWebSockets() on its own.
      }
    }
  }

  /** A new page's channel: a WebSocket the runtime keeps while the object hibernates, told the balance at once. */
  async open(userId: string): Promise<Response> {
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server);
    server.send(JSON.stringify(await this.balance(userId)));
    return new Response(null, { status: 101, webSocket: client });
  }
}
