import { closeSync, existsSync, fsyncSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { RUN_DEADLINE_MS, withinDeadline } from "./deadline.ts";
import { type BenchContext, type BenchModule, mergeSamples, percentile } from "./module.ts";
import type { Figure } from "./report.ts";

// The runner's conditions (moved out of bench/run.ts): a quiet stack before each run, a retry for a flaky tool, and
// the state folder's sync time.

/** Each process's parent, from /proc (a process that ends meanwhile is left out). */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      // The parent is the second field after the command's closing parenthesis.
      out.set(Number(pid), Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/**
 * CPU time (clock ticks) used so far by the workerd processes this bench started (the stacks' runtimes and proxies,
 * both sides of a comparison): another session's tests on the same machine do not keep the bench waiting.
 */
function workerdTicks(): number | null {
  if (!existsSync("/proc")) return null;
  const parent = parents();
  const ours = (pid: number) => {
    for (let p = pid, hops = 0; p > 1 && hops < 32; p = parent.get(p) ?? 0, hops++) if (p === process.pid) return true;
    return false;
  };
  let ticks = 0;
  for (const pid of parent.keys()) {
    if (!ours(pid)) continue;
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("workerd")) continue;
      // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // A process that ended meanwhile.
    }
  }
  return ticks;
}

/**
 * Waits until the bench's stacks are idle (workerd under 5% of a core over half a second), at most 30 s: work a previous run
 * left behind (thumbnails made after a job's commit, alarms, a data export) is not counted in the next run's
 * figures. Says so when it had to wait, and when the stack never went quiet.
 */
export async function untilQuiet(): Promise<void> {
  const started = Date.now();
  const WINDOW_MS = 500;
  // Clock ticks per second on Linux.
  const HZ = 100;
  for (;;) {
    const before = workerdTicks();
    if (before === null) return;
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const used = (((workerdTicks() ?? before) - before) / HZ) * 1000;
    const waited = Date.now() - started;
    if (used / WINDOW_MS < 0.05) {
      if (waited > WINDOW_MS * 2) console.log(`  (waited ${(waited / 1000).toFixed(1)} s for the stack to go quiet)`);
      return;
    }
    if (waited > 30_000) {
      console.log("  (the stack did not go quiet within 30 s; measuring anyway)");
      return;
    }
  }
}

/** One run of a module; a run that fails is tried again twice (a flaky tool is not a figure). */
export async function measureWithRetry(mod: BenchModule, ctx: BenchContext, run: number): Promise<Figure[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await withinDeadline(mod.measure(ctx, run), RUN_DEADLINE_MS, `run ${run + 1}`);
    } catch (err) {
      if (attempt >= 3) throw err;
      console.error(`  run ${run + 1} failed (${err instanceof Error ? err.message : err}); trying again`);
    }
  }
}

/** One run of a module that takes `samples` (bench/module.ts): its calls one after another, each figure their median. */
export async function measureSampled(mod: BenchModule, ctx: BenchContext, run: number): Promise<Figure[]> {
  if (!mod.samples || mod.samples < 2) return measureWithRetry(mod, ctx, run);
  const calls: Figure[][] = [];
  for (let i = 0; i < mod.samples; i++) {
    await untilQuiet();
    calls.push(await measureWithRetry(mod, ctx, run));
  }
  return mergeSamples(calls);
}

/**
 * How long the state folder's disk takes to make a 4 KB append durable (write + fsync, 50 times). Local D1, R2 and
 * the objects sync on every commit (local D1 on every query, reads included), so the staging and reservation
 * figures follow this more than they follow our code (docs/performance.md, "wrangler's local trace store").
 */
export function syncLatency(dir: string, n = 50): { p50: number; p90: number } {
  const file = join(dir, "sync-probe");
  const fd = openSync(file, "w");
  const block = Buffer.alloc(4096, 1);
  const times: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      // Appended, as a WAL grows: the sync commits the file's new size too.
      writeSync(fd, block, 0, block.length, i * block.length);
      fsyncSync(fd);
      times.push(performance.now() - t);
    }
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
  const ms = (p: number) => Math.round(percentile(times, p) * 100) / 100;
  return { p50: ms(50), p90: ms(90) };
}
