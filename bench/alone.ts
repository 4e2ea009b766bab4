import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startStack } from "../scripts/stack.ts";
import type { BenchStack } from "./module.ts";
import { type Figure, judge } from "./report.ts";

/**
 * Runs one measurement on its own stack (`npm run bench:jobs`, `bench:batch`, `bench:api`): the production build
 * with its emulators on the given ports and a fresh state folder, removed afterwards; prints each figure judged.
 */
export async function runAlone(
  name: string,
  ports: { port: number; emulatorPortBase: number },
  measure: (stack: BenchStack) => Promise<Figure[]>,
): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), `stagewise-bench-${name}-`));
  const stack = await startStack({
    port: Number(process.env.BENCH_PORT ?? ports.port),
    emulatorPortBase: Number(process.env.BENCH_EMULATOR_PORT_BASE ?? ports.emulatorPortBase),
    persistDir: stateDir,
    build: process.env.SKIP_BUILD !== "1",
    logFile: join(stateDir, "wrangler.log"),
    quiet: true,
    requestLog: false,
  });
  try {
    for (const f of (await measure(stack)).map(judge)) {
      const budget = f.budget === undefined ? "" : ` (budget ${f.op} ${f.budget}${f.pass ? "" : ", OVER"})`;
      console.log(`${f.group}: ${f.name} = ${f.value} ${f.unit}${budget}`);
    }
  } finally {
    await stack.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
