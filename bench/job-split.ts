import { percentile } from "./module.ts";
import type { Figure } from "./report.ts";

// Where a job's time goes (issue 44 part 2, docs/decisions/0226-where-a-jobs-time-goes.md). Three clocks meet
// here, all the machine's own: the bench's (the job's wall time), the user's object and the check Worker (spans
// of what each step of the run waited on, GET /api/dev/bench/job-timings) and the provider emulator (each call's
// own time, GET /_emulator/requests). Each named part is the union of its spans inside the job's window; "the
// rest" is the window not covered by any of them (our code, the hops between Workers, the long poll). So the
// parts add up to the wall time exactly when no two named parts overlap: the bench prints whether they do,
// within 5 %, for every job.

/**
 * What one call of the platform's image service is taken to cost in production: its round trip to the image
 * service and a 640 px gray reduction of a 2304 px JPEG. An assumption, like the injected D1 and R2 latencies of
 * workers/lib/injected-latency.ts, not a measurement; the local stand-in (sharp in wrangler's Node process) is not
 * production's cost (docs TOOLCHAIN).
 */
export const IMAGES_CALL_MS = Number(process.env.BENCH_IMAGES_CALL_MS ?? 30);

/** How far the parts may add up from the wall time before the split says it does not hold. */
export const ADDS_UP_WITHIN = 0.05;

type Interval = [number, number];

interface Span {
  part: string;
  start: number;
  end: number;
  calls: number;
  afterEnd?: boolean;
}

export interface RecordedJob {
  jobId: string;
  photoId?: string;
  startedAt: number;
  endedAt: number | null;
  spans: Span[];
  /** Image service calls made for it beside the provider call (the source, ADR 0322); absent before that change. */
  imagesAhead?: number;
}

interface ProviderEntry {
  at?: number;
  ms?: number;
  input_fetch_at?: number;
  input_fetch_ms?: number;
  input_image_url?: string;
}

/** The parts of the split, in the order the report gives them. */
export const PARTS = [
  ["provider", "the provider's own time (emulator, its fetch of our address aside)"],
  ["images", "the image service (local stand-in)"],
  ["checkQueue", "structure check: queue delivery"],
  ["checkWorker", "structure check: inside the check Worker (image service aside)"],
  ["checkAnswer", "structure check: the answer back to the object"],
  ["r2Write", "R2 writes (the result)"],
  ["d1Write", "D1 on the run's path (marked running; the commit)"],
  ["slotWait", "waiting for a provider slot"],
  ["rest", "the rest (our code, hops, the provider call's transport, the long poll)"],
] as const;

export type Part = (typeof PARTS)[number][0];

export interface JobSplit {
  jobId: string;
  wallMs: number;
  parts: Record<Part, number>;
  imagesCalls: number;
  /** Image service calls made after the job ended (the committed result's thumbnail). */
  imagesCallsAfter: number;
  /** Image service calls made for it beside its provider call, off its path (the source, ADR 0322). */
  imagesCallsAhead: number;
  /** The named parts' overlap with each other: the sum of the parts minus the wall time. */
  overlapMs: number;
  /** Of the rest, the time inside our provider calls (transport, the provider's fetch of our address). */
  restInCallsMs: number;
  /** Of the rest, the time before the object's run began: the request that starts the job, until its run. */
  restBeforeRunMs: number;
  /** Of the rest, the time after the object's run ended (its commit written): until the bench heard of it. */
  restAfterRunMs: number;
}

function clip([a, b]: Interval, [lo, hi]: Interval): Interval | null {
  const s = Math.max(a, lo);
  const e = Math.min(b, hi);
  return e > s ? [s, e] : null;
}

/** The length of the union of intervals. */
export function unionLength(intervals: Interval[]): number {
  const sorted = [...intervals].sort((x, y) => x[0] - y[0]);
  let total = 0;
  let cur: Interval | null = null;
  for (const iv of sorted) {
    if (!cur || iv[0] > cur[1]) {
      if (cur) total += cur[1] - cur[0];
      cur = [iv[0], iv[1]];
    } else cur[1] = Math.max(cur[1], iv[1]);
  }
  if (cur) total += cur[1] - cur[0];
  return total;
}

/** `a` without the parts of it inside any of `cut`. */
function subtract(a: Interval, cut: Interval[]): Interval[] {
  let pieces: Interval[] = [a];
  for (const [cs, ce] of cut) {
    pieces = pieces.flatMap(([s, e]): Interval[] => {
      if (ce <= s || cs >= e) return [[s, e]];
      const out: Interval[] = [];
      if (cs > s) out.push([s, cs]);
      if (ce < e) out.push([ce, e]);
      return out;
    });
  }
  return pieces;
}

/**
 * The provider's own time inside our calls: each emulator entry that lies inside one of the job's provider call
 * spans (and names the job's photo, when `photoId` is given), without its fetch of our signed address (served by our
 * Worker: ours, so in the rest).
 */
function providerOwn(calls: Span[], log: ProviderEntry[], photoId?: string): Interval[] {
  const out: Interval[] = [];
  for (const call of calls) {
    const inside = log.filter(
      (e) =>
        typeof e.at === "number" &&
        typeof e.ms === "number" &&
        // Both clocks are the machine's; the object's Date.now() moves only at I/O, so allow a few ms either side.
        e.at >= call.start - 5 &&
        e.at + e.ms <= call.end + 5 &&
        (!photoId || !e.input_image_url || e.input_image_url.includes(photoId)),
    );
    for (const e of inside) {
      const whole: Interval = [e.at!, e.at! + e.ms!];
      const fetch: Interval[] =
        typeof e.input_fetch_at === "number" && typeof e.input_fetch_ms === "number"
          ? [[e.input_fetch_at, e.input_fetch_at + e.input_fetch_ms]]
          : [];
      out.push(...subtract(whole, fetch));
    }
  }
  return out;
}

/** One job's split over its window (the bench's own wall time of the job, or the object's run when none). */
export function splitJob(recorded: RecordedJob, log: ProviderEntry[], window: Interval, photoId?: string): JobSplit {
  const onPath = recorded.spans.filter((s) => !s.afterEnd);
  const byPart = new Map<Part, Interval[]>();
  const add = (part: Part, ivs: Interval[]) => {
    const clipped = ivs.flatMap((iv): Interval[] => {
      const c = clip(iv, window);
      return c ? [c] : [];
    });
    byPart.set(part, [...(byPart.get(part) ?? []), ...clipped]);
  };
  add(
    "provider",
    providerOwn(
      onPath.filter((s) => s.part === "providerCall"),
      log,
      photoId,
    ),
  );
  for (const part of ["images", "checkQueue", "checkWorker", "checkAnswer", "r2Write", "d1Write", "slotWait"] as const)
    add(
      part,
      onPath.filter((s) => s.part === part).map((s): Interval => [s.start, s.end]),
    );
  const wallMs = window[1] - window[0];
  const parts = {} as Record<Part, number>;
  const named: Interval[] = [];
  for (const [part] of PARTS) {
    if (part === "rest") continue;
    const ivs = byPart.get(part) ?? [];
    parts[part] = unionLength(ivs);
    named.push(...ivs);
  }
  parts.rest = wallMs - unionLength(named);
  // Of the rest, what lay inside our provider calls but outside the provider's own time: the upload, the provider's
  // fetch of our signed address (served by our Worker), the answer's way back. Not a part: a look inside the rest.
  const callSpans = onPath
    .filter((s) => s.part === "providerCall")
    .flatMap((s): Interval[] => {
      const c = clip([s.start, s.end], window);
      return c ? [c] : [];
    });
  const restInCalls = unionLength(callSpans.flatMap((c) => subtract(c, named)));
  // Of the rest, what lay outside the object's run: before it began (the start request) and after its commit.
  const outside = (iv: Interval) => {
    const c = clip(iv, window);
    return c ? unionLength(subtract(c, named)) : 0;
  };
  const restBeforeRun = outside([window[0], recorded.startedAt]);
  const restAfterRun = recorded.endedAt === null ? 0 : outside([recorded.endedAt, window[1]]);
  const sum = Object.values(parts).reduce((a, b) => a + b, 0);
  const calls = (after: boolean) =>
    recorded.spans.filter((s) => s.part === "images" && !!s.afterEnd === after).reduce((n, s) => n + s.calls, 0);
  return {
    jobId: recorded.jobId,
    wallMs,
    parts,
    imagesCalls: calls(false),
    imagesCallsAfter: calls(true),
    imagesCallsAhead: recorded.imagesAhead ?? 0,
    overlapMs: sum - wallMs,
    restInCallsMs: restInCalls,
    restBeforeRunMs: restBeforeRun,
    restAfterRunMs: restAfterRun,
  };
}

/** The job timings the user's object kept (dev tools only). */
export async function recordedJobs(baseUrl: string, userId: string): Promise<Map<string, RecordedJob>> {
  const res = await fetch(`${baseUrl}/api/dev/bench/job-timings/${userId}`);
  if (!res.ok) throw new Error(`bench: job timings not answered (${res.status}): does this revision record them?`);
  const { jobs } = (await res.json()) as { jobs: RecordedJob[] };
  return new Map(jobs.map((j) => [j.jobId, j]));
}

/** Whether a stack records job timings (older revisions do not): the split is then left out, not faked. */
export async function recordsTimings(baseUrl: string, userId: string): Promise<boolean> {
  const res = await fetch(`${baseUrl}/api/dev/bench/job-timings/${userId}`);
  await res.body?.cancel();
  return res.ok;
}

/** The provider emulator's log of calls (its last 200). */
export async function providerLog(providerUrl: string): Promise<ProviderEntry[]> {
  return (await (await fetch(`${providerUrl}/_emulator/requests`)).json()) as ProviderEntry[];
}

/**
 * The split's figures: each part's p50 over the jobs, the image service's calls and what production would pay for
 * them (IMAGES_CALL_MS each), the rest plus that estimate, and whether the parts added up. Prints
 * the adds-up line and returns it as a figure too (1 when every job's parts came within ADDS_UP_WITHIN).
 */
export function splitFigures(
  group: string,
  splits: JobSplit[],
  label = "per job",
  /** The window reaches beyond the object's run (the bench's start request and long poll); else both looks are 0. */
  beyondRun = false,
): Figure[] {
  if (splits.length === 0) throw new Error("bench: no job to split");
  const p50 = (f: (s: JobSplit) => number) => Math.round(percentile(splits.map(f), 50) * 10) / 10;
  const figures: Figure[] = [{ group, name: `${label}: wall time p50`, value: p50((s) => s.wallMs), unit: "ms" }];
  for (const [part, title] of PARTS)
    figures.push({ group, name: `${label}: ${title} p50`, value: p50((s) => s.parts[part]), unit: "ms" });
  figures.push({
    group,
    name: `${label}: of the rest, inside our provider calls (upload, its fetch of our address, the answer back) p50`,
    value: p50((s) => s.restInCallsMs),
    unit: "ms",
  });
  if (beyondRun)
    figures.push(
      {
        group,
        name: `${label}: of the rest, before the object's run began (the request that starts the job) p50`,
        value: p50((s) => s.restBeforeRunMs),
        unit: "ms",
      },
      {
        group,
        name: `${label}: of the rest, after the object's commit (until the waiting request answered) p50`,
        value: p50((s) => s.restAfterRunMs),
        unit: "ms",
      },
    );
  const calls = p50((s) => s.imagesCalls);
  const estimate = calls * IMAGES_CALL_MS;
  figures.push(
    {
      group,
      name: `${label}: image service calls on the job's path`,
      value: calls,
      unit: "calls",
      baseline:
        `and ${p50((s) => s.imagesCallsAfter)} after it (the thumbnail), ` +
        `${p50((s) => s.imagesCallsAhead)} beside the provider call (the source, ADR 0322)`,
      nonZero: true,
    },
    {
      group,
      name: `${label}: the image service in production (estimate)`,
      value: estimate,
      unit: "ms",
      baseline: `${calls} calls x IMAGES_CALL_MS = ${IMAGES_CALL_MS} ms, an assumption (bench/job-split.ts)`,
    },
    {
      group,
      // Not "our overhead": the staging module's budgeted figure of that name also holds the check, R2, D1 and the slot.
      name: `${label}: the rest + the image service's estimate (the check, R2, D1 and the slot aside) p50`,
      value: p50((s) => s.parts.rest + s.imagesCalls * IMAGES_CALL_MS),
      unit: "ms",
    },
  );
  const worst = Math.max(...splits.map((s) => Math.abs(s.overlapMs) / s.wallMs));
  const holds = worst <= ADDS_UP_WITHIN;
  console.log(
    `  ${group}, ${label}: the parts add up to the wall time within ${ADDS_UP_WITHIN * 100} %: ${holds ? "yes" : "NO"} ` +
      `(${splits.length} jobs; the worst off by ${(worst * 100).toFixed(1)} %)`,
  );
  figures.push({
    group,
    name: `${label}: the parts add up to the wall time within ${ADDS_UP_WITHIN * 100} % (worst job's gap, %)`,
    value: Math.round(worst * 1000) / 10,
    unit: "%",
    budget: ADDS_UP_WITHIN * 100,
    op: "<=",
  });
  return figures;
}
