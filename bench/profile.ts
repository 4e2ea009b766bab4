import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { ROOT, startStack } from "../scripts/stack.ts";
import { createFixtureUser } from "../test/e2e/fixtures.ts";
import { seedPhotos } from "../test/e2e/support/library-bytes.ts";
import { inspector, type Profile } from "./inspector.ts";

// `npm run bench:profile`: where the app's Worker spends its CPU on a page, per request. Starts the production
// build on its own ports and a fresh state folder (as `npm run bench` does), records a CPU profile of the app's
// isolate through wrangler's inspector while autocannon loads each page (10 connections, 5 s), writes the
// profiles to bench/results/profiles/ (written by this script) (open them in Chrome DevTools' Performance panel) and prints the functions
// that cost the most, in microseconds per request, each page beside the bare page with a session.
//
// What a profile does not show: work outside the app's isolate. Local D1 and R2 run in other isolates of the same
// workerd process, and the HTTP and stream plumbing is C++; CPU per request of the whole process (from /proc) is
// the figure for those (docs/performance.md).

const PORT = Number(process.env.BENCH_PORT ?? 5330);
const EMULATOR_PORT_BASE = Number(process.env.BENCH_EMULATOR_PORT_BASE ?? 4350);
const INSPECTOR_PORT = Number(process.env.BENCH_INSPECTOR_PORT ?? 9239);
const SECONDS = 5;
/**
 * The sampler's interval (µs). A sample taken after the thread was busy elsewhere (another isolate, C++ I/O)
 * carries that whole gap; gaps are counted up to twice the interval so they are not charged to whatever
 * JavaScript happened to be on the stack (uncapped, one page's writeChunk showed 0.6 ms a request, capped 0.06).
 */
const INTERVAL_US = 100;
const GAP_CAP_US = 2 * INTERVAL_US;

/** Self time per function, in µs per request, over a profile of `requests` requests. */
function selfTimes(profile: Profile, requests: number): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const out = new Map<string, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const frame = byId.get(profile.samples[i] as number)?.callFrame;
    if (!frame) continue;
    const file = frame.url.split("/").pop() ?? "";
    const key = `${frame.functionName || "(anonymous)"}${file ? ` ${file}` : ""}`;
    const us = Math.min(profile.timeDeltas[i + 1] ?? 0, GAP_CAP_US);
    out.set(key, (out.get(key) ?? 0) + us / requests);
  }
  return out;
}

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

async function main() {
  const stateDir = mkdtempSync(join(tmpdir(), "stagewise-profile-"));
  const stack = await startStack({
    port: PORT,
    emulatorPortBase: EMULATOR_PORT_BASE,
    persistDir: stateDir,
    build: process.env.SKIP_BUILD !== "1",
    logFile: join(stateDir, "wrangler.log"),
    quiet: true,
    requestLog: false,
    inspectorPort: INSPECTOR_PORT,
  });
  const outDir = join(ROOT, "bench", "results", "profiles");
  mkdirSync(outDir, { recursive: true });
  try {
    const user = await createFixtureUser(stack.url, { credits: 20 });
    const cookie = `sw_session=${user.sessionToken}`;
    const library = await createFixtureUser(stack.url, { credits: 20 });
    await seedPhotos({ baseUrl: stack.url, sessionToken: library.sessionToken as string }, 24, "Profile room");
    const pages: [string, string, Record<string, string>][] = [
      ["bare page", "/dev/bare", {}],
      ["bare page with a session", "/dev/bare", { Cookie: cookie }],
      ["/dashboard (empty)", "/dashboard", { Cookie: cookie }],
      ["/dashboard (24 photos)", "/dashboard", { Cookie: `sw_session=${library.sessionToken}` }],
    ];
    const session = await inspector(INSPECTOR_PORT);
    await session.send("Profiler.enable");
    await session.send("Profiler.setSamplingInterval", { interval: INTERVAL_US });
    const results: { name: string; self: Map<string, number>; rate: number }[] = [];
    for (const [name, path, headers] of pages) {
      await autocannon({ url: `${stack.url}${path}`, connections: 2, amount: 200, headers }); // warm up
      await session.send("Profiler.start");
      const load = await autocannon({ url: `${stack.url}${path}`, connections: 10, duration: SECONDS, headers });
      const { profile } = await session.send<{ profile: Profile }>("Profiler.stop");
      if (load.non2xx > 0 || load.errors > 0) throw new Error(`${path}: ${load.non2xx} non-2xx, ${load.errors} errors`);
      const file = join(outDir, `${name.replace(/[^a-z0-9]+/gi, "-").replace(/^-|-$/g, "")}.cpuprofile`);
      writeFileSync(file, JSON.stringify(profile));
      const self = selfTimes(profile, load.requests.total);
      results.push({ name, self, rate: load.requests.total / SECONDS });
      console.log(
        `\n${name}: ${load.requests.total} requests, ${Math.round(load.requests.total / SECONDS)}/s, ` +
          `p50 ${load.latency.p50} ms; JavaScript of the app's isolate ${Math.round(sum(self))} µs a request ` +
          `(idle and GC included); profile in ${file}`,
      );
      for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 12)) {
        console.log(`  ${v.toFixed(0).padStart(6)} µs  ${k}`);
      }
    }
    session.close();
    const base = results[1];
    if (base) {
      for (const r of results.slice(2)) {
        console.log(`\n${r.name} against ${base.name}: ${Math.round(sum(r.self) - sum(base.self))} µs a request more`);
        const keys = new Set([...r.self.keys(), ...base.self.keys()]);
        const rows = [...keys].map((k) => [k, (r.self.get(k) ?? 0) - (base.self.get(k) ?? 0)] as const);
        for (const [k, d] of rows.sort((a, b) => b[1] - a[1]).slice(0, 12)) {
          console.log(`  ${d >= 0 ? "+" : ""}${d.toFixed(0).padStart(5)} µs  ${k}`);
        }
      }
    }
  } finally {
    await stack.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

await main();
