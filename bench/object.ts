import { readFileSync, writeFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { ROOT } from "../scripts/stack.ts";
import { createFixtureUser } from "../test/e2e/fixtures.ts";
import { seedPhotos } from "../test/e2e/support/library-bytes.ts";
import { jobEnded } from "./api.ts";
import { inspector, type Profile } from "./inspector.ts";
import { type BenchModule, median, percentile } from "./module.ts";
import { BUDGETS, type Figure } from "./report.ts";

// The user's object while its jobs' results are processed (issue 37, docs/decisions/0188-the-check-off-the-object.md),
// on the whole product: the production build, its emulators, and the check Worker in a wrangler dev process of its
// own (scripts/stack.ts), as production runs the queue consumer on another machine's thread. One user stages the
// bench's room photo (a real room, so every result is checked) one job after another; the provider answers after
// PROVIDER_LATENCY_MS.
//
// - The app isolate's busy time per staged job: a V8 CPU profile of the app's Worker through wrangler's inspector
//   over JOBS jobs; every sample that is not idle counts (gaps capped at twice the interval, as bench:profile does).
//   The isolate runs the object and the Worker's own requests for the job (the POST, the long poll, the source the
//   provider fetches), so this is an upper bound of the object's own time.
// - A second request's wait: while the jobs run, a request for the same user's balance (GET
//   /api/dev/bench/balance/:id, which asks the user's object) every PING_EVERY_MS. Only the requests sent while a
//   result was being processed count (from the provider's answer to the job's end, from the emulator's log and the
//   job's finishedAt); the same request with no job running is the floor.

export const OBJECT_INSPECTOR_PORT = Number(process.env.BENCH_INSPECTOR_PORT ?? 9249);
const JOBS = 8;
const PROVIDER_LATENCY_MS = 250;
const PING_EVERY_MS = 10;
/** How long the floor's requests run, nothing else running. */
const FLOOR_MS = 1_500;
const INTERVAL_US = 100;

const GROUP = "The user's object while its results are processed (the structure check in the check Worker)";

interface Ping {
  sentAt: number;
  ms: number;
}

interface ProviderCall {
  path: string;
  at?: number;
  ms?: number;
}

/**
 * Where a sample's time went: the user's object's code, other code of the app's script (the Worker's requests, and
 * the provider gate and rate limiter objects, which share the isolate locally but not in production), or neither
 * (the runtime, GC).
 */
type Owner = "object" | "worker" | "runtime";

/**
 * The app isolate's busy time, in ms, by owner. A sample belongs to the object when the first frame of our code on
 * its stack (from the leaf up, through the build's source maps) is in workers/objects or in an adapter or helper the
 * object calls (the provider client, the Images helpers); to the Worker when it is in workers/api, http, services,
 * app, or another object (the provider gate, the rate limiter). A sample with none of ours on its stack (the runtime's own work, garbage collection, D1's result parsing after
 * an await) is the runtime's: the bench shares it out in proportion (see the figures).
 */
export function busyByOwner(profile: Profile): Record<Owner, number> {
  const maps = new Map<string, SourceMap | null>();
  const mapOf = (url: string) => {
    if (!maps.has(url)) {
      let map: SourceMap | null = null;
      try {
        map = new SourceMap(JSON.parse(readFileSync(join(ROOT, "build", "server", `${url}.map`), "utf8")));
      } catch {
        map = null;
      }
      maps.set(url, map);
    }
    return maps.get(url) ?? null;
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const owners = new Map<number, Owner>();
  const ownerOf = (id: number): Owner => {
    const known = owners.get(id);
    if (known) return known;
    let owner: Owner = "runtime";
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const frame = byId.get(cur)!.callFrame;
      const map = frame.url ? mapOf(frame.url) : null;
      const source = map?.findEntry(frame.lineNumber ?? 0, frame.columnNumber ?? 0);
      const file = source && "originalSource" in source ? String(source.originalSource) : "";
      if (/workers\/(objects\/(user-object|user\/)|adapters\/provider|lib\/images)/.test(file)) owner = "object";
      else if (/workers\/(api|http|services|objects)\/|\/app\//.test(file)) owner = "worker";
      else continue;
      break;
    }
    owners.set(id, owner);
    return owner;
  };
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  const us: Record<Owner, number> = { object: 0, worker: 0, runtime: 0 };
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    if (idle.has(id)) continue;
    us[ownerOf(id)] += Math.min(profile.timeDeltas[i + 1] ?? 0, 2 * INTERVAL_US);
  }
  return { object: us.object / 1000, worker: us.worker / 1000, runtime: us.runtime / 1000 };
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** A gap between two busy samples longer than this (µs) means the isolate was free in between. */
const STRETCH_GAP_US = 1_000;

/**
 * The app isolate's busy stretches (ms), longest first: runs of busy samples with no gap over STRETCH_GAP_US. A
 * request for the isolate that arrives during a stretch waits for its end, so the longest stretch is the most a
 * second request waited for the isolate while the profiled jobs ran (stretches were about 40-50 ms while the
 * structure check ran on the object, which matches its cost measured alone: bench/structure.ts).
 */
export function busyStretches(profile: Profile): number[] {
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  const stretches: number[] = [];
  let t = profile.startTime;
  let open: [number, number] | null = null;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    const busy = !idle.has(profile.samples[i]!);
    if (open && (!busy || delta > STRETCH_GAP_US)) {
      stretches.push((open[1] - open[0]) / 1000);
      open = null;
    }
    if (busy) {
      if (open) open[1] = t;
      else open = [t - Math.min(delta, INTERVAL_US), t];
    }
  }
  if (open) stretches.push((open[1] - open[0]) / 1000);
  return stretches.sort((a, b) => b - a);
}

/** The pinger's thread: GET `url` every `every` ms until told to stop, then hands back each request's time. */
const PINGER = `
const { parentPort, workerData } = require("node:worker_threads");
const pings = [];
let stop = false;
parentPort.on("message", () => { stop = true; });
(async () => {
  while (!stop) {
    const sentAt = Date.now();
    const t = performance.now();
    const res = await fetch(workerData.url);
    await res.arrayBuffer();
    if (!res.ok) throw new Error("balance answered " + res.status);
    pings.push({ sentAt, ms: performance.now() - t });
    await new Promise((r) => setTimeout(r, workerData.every));
  }
  parentPort.postMessage(pings);
})().catch((err) => { throw err; });
`;

/** Pings `url` from a thread of its own while `work` runs; the pings, each with its send time and duration. */
async function pinging(url: string, work: () => Promise<void>): Promise<Ping[]> {
  const thread = new Worker(PINGER, { eval: true, workerData: { url, every: PING_EVERY_MS } });
  const done = new Promise<Ping[]>((resolve, reject) => {
    thread.once("message", resolve);
    thread.once("error", reject);
  });
  try {
    await work();
  } finally {
    thread.postMessage("stop");
  }
  const pings = await done;
  await thread.terminate();
  return pings;
}

export function objectModule(): BenchModule {
  let user: { id: string; headers: Record<string, string>; photoId: string } | null = null;
  return {
    title: `The user's object while its jobs' results are processed: busy time per job and a second request's wait (${JOBS} jobs a run)`,
    async setup({ stack }) {
      const made = await createFixtureUser(stack.url, { credits: 10 * JOBS });
      if (!made.sessionToken) throw new Error("fixture user came without a session");
      const [photoId] = await seedPhotos({ baseUrl: stack.url, sessionToken: made.sessionToken }, 1, "Bench room");
      user = {
        id: made.id,
        photoId: photoId!,
        headers: { Cookie: `sw_session=${made.sessionToken}`, "Content-Type": "application/json", Origin: stack.url },
      };
    },
    async measure({ stack }) {
      const u = user!;
      const provider = `http://127.0.0.1:${stack.ports.provider}`;
      const pingUrl = `${stack.url}/api/dev/bench/balance/${u.id}`;
      const stage = async () => {
        const res = await fetch(`${stack.url}/api/photos/${u.photoId}/jobs`, {
          method: "POST",
          headers: { ...u.headers, "Idempotency-Key": crypto.randomUUID() },
          body: JSON.stringify({ kind: "stage", roomType: "bedroom", designStyle: "scandinavian" }),
        });
        if (res.status !== 202) throw new Error(`staging job refused: ${res.status} ${await res.text()}`);
        const { job } = (await res.json()) as { job: { id: string } };
        const ended = await jobEnded(stack.url, job.id, u.headers);
        if (ended.status === "failed") throw new Error(`staging job failed: ${ended.error}`);
        return job.id;
      };
      const view = async (jobId: string) => {
        const res = await fetch(`${stack.url}/api/jobs/${jobId}`, { headers: u.headers });
        const v = (await res.json()) as {
          job: { finishedAt: number };
          version: { structure: { verdict: string } | null } | null;
        };
        return { finishedAt: v.job.finishedAt, verdict: v.version?.structure?.verdict ?? "none" };
      };
      /** A job's result processing: from the provider's answer to its staging call to the job's end (wall ms). */
      const processing = async (startedAt: number, finishedAt: number): Promise<[number, number]> => {
        const calls = (await (await fetch(`${provider}/_emulator/requests`)).json()) as ProviderCall[];
        const staging = calls.find(
          (c) =>
            c.path === "/generate_designs_for_room" &&
            typeof c.at === "number" &&
            c.at >= startedAt &&
            c.at <= finishedAt,
        );
        if (!staging || typeof staging.ms !== "number") throw new Error("the emulator did not log the job's call");
        return [staging.at! + staging.ms, finishedAt];
      };
      await fetch(`${provider}/_emulator/mode`, {
        method: "POST",
        body: JSON.stringify({ mode: "ok", latencyMs: PROVIDER_LATENCY_MS }),
      });
      try {
        await stage(); // warm: code compiled, the object awake
        // The floor: the same request from the same thread, nothing else running.
        const floor = (await pinging(pingUrl, async () => new Promise((r) => setTimeout(r, FLOOR_MS)))).map(
          (p) => p.ms,
        );
        // Pass 1, profiled: the app isolate's busy time over JOBS jobs, no pings.
        const session = await inspector(OBJECT_INSPECTOR_PORT);
        let profile: Profile;
        const ids: string[] = [];
        try {
          await session.send("Profiler.enable");
          await session.send("Profiler.setSamplingInterval", { interval: INTERVAL_US });
          await session.send("Profiler.start");
          for (let i = 0; i < JOBS; i++) ids.push(await stage());
          ({ profile } = await session.send<{ profile: Profile }>("Profiler.stop"));
          await session.send("Profiler.disable");
        } finally {
          session.close();
        }
        const ended = await Promise.all(ids.map((id) => view(id)));
        const checked = ended.filter((v) => v.verdict === "passed" || v.verdict === "refused").length;
        const stretches = busyStretches(profile);
        // BENCH_OBJECT_PROFILE=<file>: the last run's profile (open it in Chrome DevTools' Performance panel).
        if (process.env.BENCH_OBJECT_PROFILE) writeFileSync(process.env.BENCH_OBJECT_PROFILE, JSON.stringify(profile));
        const busy = busyByOwner(profile);
        // The runtime's share goes to the object and the Worker in proportion to what each was seen doing.
        const objectShare = busy.object / Math.max(busy.object + busy.worker, 1e-9);
        const objectMs = (busy.object + busy.runtime * objectShare) / JOBS;
        // Pass 2, no profiler: the same user's balance every PING_EVERY_MS from a thread of its own (this thread runs
        // the provider emulator, whose image work would delay a ping timed here) while JOBS jobs run one by one.
        const windows: [number, number][] = [];
        const pings = await pinging(pingUrl, async () => {
          for (let i = 0; i < JOBS; i++) {
            const startedAt = Date.now();
            const { finishedAt } = await view(await stage());
            windows.push(await processing(startedAt, finishedAt));
          }
        });
        const during = pings.filter((p) => windows.some(([from, to]) => p.sentAt >= from && p.sentAt <= to));
        if (during.length < JOBS) throw new Error(`only ${during.length} requests fell while a result was processed`);
        const typical = median(floor);
        const waits = during.map((p) => Math.max(0, p.ms - typical));
        const processingMs = windows.map(([from, to]) => to - from);
        return [
          {
            group: GROUP,
            name: "the object's busy time per staged job",
            value: round1(objectMs),
            unit: "ms",
            baseline:
              `seen in the object's code ${round1(busy.object / JOBS)} ms, the runtime's share ${round1((busy.runtime * objectShare) / JOBS)} ms; ` +
              `the whole app isolate ${round1((busy.object + busy.worker + busy.runtime) / JOBS)} ms a job (the Worker's requests and the other objects ${round1(busy.worker / JOBS)} ms); ` +
              `${checked} of ${JOBS} results checked by the check Worker`,
            ...BUDGETS.objectBusyPerJob,
          },
          {
            group: GROUP,
            name: "a second request of the same user while its jobs ran: the longest it waited for the app isolate",
            value: round1(stretches[0] ?? 0),
            unit: "ms",
            baseline: `the isolate's longest busy stretch over ${JOBS} jobs (the next: ${stretches
              .slice(1, 4)
              .map(round1)
              .join(", ")} ms); the most any request waited for it, so its p95 is at most this`,
            ...BUDGETS.secondRequestWaitP95,
          },
          {
            group: GROUP,
            name: "a second request of the same user while a result is processed, end to end: its time beyond a quiet one, p95",
            value: round1(percentile(waits, 95)),
            unit: "ms",
            baseline: `answered in ${round1(median(during.map((p) => p.ms)))} ms p50, ${round1(
              percentile(
                during.map((p) => p.ms),
                95,
              ),
            )} ms p95 over ${during.length} requests; a result's processing ${Math.round(median(processingMs))} ms p50`,
          },
          {
            group: GROUP,
            name: "the same request with nothing running (the floor), p95",
            value: round1(percentile(floor, 95)),
            unit: "ms",
            baseline: `p50 ${round1(typical)} ms over ${floor.length} requests`,
          },
        ] satisfies Figure[];
      } finally {
        await fetch(`${provider}/_emulator/mode`, {
          method: "POST",
          body: JSON.stringify({ mode: "ok", latencyMs: 0 }),
        });
      }
    },
  };
}
