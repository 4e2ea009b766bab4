import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, startStack } from "../scripts/stack.ts";
import { createFixtureUser } from "../test/e2e/fixtures.ts";
import { measureApiJobCreation } from "./api.ts";
import { measureApiPhotoUpload } from "./api-photo.ts";
import { batchModule } from "./batch.ts";
import { compare, parseArgs } from "./compare.ts";
import { guardFetch } from "./deadline.ts";
import { measureJobLatencies } from "./jobs.ts";
import { labelsModule } from "./labels.ts";
import { applyRatios, type BenchContext, type BenchModule, MIN_RUNS, mergeRuns } from "./module.ts";
import { OBJECT_INSPECTOR_PORT, objectModule } from "./object.ts";
import { whyOver } from "./over-budget.ts";
import { bundle, lighthouseModule, photosModule } from "./pages.ts";
import { measureSampled, syncLatency, untilQuiet } from "./quiet.ts";
import { BUDGETS, budgetText, type Figure, judge, renderMarkdown } from "./report.ts";
import { resultsModule } from "./results.ts";
import { ssrModule } from "./ssr.ts";
import { staging } from "./staging.ts";
import { structureModule } from "./structure.ts";

// `npm run bench`: starts the production build under local workerd with its
// emulators (the same way `npm start` does, on its own ports and a fresh state
// folder), runs every module of makeModules() at least 3 times, and writes
// bench/results/report.{md,json}: each figure the median of its runs with min
// and max beside it (docs/decisions/0134-bench-reports-its-spread.md). Every
// load test targets 127.0.0.1 and is bounded in count and time.
// `BENCH_ONLY=photos,bundle npm run bench` runs only the named modules.
// `npm run bench -- --against <revision>` runs them on that revision and on the working tree in turns and
// compares (bench/compare.ts, docs/decisions/0225-bench-against-a-revision.md). `--rounds N` (or BENCH_RUNS)
// sets the runs of every module: fewer than 3 only to try the machinery, never for a figure to keep.

/** One reservation run of `users` users, `perUser` each, checked: the ledger never goes negative nor loses one. */
async function reservations(stack: BenchContext["stack"], users: number, perUser: number): Promise<number> {
  const res = await fetch(`${stack.url}/api/dev/bench/reservations`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ users, perUser }),
  });
  const r = (await res.json()) as { attempts: number; succeeded: number; ms: number; negative: boolean };
  if (r.negative || r.succeeded !== users * perUser)
    throw new Error(`reservation bench broke the ledger: ${JSON.stringify(r)}`);
  return (r.attempts / r.ms) * 1000;
}

const RESERVATION_RUNS = [
  [1, 200],
  [100, 10],
] as const;

export const credits: BenchModule = {
  title: "Credit reservations through the users' Durable Objects",
  // One sample of 1 user lasts a fraction of a second: the disk's slow swings moved a run's figure, and rounds against
  // the same revision disagreed (docs/performance.md, "Reservations: sampled, and alternated with the revision").
  samples: 15,
  // The side's first objects and code warm up in a run that is not kept.
  async setup({ stack }) {
    for (const [users, perUser] of RESERVATION_RUNS) await reservations(stack, users, perUser);
  },
  async measure({ stack }) {
    const out: Figure[] = [];
    for (const [users, perUser] of RESERVATION_RUNS) {
      out.push({
        group: "Credits",
        name: `reservations/s, ${users} user${users > 1 ? "s" : ""}`,
        value: Math.round(await reservations(stack, users, perUser)),
        unit: "res/s",
        ...BUDGETS.reservations(users),
        nonZero: true,
      });
    }
    return out;
  },
};

const jobs: BenchModule = {
  title:
    "Jobs at provider latencies from 1 s to 119 s, all asked for at once, each judged from its own start (about four minutes a run)",
  measure: ({ stack }) => measureJobLatencies(stack),
};

const api: BenchModule = {
  title: "Public API: job creation through /api/v1 against the page's own call, and a 24-megapixel photo upload",
  measure: async ({ stack }) => [
    ...(await measureApiJobCreation(stack)),
    ...(await measureApiPhotoUpload(stack, OBJECT_INSPECTOR_PORT)),
  ],
};

/**
 * Everything `npm run bench` measures, in order, each a fresh instance (a comparison runs one set per side, and a
 * module keeps its fixtures in its own closure). Add a module here (see bench/module.ts).
 */
export function makeModules(rounds?: number): Record<string, BenchModule> {
  return {
    ssr: ssrModule(),
    credits,
    photos: photosModule(),
    jobs,
    batch: batchModule(rounds ?? 3),
    api,
    staging,
    results: resultsModule(),
    bundle,
    "lighthouse-home": lighthouseModule("/", "/", 5, false),
    "lighthouse-dashboard": lighthouseModule("/dashboard", "/dashboard", MIN_RUNS, true),
    structure: structureModule(),
    object: objectModule(),
    labels: labelsModule(),
  };
}

async function main() {
  guardFetch();
  const args = parseArgs(process.argv.slice(2));
  if (args.against) {
    await compare(args.against, { fresh: args.fresh, rounds: args.rounds, makeModules });
    return;
  }
  const started = Date.now();
  const loadAtStart = { loadavg: loadavg(), cores: availableParallelism() };
  console.log(
    `Machine load at the start: ${loadAtStart.loadavg.map((n) => n.toFixed(2)).join(" / ")} on ${loadAtStart.cores} cores.`,
  );
  const only = process.env.BENCH_ONLY?.split(",").map((s) => s.trim());
  // BENCH_SKIP leaves modules out but still writes report.md (it says which were skipped).
  const skip = process.env.BENCH_SKIP?.split(",").map((s) => s.trim()) ?? [];
  const chosen = Object.entries(makeModules(args.rounds)).filter(
    ([name]) => (!only || only.includes(name)) && !skip.includes(name),
  );
  if (chosen.length === 0)
    throw new Error(`BENCH_ONLY named no module; modules: ${Object.keys(makeModules()).join(", ")}`);

  const stateDir = mkdtempSync(join(tmpdir(), "stagewise-bench-"));
  // wrangler runs its local trace store unless X_LOCAL_OBSERVABILITY=false: every request pays for it.
  const stackAtStart = {
    syncMs: syncLatency(stateDir),
    traceStore: process.env.X_LOCAL_OBSERVABILITY?.toLowerCase() === "false" ? ("off" as const) : ("on" as const),
  };
  console.log(
    `State folder: a 4 KB append + fsync takes ${stackAtStart.syncMs.p50} ms (p50), ${stackAtStart.syncMs.p90} ms (p90); wrangler's local trace store ${stackAtStart.traceStore}.`,
  );
  // A module that needs no stack (the structure check's figures) gets none: building and starting it costs minutes.
  const stackless = chosen.every(([, mod]) => mod.stackless);
  if (!stackless) console.log("Starting the production build under local workerd…");
  const stack: Started = stackless
    ? noStack()
    : await startStack({
        port: Number(process.env.BENCH_PORT ?? 5190),
        emulatorPortBase: Number(process.env.BENCH_EMULATOR_PORT_BASE ?? 4090),
        persistDir: stateDir,
        build: process.env.SKIP_BUILD !== "1",
        logFile: join(stateDir, "wrangler.log"),
        quiet: true,
        // No line per request from wrangler's Node process: harness work production does not have (docs/performance.md).
        requestLog: false,
        // The app's inspector, for the object module's CPU profile (bench/object.ts).
        inspectorPort: OBJECT_INSPECTOR_PORT,
      });
  const fixtureToken = async (credits = 20) => {
    const user = await createFixtureUser(stack.url, { credits });
    if (!user.sessionToken) throw new Error("fixture user came without a session");
    return user.sessionToken;
  };
  const ctx: BenchContext = {
    stack,
    fixtureToken,
    fixtureSession: async (credits) => `sw_session=${await fixtureToken(credits)}`,
  };

  let figures: Figure[] = [];
  try {
    for (const [name, mod] of chosen) {
      const runs = args.rounds ?? Math.max(MIN_RUNS, mod.runs ?? MIN_RUNS);
      console.log(`${mod.title} [${name}, ${runs} runs]…`);
      try {
        await mod.setup?.(ctx);
        const all: Figure[][] = [];
        for (let run = 0; run < runs; run++) {
          await untilQuiet();
          all.push(await measureSampled(mod, ctx, run));
        }
        for (const f of mergeRuns(all)) figures.push(f);
      } catch (err) {
        // One module that cannot measure (e.g. Lighthouse's NO_NAVSTART) loses its own figures, not the report's.
        const message = err instanceof Error ? err.message : String(err);
        console.error(`  ${name} could not be measured: ${message}`);
        figures.push({ group: "Not measured", name: `${name}: ${message}`, value: 0, unit: "", pass: false });
      }
    }
  } finally {
    await stack.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
  figures = applyRatios(figures).map(judge);
  for (const f of figures) {
    const budget = budgetText(f) ? ` (budget ${budgetText(f)})` : "";
    console.log(`  ${f.name}: ${f.value}${f.unit ? ` ${f.unit}` : ""} [${f.min}–${f.max}]${budget}`);
  }

  const report = {
    generatedAt: new Date().toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine: `${loadAtStart.cores} cores (CI kind)${only ? `; only ${only.join(", ")}` : ""}${skip.length ? `; skipped ${skip.join(", ")}` : ""}`,
    loadAtStart,
    stackAtStart,
    figures,
  };
  const out = join(ROOT, "bench", "results");
  mkdirSync(out, { recursive: true });
  const suffix = only ? `-${only.join("+")}` : "";
  writeFileSync(join(out, `report${suffix}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(out, `report${suffix}.md`), renderMarkdown(report));
  const invalid = figures.filter((f) => f.invalid);
  const over = figures.filter((f) => f.pass === false && !f.invalid);
  console.log(
    `\nWrote bench/results/report${suffix}.md and .json in ${report.durationSeconds} s. ${over.length} figure(s) over budget.`,
  );
  for (const f of over) {
    const ratio = f.ratioBudget !== undefined ? `, ${f.ratio}x ${f.relativeTo?.label ?? ""}`.trimEnd() : "";
    const why = whyOver(f.name) ?? "NO REASON WRITTEN (bench/over-budget.ts)";
    console.log(`  OVER: ${f.name} = ${f.value} ${f.unit}${ratio} (budget ${budgetText(f)}): ${why}`);
  }
  // A figure that is no measurement fails the run (issue 44): a NaN or a zero count is a broken bench, not a result.
  for (const f of invalid) console.error(`  INVALID: ${f.name} = ${f.value} ${f.unit} (${f.invalid})`);
  if (invalid.length > 0) {
    console.error(`${invalid.length} figure(s) are no measurement: the run failed.`);
    process.exitCode = 1;
  }
}

await main();

/** The stack of a run whose modules need none: anything that reaches for it is a module that should not be stackless. */
function noStack(): Started {
  return new Proxy({} as Started, {
    get(_, key) {
      if (key === "stop") return async () => {};
      throw new Error(`a stackless bench module used the stack (${String(key)})`);
    },
  });
}

type Started = Awaited<ReturnType<typeof startStack>>;
