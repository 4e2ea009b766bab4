import { createFixtureUser } from "../test/e2e/fixtures.ts";
import { jobEnded } from "./api.ts";
import { inspector, type Profile } from "./inspector.ts";
import { seedPhotos } from "./library-bytes.ts";
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
const FLOOR_PINGS = 60;
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

/** Time the isolate was not idle, in ms. */
function busyMs(profile: Profile): number {
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  let us = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    if (idle.has(profile.samples[i]!)) continue;
    us += Math.min(profile.timeDeltas[i + 1] ?? 0, 2 * INTERVAL_US);
  }
  return us / 1000;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

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
      const ping = async (): Promise<Ping> => {
        const sentAt = Date.now();
        const t = performance.now();
        const res = await fetch(`${stack.url}/api/dev/bench/balance/${u.id}`);
        if (!res.ok) throw new Error(`balance answered ${res.status}`);
        await res.arrayBuffer();
        return { sentAt, ms: performance.now() - t };
      };
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
        const view = (await (await fetch(`${stack.url}/api/jobs/${job.id}`, { headers: u.headers })).json()) as {
          job: { finishedAt: number };
          version: { structure: { verdict: string } | null } | null;
        };
        return { finishedAt: view.job.finishedAt, verdict: view.version?.structure?.verdict ?? "none" };
      };
      await fetch(`${provider}/_emulator/mode`, {
        method: "POST",
        body: JSON.stringify({ mode: "ok", latencyMs: PROVIDER_LATENCY_MS }),
      });
      try {
        await stage(); // warm: code compiled, the object awake
        // The floor: the same request, nothing else running.
        const floor: number[] = [];
        for (let i = 0; i < FLOOR_PINGS; i++) {
          floor.push((await ping()).ms);
          await new Promise((r) => setTimeout(r, PING_EVERY_MS));
        }
        // Pass 1, profiled: the app isolate's busy time over JOBS jobs, no pings.
        const session = await inspector(OBJECT_INSPECTOR_PORT);
        let profile: Profile;
        const verdicts: string[] = [];
        try {
          await session.send("Profiler.enable");
          await session.send("Profiler.setSamplingInterval", { interval: INTERVAL_US });
          await session.send("Profiler.start");
          for (let i = 0; i < JOBS; i++) verdicts.push((await stage()).verdict);
          ({ profile } = await session.send<{ profile: Profile }>("Profiler.stop"));
          await session.send("Profiler.disable");
        } finally {
          session.close();
        }
        const checked = verdicts.filter((v) => v === "passed" || v === "refused").length;
        // Pass 2, no profiler: a request for the same user's balance every PING_EVERY_MS while JOBS jobs run.
        const pings: Ping[] = [];
        let pinging = true;
        const pinger = (async () => {
          while (pinging) {
            pings.push(await ping());
            await new Promise((r) => setTimeout(r, PING_EVERY_MS));
          }
        })();
        const windows: [number, number][] = [];
        try {
          for (let i = 0; i < JOBS; i++) {
            const startedAt = Date.now();
            const { finishedAt } = await stage();
            const calls = (await (await fetch(`${provider}/_emulator/requests`)).json()) as ProviderCall[];
            const staging = calls.find(
              (c) =>
                c.path === "/generate_designs_for_room" &&
                typeof c.at === "number" &&
                c.at >= startedAt &&
                c.at <= finishedAt,
            );
            if (!staging || typeof staging.ms !== "number") throw new Error("the emulator did not log the job's call");
            windows.push([staging.at! + staging.ms, finishedAt]);
          }
        } finally {
          pinging = false;
          await pinger;
        }
        const during = pings.filter((p) => windows.some(([from, to]) => p.sentAt >= from && p.sentAt <= to));
        if (during.length < JOBS) throw new Error(`only ${during.length} requests fell while a result was processed`);
        const processing = windows.map(([from, to]) => to - from);
        return [
          {
            group: GROUP,
            name: "the app isolate's busy time per staged job (an upper bound of the object's)",
            value: round1(busyMs(profile) / JOBS),
            unit: "ms",
            baseline: `${JOBS} jobs, ${checked} of them checked by the check Worker`,
            ...BUDGETS.objectBusyPerJob,
          },
          {
            group: GROUP,
            name: "a second request of the same user while a result is processed, p95",
            value: round1(
              percentile(
                during.map((p) => p.ms),
                95,
              ),
            ),
            unit: "ms",
            baseline: `p50 ${round1(median(during.map((p) => p.ms)))} ms over ${during.length} requests; a result's processing p50 ${Math.round(median(processing))} ms`,
            ...BUDGETS.secondRequestWaitP95,
          },
          {
            group: GROUP,
            name: "the same request with nothing running (the floor), p95",
            value: round1(percentile(floor, 95)),
            unit: "ms",
            baseline: `p50 ${round1(median(floor))} ms`,
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
