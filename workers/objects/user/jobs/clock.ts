import { log } from "@workers/lib/log";
import type { CheckTiming } from "@workers/lib/structure/verdict";

export { isCheckTiming } from "@workers/lib/structure/verdict";
export type { CheckTiming };

// Where a job's time goes (issue 44, docs/decisions/0226-where-a-jobs-time-goes.md): each step of a job's run that
// waits on something outside our code is recorded as a span of wall-clock time (epoch ms, the machine's clock, which
// the bench and the provider emulator share), named by what it waited on. At the job's end one log line gives each
// part's total; the object keeps the spans of its last jobs for `GET /api/dev/bench/job-timings` (dev tools only),
// where the bench sets them beside the provider's own log and its own wall time. Recording costs a Date.now() and a
// small object per step: no storage, no extra I/O.

/** What a span waited on. */
export type JobPart =
  /** Our side of a provider POST, from sending it to its answer (the provider's own time is inside it). */
  | "providerCall"
  /** The platform's image service (the check Worker's reductions, the result's thumbnail). */
  | "images"
  /** A structure check on the queue: sent by the object, received by the check Worker. */
  | "checkQueue"
  /** Inside the check Worker, its image service calls aside (reading both pictures, comparing them). */
  | "checkWorker"
  /** The check Worker's answer: its RPC to the object, until the waiting job has it. */
  | "checkAnswer"
  /** The result's bytes written to R2. */
  | "r2Write"
  /** D1 on the run's path: the job marked running, and the commit (its read and its write batch). */
  | "d1Write"
  /** Waiting for a place at the provider gate (a batch's jobs wait here for each other). */
  | "slotWait";

export interface JobSpan {
  part: JobPart;
  start: number;
  end: number;
  /** Calls the span covers (image service calls; 1 otherwise). */
  calls: number;
  /** Made after the job had ended (a committed result's thumbnail): not on the job's path. */
  afterEnd?: boolean;
}

export interface JobTimings {
  jobId: string;
  /** The photo it works on (the provider is sent a signed address that names it). */
  photoId: string;
  /** When the run began (before its slot) and ended (its commit or refund written), epoch ms. */
  startedAt: number;
  endedAt: number | null;
  spans: JobSpan[];
  /**
   * Image service calls made for it off its path: the source reduced beside the provider call (ADR 0322), counted
   * when its check used that copy.
   */
  imagesAhead?: number;
}

export class JobClock {
  readonly timings: JobTimings;

  constructor(jobId: string, photoId: string) {
    this.timings = { jobId, photoId, startedAt: Date.now(), endedAt: null, spans: [] };
  }

  add(part: JobPart, start: number, end: number, calls = 1): void {
    this.timings.spans.push({
      part,
      start,
      end,
      calls,
      ...(this.timings.endedAt !== null ? { afterEnd: true } : {}),
    });
  }

  /** Awaits `work`, recording the wait as one span of `part`. */
  async time<T>(part: JobPart, work: () => Promise<T>, calls = 1): Promise<T> {
    const start = Date.now();
    try {
      return await work();
    } finally {
      this.add(part, start, Date.now(), calls);
    }
  }

  /** A check's round trip: sent at `sentAt`, answered at `answeredAt`, the check Worker's own times between. */
  check(sentAt: number, answeredAt: number, worker: CheckTiming | undefined): void {
    if (!worker) {
      // No times from the check Worker (it could not judge, or the answer timed out): the whole wait as queue time.
      this.add("checkQueue", sentAt, answeredAt);
      return;
    }
    this.add("checkQueue", sentAt, worker.receivedAt);
    this.add("checkWorker", worker.receivedAt, worker.imagesStart);
    if (worker.imagesCalls > 0) this.add("images", worker.imagesStart, worker.imagesEnd, worker.imagesCalls);
    if (worker.sourceAhead) this.timings.imagesAhead = (this.timings.imagesAhead ?? 0) + 1;
    this.add("checkWorker", worker.imagesEnd, worker.judgedAt);
    this.add("checkAnswer", worker.judgedAt, answeredAt);
  }

  /** The job's end: one log line with each part's total, ms. */
  end(): void {
    this.timings.endedAt = Date.now();
    const totals: Record<string, number> = {};
    for (const s of this.timings.spans) totals[`${s.part}Ms`] = (totals[`${s.part}Ms`] ?? 0) + (s.end - s.start);
    const imagesCalls = this.timings.spans.filter((s) => s.part === "images").reduce((n, s) => n + s.calls, 0);
    log.info("job timings", {
      runMs: this.timings.endedAt - this.timings.startedAt,
      ...totals,
      imagesCalls,
    });
  }
}

/** The last jobs' timings an object keeps (a bench reads them; older ones are dropped). */
export class RecentTimings {
  #kept = new Map<string, JobTimings>();

  constructor(private readonly max = 200) {}

  keep(timings: JobTimings): void {
    this.#kept.delete(timings.jobId);
    this.#kept.set(timings.jobId, timings);
    for (const old of this.#kept.keys()) {
      if (this.#kept.size <= this.max) break;
      this.#kept.delete(old);
    }
  }

  list(): JobTimings[] {
    return [...this.#kept.values()];
  }
}
