import { fileURLToPath } from "node:url";
import { createFixtureUser } from "../test/e2e/fixtures.ts";
import { seedPhotos } from "./library-bytes.ts";
import type { BenchContext, BenchStack } from "./module.ts";
import type { Figure } from "./report.ts";

// A listing staged as one batch (docs/decisions/0140-batches-variations-rerolls.md): 40 photos started with
// one POST /api/batches against the provider emulator answering each call after 2 s. Reports the wall time
// until every photo is settled and the most provider calls in flight at once, read from the emulator (not
// from our code). With the plan's concurrency of 4 the floor is 40 / 4 x 2 s = 20 s.
// Called by bench/run.ts; `node bench/batch.ts` runs it alone on its own stack.

export const BATCH_PHOTOS = 40;
const LATENCY_MS = 2000;
/** The concurrency of a user without a plan (app/shared/catalog.ts: every plan but Professional). */
const CONCURRENCY = 4;

/** The photos are uploaded once (setup); each run stages them all again. */
export interface BatchFixture {
  token: string;
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
  return { token: user.sessionToken, photoIds };
}

export async function measureBatch(stack: BenchStack, fixture: BatchFixture): Promise<Figure[]> {
  const provider = `http://127.0.0.1:${stack.ports.provider}`;
  const mode = (body: Record<string, unknown>) =>
    fetch(`${provider}/_emulator/mode`, { method: "POST", body: JSON.stringify(body) }).then(
      (r) => r.json() as Promise<{ maxInFlight: number; calls: number }>,
    );
  const headers = { Cookie: `sw_session=${fixture.token}`, "Content-Type": "application/json", Origin: stack.url };
  await mode({ mode: "ok", latencyMs: LATENCY_MS });
  const callsBefore = (await mode({ mode: "ok", latencyMs: LATENCY_MS })).calls;
  try {
    const started = performance.now();
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
    // GET reads the emulator's counters; a POST would reset them.
    const seen = (await (await fetch(`${provider}/_emulator/mode`)).json()) as { maxInFlight: number; calls: number };
    const group = `Batch of ${BATCH_PHOTOS} photos, provider at ${LATENCY_MS / 1000} s a call`;
    return [
      { group, name: "start answered in", value: Math.round(accepted), unit: "ms" },
      {
        group,
        name: "wall time until every photo settled",
        value: Math.round(wall * 10) / 10,
        unit: "s",
        baseline: `floor ${(BATCH_PHOTOS / CONCURRENCY) * (LATENCY_MS / 1000)} s at ${CONCURRENCY} at once`,
      },
      {
        group,
        name: "most provider calls at once (seen by the emulator)",
        value: seen.maxInFlight,
        unit: "calls",
        budget: CONCURRENCY,
        op: "<=",
      },
      { group, name: "provider calls made", value: seen.calls - callsBefore, unit: "calls" },
      { group, name: "staged", value: counts.done, unit: "photos", budget: BATCH_PHOTOS, op: ">=" },
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
