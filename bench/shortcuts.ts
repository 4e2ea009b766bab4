import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { startStack } from "../scripts/stack.ts";
import { createFixtureUser } from "../test/e2e/fixtures.ts";
import { seedPhotos } from "../test/e2e/support/library-bytes.ts";
import { median } from "./module.ts";

// Do the user object's performance shortcuts earn their place? (issue 37 part 4, workers/objects/user/shortcuts.ts,
// docs/decisions/0154-the-user-objects-parts.md). For each shortcut, the same jobs run with all shortcuts on and
// with that one off (DISABLE_SHORTCUTS), with production-like storage latency injected into the object
// (workers/lib/injected-latency.ts): locally D1 and R2 are files on this machine, so a saved round trip would
// otherwise look worthless. Configurations alternate round by round so each sees the same moments of the machine.
// A shortcut whose gain is not larger than the all-on configuration's own spread over the rounds has not earned it.
// `npm run bench:shortcuts` writes bench/results/report-shortcuts.{md,json}.

const D1_MS = Number(process.env.INJECT_D1_MS ?? 20);
const R2_MS = Number(process.env.INJECT_R2_MS ?? 30);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const JOBS = Number(process.env.JOBS ?? 10);
const PORT = Number(process.env.BENCH_PORT ?? 5491);
const EMULATOR_PORT_BASE = Number(process.env.BENCH_EMULATOR_PORT_BASE ?? 4490);

const ROOT = join(import.meta.dirname, "..");
const names = [
  ...readFileSync(join(ROOT, "workers/objects/user/shortcuts.ts"), "utf8").matchAll(/^ {2}"([a-z-]+)":/gm),
].map((m) => m[1] as string);
const configs = ["(all on)", ...names];
if (names.length === 0) {
  console.log("No shortcut is named in workers/objects/user/shortcuts.ts: nothing to judge.");
  process.exit(0);
}

/** One stack with `off` disabled: JOBS single stagings one after another, each timed from request to its end. */
async function runConfig(off: string, build: boolean): Promise<number[]> {
  const stateDir = mkdtempSync(join(tmpdir(), "stagewise-bench-shortcuts-"));
  const stack = await startStack({
    port: PORT,
    emulatorPortBase: EMULATOR_PORT_BASE,
    persistDir: stateDir,
    build,
    logFile: join(stateDir, "wrangler.log"),
    quiet: true,
    requestLog: false,
    vars: {
      INJECT_D1_MS: String(D1_MS),
      INJECT_R2_MS: String(R2_MS),
      ...(off === "(all on)" ? {} : { DISABLE_SHORTCUTS: off }),
    },
  });
  try {
    const provider = `http://127.0.0.1:${stack.ports.provider}`;
    await fetch(`${provider}/_emulator/mode`, { method: "POST", body: JSON.stringify({ mode: "ok", latencyMs: 0 }) });
    const user = await createFixtureUser(stack.url, { credits: JOBS + 1 });
    if (!user.sessionToken) throw new Error("bench: fixture user came without a session");
    const photos = await seedPhotos({ baseUrl: stack.url, sessionToken: user.sessionToken }, JOBS + 1, "Shortcut");
    const headers = {
      Cookie: `sw_session=${user.sessionToken}`,
      "Content-Type": "application/json",
      Origin: stack.url,
    };
    const times: number[] = [];
    for (const [i, photoId] of photos.entries()) {
      const started = performance.now();
      const res = await fetch(`${stack.url}/api/photos/${photoId}/jobs`, {
        method: "POST",
        headers,
        body: JSON.stringify({ kind: "stage", roomType: "bedroom", designStyle: "modern" }),
      });
      if (res.status !== 202) throw new Error(`bench: job not started (${res.status} ${await res.text()})`);
      const { job } = (await res.json()) as { job: { id: string } };
      let status = "queued";
      while (status !== "succeeded" && status !== "failed") {
        const polled = await fetch(`${stack.url}/api/jobs/${job.id}?wait=20`, { headers });
        status = ((await polled.json()) as { job: { status: string } }).job.status;
      }
      if (status !== "succeeded") throw new Error(`bench: a job ended ${status}`);
      // The first job warms the object and the emulators; it is not counted.
      if (i > 0) times.push(performance.now() - started);
    }
    return times;
  } finally {
    await stack.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

const startedAt = Date.now();
const load = loadavg();
const perRound = new Map<string, number[]>(configs.map((c) => [c, []]));
const allTimes = new Map<string, number[]>(configs.map((c) => [c, []]));
let built = process.env.SKIP_BUILD === "1";
for (let round = 0; round < ROUNDS; round++) {
  // Each round starts at another configuration, so none is always first after a quiet pause.
  const order = configs.map((_, i) => configs[(i + round) % configs.length] as string);
  for (const config of order) {
    const times = await runConfig(config, !built);
    built = true;
    perRound.get(config)?.push(median(times));
    allTimes.get(config)?.push(...times);
    console.log(`round ${round + 1} ${config}: median ${median(times).toFixed(0)} ms over ${times.length} jobs`);
  }
}

const on = perRound.get("(all on)") as number[];
const onMedian = median(on);
const spread = Math.max(...on) - Math.min(...on);
const rows = names.map((name) => {
  const off = perRound.get(name) as number[];
  const gain = median(off) - onMedian;
  return {
    name,
    offMedian: median(off),
    offMin: Math.min(...off),
    offMax: Math.max(...off),
    gain,
    earned: gain > spread,
  };
});
const json = {
  generatedAt: new Date().toISOString(),
  durationSeconds: Math.round((Date.now() - startedAt) / 1000),
  loadAtStart: { loadavg: load, cores: cpus().length },
  injected: { d1Ms: D1_MS, r2Ms: R2_MS },
  rounds: ROUNDS,
  jobsPerRound: JOBS,
  allOn: { median: onMedian, min: Math.min(...on), max: Math.max(...on), spread },
  shortcuts: rows,
  perRound: Object.fromEntries(perRound),
};
const ms = (n: number) => `${n.toFixed(0)} ms`;
const md = [
  "# The user object's shortcuts, with production-like storage latency",
  "",
  `Generated ${json.generatedAt} by \`npm run bench:shortcuts\` in ${json.durationSeconds} s; load at start ${load.map((l) => l.toFixed(2)).join(" / ")} on ${cpus().length} cores.`,
  `Injected into the user's object: ${D1_MS} ms per D1 round trip, ${R2_MS} ms per R2 call. ${ROUNDS} rounds, each configuration on a fresh stack, ${JOBS} single stagings one after another (provider emulator answering at once), timed from the request to the long poll's end; the value per round is the median job.`,
  "",
  `All shortcuts on: ${ms(onMedian)} (rounds ${on.map(ms).join(", ")}; spread ${ms(spread)}).`,
  "",
  "| Shortcut off | median of rounds | rounds min-max | gain of the shortcut | earned (gain > spread) |",
  "| --- | ---: | ---: | ---: | --- |",
  ...rows.map(
    (r) =>
      `| ${r.name} | ${ms(r.offMedian)} | ${ms(r.offMin)}-${ms(r.offMax)} | ${ms(r.gain)} | ${r.earned ? "yes" : "no"} |`,
  ),
  "",
].join("\n");
writeFileSync(join(ROOT, "bench/results/report-shortcuts.json"), `${JSON.stringify(json, null, 2)}\n`);
writeFileSync(join(ROOT, "bench/results/report-shortcuts.md"), md);
console.log(md);
