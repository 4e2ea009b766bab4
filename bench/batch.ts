import { fileURLToPath } from "node:url";
import { createFixtureUser } from "../test/e2e/fixtures.ts";
import { seedPhotos } from "../test/e2e/support/library-bytes.ts";
import { providerLog, recordedJobs, recordsTimings, splitFigures, splitJob } from "./job-split.ts";
import { type BenchContext, type BenchStack, percentile } from "./module.ts";
import { BUDGETS, type Figure } from "./report.ts";

// A listing staged as one batch (docs/decisions/0140-batches-variations-rerolls.md): 40 photos started with
// one POST /api/batches against the provider emulator answering each call after 2 s. Reports the wall time
// until every photo is settled and the most provider calls in flight at once, read from the emulator (not
// from our code). With the plan's concurrency of 4 the floor is 40 / 4 x 2 s = 20 s.
// Called by bench/run.ts; `node bench/batch.ts` runs it alone on its own stack.

export const BATCH_PHOTOS = 40;
const LATENCY_MS = 2000;
/** The concurrency of a user without a plan (app/shared/catalog.ts: every plan but Professional). */
const CONCURRENCY = 4;
/** The batch's floor: every provider slot busy from the start, each call taking exactly the provider's time. */
export const FLOOR_S = (BATCH_PHOTOS / CONCURRENCY) * (LATENCY_MS / 1000);

/** The wall time judged as a ratio to the floor (bench/report.ts BUDGETS.batchFloorRatio). */
function floorRatio(): Pick<Figure, "relativeTo" | "ratioBudget"> {
  return { relativeTo: { name: FLOOR_NAME, label: "the floor" }, ratioBudget: BUDGETS.batchFloorRatio };
}
const FLOOR_NAME = "the floor (photos / concurrency x the provider's time)";

/**
 * Where the batch's jobs' time went (bench/job-split.ts), each over its run in the object (from its launch, through
 * its wait for a provider slot, to its commit); how long each job's check and commit took after its provider call had
 * ended; and how long a plan place stayed empty: from one job's provider work ending to the launch of the job that
 * took its place (docs/decisions/0240: a result's check and commit hold no place). Left out on a revision that records
 * no timings.
 */
async function batchSplit(stack: BenchStack, userId: string, since: number): Promise<Figure[]> {
  if (!(await recordsTimings(stack.url, userId))) {
    console.log("  (this revision records no job timings: the batch's split is left out)");
    return [];
  }
  const group = "Batch: where a job's time goes";
  const jobs = [...(await recordedJobs(stack.url, userId)).values()].filter(
    (j) => j.startedAt >= since && j.endedAt !== null,
  );
  const log = await providerLog(`http://127.0.0.1:${stack.ports.provider}`);
  const splits = jobs.map((j) => splitJob(j, log, [j.startedAt, j.endedAt!], j.photoId));
  const lastCall = (j: (typeof jobs)[number]) =>
    Math.max(...j.spans.filter((s) => s.part === "providerCall").map((s) => s.end));
  const afterCall = jobs.map((j) => j.endedAt! - lastCall(j));
  // The i-th provider work to end frees the place the (i + CONCURRENCY)-th job to be launched takes.
  const ends = jobs.map(lastCall).sort((a, b) => a - b);
  const launches = jobs.map((j) => j.startedAt).sort((a, b) => a - b);
  const empty = launches.slice(CONCURRENCY).map((launched, i) => Math.max(0, launched - ends[i]!));
  // Judged by the check Worker: its answer came with its own times and both pictures went through the image service,
  // the source on the job's path or beside its provider call (ADR 0322).
  const judged = jobs.filter((j) => {
    const onPath = j.spans.filter((sp) => !sp.afterEnd);
    const images = onPath.filter((sp) => sp.part === "images").reduce((n, sp) => n + sp.calls, 0);
    return onPath.some((sp) => sp.part === "checkWorker") && images + (j.imagesAhead ?? 0) >= 2;
  }).length;
  return [
    { group, name: "jobs split", value: jobs.length, unit: "jobs", nonZero: true },
    {
      group,
      name: "results judged by the check Worker (both pictures reduced by the image service)",
      value: judged,
      unit: "jobs",
      budget: BATCH_PHOTOS,
      op: ">=",
      nonZero: true,
    },
    {
      group,
      name: "a job's check and commit after its provider call ended, p50",
      value: Math.round(percentile(afterCall, 50)),
      unit: "ms",
      baseline: `p90 ${Math.round(percentile(afterCall, 90))} ms; no plan place is held meanwhile (ADR 0240)`,
    },
    ...(empty.length > 0
      ? [
          {
            group,
            name: "a plan place empty between a provider call's end and the next job's launch, p50",
            value: Math.round(percentile(empty, 50)),
            unit: "ms",
            baseline: `p90 ${Math.round(percentile(empty, 90))} ms over ${empty.length} places handed on`,
          },
        ]
      : []),
    ...splitFigures(group, splits, "per job, launch to commit"),
  ];
}

/** The photos are uploaded once (setup); each run stages them all again. */
export interface BatchFixture {
  token: string;
  userId: string;
  photoIds: string[];
}

export async function batchFixture(stack: BenchStack, runs: number): Promise<BatchFixture> {
  const user = await createFixtureUser(stack.url, { credits: BATCH_PHOTOS * runs });
  if (!user.sessionToken) throw new Error("bench: fixture user came without a session");
  const photoIds = await seedPhotos(
    { baseUrl: stack.url, sessionToken: user.sessionToken },
    BATCH_PHOTOS,
    "Listing room",
  );
  return { token: user.sessionToken, userId: user.id, photoIds };
}

/** What GET or POST /_emulator/mode tells of the emulator's calls (`rendered` since ADR 0320). */
interface EmulatorCounts {
  maxInFlight: number;
  calls: number;
  rendered?: number;
}

export async function measureBatch(stack: BenchStack, fixture: BatchFixture): Promise<Figure[]> {
  const provider = `http://127.0.0.1:${stack.ports.provider}`;
  const mode = (body: Record<string, unknown>) =>
    fetch(`${provider}/_emulator/mode`, { method: "POST", body: JSON.stringify(body) }).then(
      (r) => r.json() as Promise<{ maxInFlight: number; calls: number }>,
    );
  const headers = { Cookie: `sw_session=${fixture.token}`, "Content-Type": "application/json", Origin: stack.url };
  await mode({ mode: "ok", latencyMs: LATENCY_MS });
  const before = (await mode({ mode: "ok", latencyMs: LATENCY_MS })) as EmulatorCounts;
  const callsBefore = before.calls;
  try {
    const started = performance.now();
    const startedAt = Date.now();
    const res = await fetch(`${stack.url}/api/batches`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        designStyle: "modern",
        items: fixture.photoIds.map((photoId) => ({ photoId, roomType: "livingroom" })),
      }),
    });
    if (res.status !== 202) throw new Error(`bench: batch not started (${res.status} ${await res.text()})`);
    const accepted = performance.now() - started;
    const { batch } = (await res.json()) as { batch: { id: string } };
    let counts = { done: 0, failed: 0, queued: BATCH_PHOTOS, processing: 0 };
    while (counts.done + counts.failed < BATCH_PHOTOS && performance.now() - started < 300_000) {
      await new Promise((r) => setTimeout(r, 250));
      const view = (await (await fetch(`${stack.url}/api/batches/${batch.id}`, { headers })).json()) as {
        batch: { counts: typeof counts };
      };
      counts = view.batch.counts;
    }
    const wall = (performance.now() - started) / 1000;
    const split = await batchSplit(stack, fixture.userId, startedAt);
    // GET reads the emulator's counters; a POST would reset them.
    const seen = (await (await fetch(`${provider}/_emulator/mode`)).json()) as EmulatorCounts;
    // How many results the emulator drew (ADR 0320: an identical call reuses the bytes); older emulators do not say.
    const drawn: Figure[] =
      typeof seen.rendered === "number" && typeof before.rendered === "number"
        ? [
            {
              group: `Batch: where a job's time goes`,
              name: "results the provider emulator drew (the others reused an identical call's bytes, ADR 0320)",
              value: seen.rendered - before.rendered,
              unit: "results",
            },
          ]
        : [];
    const group = `Batch of ${BATCH_PHOTOS} photos, provider at ${LATENCY_MS / 1000} s a call`;
    return [
      { group, name: "start answered in", value: Math.round(accepted), unit: "ms" },
      { group, name: FLOOR_NAME, value: FLOOR_S, unit: "s" },
      {
        group,
        name: "wall time until every photo settled",
        value: Math.round(wall * 10) / 10,
        unit: "s",
        baseline: `floor ${FLOOR_S} s at ${CONCURRENCY} at once`,
        // Issue 44: within 1.15x of the floor (photos / concurrency x the provider's time), on any machine.
        ...floorRatio(),
        pairedRatio: wall / FLOOR_S,
      },
      {
        group,
        name: "most provider calls at once (seen by the emulator)",
        value: seen.maxInFlight,
        unit: "calls",
        budget: CONCURRENCY,
        op: "<=",
      },
      { group, name: "provider calls made", value: seen.calls - callsBefore, unit: "calls", nonZero: true },
      { group, name: "staged", value: counts.done, unit: "photos", budget: BATCH_PHOTOS, op: ">=", nonZero: true },
      ...split,
      ...drawn,
    ];
  } finally {
    await mode({ mode: "ok", latencyMs: 0 });
  }
}

/** For bench/run.ts: the fixture made once, every run a fresh batch of the same photos. */
export function batchModule(runs: number) {
  let fixture: BatchFixture | null = null;
  return {
    title: `A listing of ${BATCH_PHOTOS} photos staged as one batch, provider at ${LATENCY_MS / 1000} s a call`,
    runs,
    async setup(ctx: BenchContext) {
      fixture = await batchFixture(ctx.stack, runs);
    },
    measure: (ctx: BenchContext) => measureBatch(ctx.stack, fixture!),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { runAlone } = await import("./alone.ts");
  await runAlone("batch", { port: 5392, emulatorPortBase: 4380 }, async (stack) =>
    measureBatch(stack, await batchFixture(stack, 1)),
  );
}
