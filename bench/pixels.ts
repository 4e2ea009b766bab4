import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../scripts/stack.ts";
import { makeJpeg } from "../test/fixtures/images.ts";
import { inspector, type Profile } from "./inspector.ts";
import { MIN_RUNS, median, mergeRuns, percentile } from "./module.ts";
import { BUDGETS, type Figure, judge, renderMarkdown } from "./report.ts";

// `npm run bench:pixels`: where a staged result's pixel work costs the user's object its thread
// (docs/decisions/0161-pixel-work-off-the-object.md). Runs bench/pixels/worker.ts under `wrangler dev` (the same
// runtime and the same Images stand-in `npm start` uses: no network) with a 2304 x 1536 result held in one Durable
// Object, and measures each way of making its thumbnail, its analysis image and a burned-in label:
//
// - the object's busy time per operation: the time the Worker's isolate (the object's JavaScript and the native work
//   it does under its lock) was not idle, from a V8 CPU profile through wrangler's inspector, over a batch of
//   operations. workerd's clocks stand still while JavaScript runs, so it is read from outside. Beside it, from
//   /proc/<pid>/task/<tid>/schedstat in a pass without the profiler: the CPU of the busiest workerd thread, which
//   also runs the stand-in's own isolate and the loopback to Node (work production does on Cloudflare's side);
// - the second request's wait: an operation starts, 20 ms later a ping goes to the same object; the ping's answer
//   time, p50 and p95 (a ping alone is the floor). One operation models production's shape: the bytes go to a
//   service in the bench's own process that only waits 50 ms and answers;
// - the Node process's CPU per operation: where miniflare's stand-in runs sharp (one libvips thread here, so that it
//   leaves a core to workerd). Production has no such cost on our side; it shows that the work happened, and where.
//
// `BENCH_OPS=thumb-binding,gray-binding` measures some operations only and prints them without writing the report.
// Each figure is the median of 3 runs (bench/module.ts) and written to bench/results/report-pixels.{md,json}, with the
// machine's load at the start and the end. Every request targets 127.0.0.1 and is bounded in count.

const PORT = Number(process.env.BENCH_PORT ?? 5398);
const INSPECTOR_PORT = Number(process.env.BENCH_INSPECTOR_PORT ?? 4426);
const BASE = `http://127.0.0.1:${PORT}`;
const RESULT_W = 2304;
const RESULT_H = 1536;
const WAIT_ROUNDS = 15;
const PING_DELAY_MS = 20;

/** Each operation: how many requests and operations per request make its CPU batch (cheap ones are looped). */
const OPS = [
  { op: "noop", label: "a request that does nothing (the floor)", requests: 5, times: 1 },
  { op: "bytes-roundtrip", label: "the 795 KB result into a stream and back, no service", requests: 5, times: 8 },
  {
    op: "thumb-binding-tiny",
    label: "thumbnail of a 64 x 48 JPEG, binding (a call's fixed cost)",
    requests: 5,
    times: 8,
  },
  { op: "thumb-js", label: "thumbnail, jpeg-js in the object (today)", requests: 3, times: 1 },
  { op: "thumb-binding", label: "thumbnail, binding (images.ts)", requests: 5, times: 8 },
  { op: "thumb-binding-blob", label: "thumbnail, binding with a Blob's stream as input", requests: 5, times: 8 },
  {
    op: "thumb-remote-model",
    label: "the result sent to a service elsewhere that answers after 50 ms (production's shape)",
    requests: 5,
    times: 8,
  },
  {
    op: "thumb-self",
    label: "thumbnail, jpeg-js in the Worker via a service binding to itself",
    requests: 3,
    times: 1,
  },
  { op: "gray-js", label: "analysis 384 px gray, jpeg-js in the object", requests: 3, times: 1 },
  { op: "gray-binding", label: "analysis 384 px gray, binding PNG + decode here (images.ts)", requests: 5, times: 8 },
  { op: "gray-png-only", label: "analysis step 1: binding to a 384 px PNG", requests: 5, times: 8 },
  { op: "gray-decode-only", label: "analysis step 2 with fast-png (JS inflate) + luma", requests: 5, times: 20 },
  { op: "gray-decode-native", label: "analysis step 2, runtime inflate + luma (images.ts)", requests: 5, times: 20 },
  { op: "label-js", label: "label burned in, render.ts (today)", requests: 3, times: 1 },
  { op: "label-draw", label: "label burned in, binding draw() (the stand-in leaves it out)", requests: 5, times: 8 },
  { op: "label-here", label: "label burned in, local fallback (jpeg-js + fast-png)", requests: 3, times: 1 },
] as const;

/** The operations whose second-request wait is measured: the thumbnail each way. */
const WAIT_OPS = ["thumb-js", "thumb-binding", "thumb-remote-model", "thumb-self", "gray-binding"] as const;

const GROUP_BUSY = "Pixel work: the object's thread, per operation (2304 x 1536 result)";
const GROUP_WAIT = "Pixel work: a second request to the same object while a result is processed";
const GROUP_NODE = "Pixel work: the stand-in's work in wrangler's Node process (production: Cloudflare's)";
const GROUP_JOB = "Pixel work per staged job (thumbnail + analysis of result and source)";

function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(pid)]);
    } catch {
      // gone
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(root);
  return out;
}

/** CPU nanoseconds of each thread of `pid`, by thread id. */
function threadNs(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.set(tid, Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]));
    } catch {
      // a thread that ended
    }
  }
  return out;
}

interface Procs {
  /** wrangler dev runs two: its proxy and the Worker's runtime. Both are read; the busiest thread is the object's. */
  workerd: number[];
  node: number;
}

function findProcs(wrangler: ChildProcess): Procs {
  const all = descendants(wrangler.pid!);
  const workerd = all.filter((p) => readFileSync(`/proc/${p}/cmdline`, "utf8").includes("workerd"));
  if (workerd.length === 0) throw new Error("bench: no workerd under wrangler dev");
  // The Node process that runs miniflare (and the stand-in's sharp) is workerd's parent.
  const node = Number(readFileSync(`/proc/${workerd[0]}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
  return { workerd, node };
}

function workerdThreadNs(procs: Procs): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of procs.workerd) for (const [tid, ns] of threadNs(pid)) out.set(`${pid}/${tid}`, ns);
  return out;
}

async function startWorker(stateDir: string): Promise<{ child: ChildProcess; procs: Procs; stop(): Promise<void> }> {
  const config = join(stateDir, "wrangler.toml");
  writeFileSync(
    config,
    [
      'name = "stagewise-pixels-bench"',
      `main = "${join(ROOT, "bench/pixels/worker.ts")}"`,
      'compatibility_date = "2026-10-01"',
      'compatibility_flags = ["nodejs_compat"]',
      "[images]",
      'binding = "IMAGES"',
      "[[durable_objects.bindings]]",
      'name = "PIXELS"',
      'class_name = "PixelObject"',
      "[[migrations]]",
      'tag = "v1"',
      'new_sqlite_classes = ["PixelObject"]',
      "[[services]]",
      'binding = "SELF"',
      'service = "stagewise-pixels-bench"',
      "",
    ].join("\n"),
  );
  const child = spawn(
    join(ROOT, "node_modules", ".bin", "wrangler"),
    [
      "dev",
      "-c",
      config,
      "--port",
      String(PORT),
      "--ip",
      "127.0.0.1",
      "--inspector-port",
      String(INSPECTOR_PORT),
      "--persist-to",
      join(stateDir, "state"),
      "--show-interactive-dev-session=false",
    ],
    {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      // One libvips thread for the stand-in's sharp: in production the image work runs on Cloudflare's machines, not
      // on the two cores the object shares here. BENCH_VIPS_CONCURRENCY=0 lets sharp take every core.
      env: {
        ...process.env,
        WRANGLER_SEND_METRICS: "false",
        CI: "true",
        WRANGLER_LOG: "warn",
        VIPS_CONCURRENCY: process.env.BENCH_VIPS_CONCURRENCY ?? "1",
      },
    },
  );
  let log = "";
  child.stdout?.on("data", (d) => {
    log += d;
  });
  child.stderr?.on("data", (d) => {
    log += d;
  });
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited (${child.exitCode}):\n${log}`);
    try {
      const res = await fetch(`${BASE}/do/ping`);
      if (res.ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`wrangler dev did not answer within 60 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { child, procs: findProcs(child), stop };
}

/** The stand-in for a remote image service in `thumb-remote-model`: reads the body, waits 50 ms, answers 30 KB. */
const REMOTE_PORT = Number(process.env.BENCH_REMOTE_PORT ?? 4427);
function startRemoteModel(): Promise<Server> {
  const answer = Buffer.alloc(30 * 1024, 7);
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => setTimeout(() => res.end(answer), 50));
  });
  return new Promise((resolve) => server.listen(REMOTE_PORT, "127.0.0.1", () => resolve(server)));
}

async function call(op: string, times = 1): Promise<void> {
  const res = await fetch(`${BASE}/do/${op}?times=${times}&port=${REMOTE_PORT}`);
  if (!res.ok) throw new Error(`bench: ${op} answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

type Session = Awaited<ReturnType<typeof inspector>>;
/** The profiler's sampling interval (µs); a sample's gap counts up to twice that (as bench/profile.ts does). */
const INTERVAL_US = 100;

/** Time the Worker's isolate (the object's JavaScript and the native work it does under its lock) was not idle. */
function isolateBusyMs(profile: Profile): number {
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  let us = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    if (idle.has(profile.samples[i]!)) continue;
    us += Math.min(profile.timeDeltas[i + 1] ?? 0, 2 * INTERVAL_US);
  }
  return us / 1000;
}

/** CPU per operation: the busiest workerd thread, all of workerd, and wrangler's Node process (ms), and wall p50. */
async function cpuPerOp(procs: Procs, session: Session, op: string, requests: number, times: number) {
  await call(op, 1); // warm: code compiled, buffers allocated
  // Pass 1, no profiler (sampling every 100 µs costs the thread time of its own): CPU of the threads and wall time.
  const w0 = workerdThreadNs(procs);
  const n0 = threadNs(procs.node);
  const walls: number[] = [];
  for (let i = 0; i < requests; i++) {
    const t = performance.now();
    await call(op, times);
    walls.push((performance.now() - t) / times);
  }
  const w1 = workerdThreadNs(procs);
  const n1 = threadNs(procs.node);
  // Pass 2, the same batch under the profiler: the Worker's isolate alone (the thread also runs the stand-in's
  // own isolate and the request plumbing, which production does not put on the object's thread).
  await session.send("Profiler.start");
  for (let i = 0; i < requests; i++) await call(op, times);
  const { profile } = await session.send<{ profile: Profile }>("Profiler.stop");
  const deltas = [...w1].map(([tid, ns]) => ns - (w0.get(tid) ?? 0));
  const ops = requests * times;
  const ms = (ns: number) => Math.round((ns / 1e6 / ops) * 100) / 100;
  const top = topFunctions(profile, ops);
  return {
    isolate: Math.round((isolateBusyMs(profile) / ops) * 100) / 100,
    thread: ms(Math.max(...deltas)),
    workerd: ms(deltas.reduce((a, b) => a + b, 0)),
    // Per thread: a thread that ended between the two reads takes its time with it (never a negative sum).
    node: ms([...n1].reduce((sum, [tid, ns]) => sum + Math.max(0, ns - (n0.get(tid) ?? 0)), 0)),
    wall: Math.round(median(walls) * 10) / 10,
    top,
  };
}

/** The isolate's costliest functions (self time, ms per operation): what the binding's caller pays for. */
function topFunctions(profile: Profile, ops: number, n = 4): string {
  const byId = new Map(profile.nodes.map((x) => [x.id, x.callFrame]));
  const self = new Map<string, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const frame = byId.get(profile.samples[i]!);
    if (!frame || frame.functionName === "(idle)") continue;
    const key = `${frame.functionName || "(anonymous)"} ${frame.url.split("/").pop() ?? ""}`.trim();
    self.set(key, (self.get(key) ?? 0) + Math.min(profile.timeDeltas[i + 1] ?? 0, 2 * INTERVAL_US) / 1000 / ops);
  }
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join("; ");
}

/** A ping sent `PING_DELAY_MS` after `op` started on the same object: its answer time, each round. */
async function secondRequestWaits(op: string | null, rounds: number): Promise<number[]> {
  const waits: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const running = op ? call(op) : Promise.resolve();
    await new Promise((r) => setTimeout(r, PING_DELAY_MS));
    const t = performance.now();
    const res = await fetch(`${BASE}/do/ping`);
    await res.text();
    waits.push(performance.now() - t);
    await running;
  }
  return waits;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** `BENCH_OPS=thumb-binding,gray-binding` measures only those operations (a quick look; the job figure needs all). */
const ONLY = process.env.BENCH_OPS?.split(",").map((s) => s.trim());

async function measure(procs: Procs, session: Session): Promise<Figure[]> {
  const figures: Figure[] = [];
  const busy = new Map<string, number>();
  for (const { op, label, requests, times } of OPS.filter((o) => !ONLY || ONLY.includes(o.op))) {
    const c = await cpuPerOp(procs, session, op, requests, times);
    busy.set(op, c.isolate);
    figures.push(
      {
        group: GROUP_BUSY,
        name: `object's isolate: ${label}`,
        value: c.isolate,
        unit: "ms",
        baseline: `its workerd thread ${c.thread} ms, all of workerd ${c.workerd} ms, wall ${c.wall} ms`,
      },
      { group: GROUP_NODE, name: `Node process: ${label}`, value: c.node, unit: "ms" },
    );
    console.log(`  ${op}: isolate ${c.isolate} ms, thread ${c.thread} ms; top: ${c.top}`);
  }
  const floor = await secondRequestWaits(null, WAIT_ROUNDS);
  figures.push({
    group: GROUP_WAIT,
    name: "a ping alone (the floor), p95",
    value: round1(percentile(floor, 95)),
    unit: "ms",
    baseline: `p50 ${round1(median(floor))} ms`,
  });
  for (const op of WAIT_OPS.filter((o) => !ONLY || ONLY.includes(o))) {
    const waits = await secondRequestWaits(op, WAIT_ROUNDS);
    figures.push({
      group: GROUP_WAIT,
      name: `during ${OPS.find((o) => o.op === op)!.label}, p95`,
      value: round1(percentile(waits, 95)),
      unit: "ms",
      baseline: `p50 ${round1(median(waits))} ms`,
      ...BUDGETS.secondRequestWaitP95,
    });
  }
  // A staged job's pixel work once the structure check lands: the result's thumbnail and the analysis image of
  // the result and of its source.
  const job = (thumb: string, gray: string) => round1(busy.get(thumb)! + 2 * busy.get(gray)!);
  if (ONLY) return figures;
  figures.push(
    {
      group: GROUP_JOB,
      name: "the object's busy time, jpeg-js in the object",
      value: job("thumb-js", "gray-js"),
      unit: "ms",
      ...BUDGETS.objectBusyPerJob,
    },
    {
      group: GROUP_JOB,
      name: "the object's busy time, Images binding",
      value: job("thumb-binding", "gray-binding"),
      unit: "ms",
      ...BUDGETS.objectBusyPerJob,
    },
  );
  return figures;
}

async function main() {
  if (!existsSync("/proc")) throw new Error("bench:pixels reads CPU time from /proc (Linux only)");
  const loadStart = loadavg();
  console.log(`Machine load at the start: ${loadStart.map((n) => n.toFixed(2)).join(" / ")}`);
  const stateDir = mkdtempSync(join(tmpdir(), "stagewise-bench-pixels-"));
  const started = Date.now();
  const remote = await startRemoteModel();
  const worker = await startWorker(stateDir);
  console.log(`wrangler dev up (workerd ${worker.procs.workerd.join(", ")}, node ${worker.procs.node})`);
  const runs: Figure[][] = [];
  try {
    const result = makeJpeg(RESULT_W, RESULT_H, 85, 24, 7);
    const res = await fetch(`${BASE}/do/setup`, { method: "POST", body: result });
    if (!res.ok) throw new Error(`bench: setup answered ${res.status}: ${await res.text()}`);
    console.log(`result: ${RESULT_W}x${RESULT_H}, ${Math.round(result.byteLength / 1024)} KB;`, await res.json());
    const session = await inspector(INSPECTOR_PORT);
    await session.send("Profiler.enable");
    await session.send("Profiler.setSamplingInterval", { interval: INTERVAL_US });
    try {
      for (let run = 0; run < MIN_RUNS; run++) {
        console.log(`run ${run + 1}/${MIN_RUNS}…`);
        runs.push(await measure(worker.procs, session));
      }
    } finally {
      session.close();
    }
  } finally {
    await worker.stop();
    remote.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
  const figures = mergeRuns(runs).map(judge);
  const loadEnd = loadavg();
  for (const f of figures) {
    const budget = f.budget === undefined ? "" : ` (budget ${f.op} ${f.budget}${f.pass ? "" : ", OVER"})`;
    console.log(`${f.group}: ${f.name} = ${f.value} ${f.unit} [${f.min}–${f.max}]${budget}`);
  }
  console.log(`Machine load at the end: ${loadEnd.map((n) => n.toFixed(2)).join(" / ")}`);
  const report = {
    generatedAt: new Date().toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine: `${availableParallelism()} cores (CI kind); bench:pixels; load at the end ${loadEnd.map((n) => n.toFixed(2)).join(" / ")}`,
    loadAtStart: { loadavg: loadStart, cores: availableParallelism() },
    figures,
  };
  const out = join(ROOT, "bench", "results");
  mkdirSync(out, { recursive: true });
  if (ONLY) return; // a partial run is printed, not written over the report
  writeFileSync(join(out, "report-pixels.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(out, "report-pixels.md"), renderMarkdown(report));
  console.log("Wrote bench/results/report-pixels.md and .json");
}

await main();
