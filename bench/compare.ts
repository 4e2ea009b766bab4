import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT, type RunningStack, type StackOptions, startStack } from "../scripts/stack.ts";
import { createFixtureUser } from "../test/e2e/fixtures.ts";
import { compareFigures, figureText, judgement, ratioText, renderComparison, type Turn } from "./compared.ts";
import { applyRatios, type BenchContext, type BenchModule, mergeRuns, mergeSamples } from "./module.ts";
import { measureWithRetry, untilQuiet } from "./quiet.ts";
import { type Figure, judge } from "./report.ts";
import { prepareRevision, workingTreeName } from "./revision.ts";

// `npm run bench -- --against <revision>` (docs/decisions/0225-bench-against-a-revision.md): the chosen modules
// (BENCH_ONLY, by default credits,staging,batch) run on that revision and on the working tree, on this machine,
// in turns: each round measures both, the revision first in odd rounds, never both at once. Both sides run this
// tree's bench code; each side's stack is started by its own scripts/stack.ts from its own worktree (the revision's
// in a kept worktree under the temp folder, bench/revision.ts), so each runs its own app, emulators and migrations.
// Every figure is given for both with the ratio of their medians and the spread of the rounds' own ratios; the
// figures of VS_BASELINE (bench/report.ts) are judged on that ratio, so a slowdown fails on any machine. The machine's
// load (the 1-minute average) is recorded at the start and end of every turn. Writes
// bench/results/report-against-<revision>[-<modules>].{md,json} and exits 1 when a judged ratio is over.

/**
 * The order of the sides' turns for one call of a round (ADR 0334): the revision first in rounds 1, 3, 5…, the
 * working tree in rounds 2, 4…; within a round a sampled module's calls alternate ABBA from that round's first side.
 */
export function turnOrder<T>(sides: readonly T[], round: number, sample: number): T[] {
  return (round + sample) % 2 === 0 ? [...sides] : [...sides].reverse();
}

/** Modules a comparison cannot run: the object module profiles the working tree's inspector port only. */
const NOT_COMPARED = new Set(["object"]);
const DEFAULT_MODULES = ["credits", "staging", "batch"];

export interface Args {
  against?: string;
  fresh: boolean;
  rounds?: number;
}

export function parseArgs(argv: string[]): Args {
  const args: Args = { fresh: false };
  const envRounds = process.env.BENCH_RUNS ? Number(process.env.BENCH_RUNS) : undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--against") args.against = argv[++i];
    else if (a.startsWith("--against=")) args.against = a.slice("--against=".length);
    else if (a === "--rounds") args.rounds = Number(argv[++i]);
    else if (a.startsWith("--rounds=")) args.rounds = Number(a.slice("--rounds=".length));
    else if (a === "--fresh") args.fresh = true;
    else throw new Error(`bench: unknown argument ${a} (known: --against <revision>, --rounds <n>, --fresh)`);
  }
  if (args.rounds === undefined && envRounds !== undefined) args.rounds = envRounds;
  if (args.against === "") throw new Error("bench: --against needs a revision");
  if (args.rounds !== undefined && !(Number.isInteger(args.rounds) && args.rounds >= 1))
    throw new Error("bench: --rounds takes a whole number of at least 1");
  return args;
}

interface Side {
  name: string;
  stack: RunningStack;
  ctx: BenchContext;
  modules: Record<string, BenchModule>;
  runs: Record<string, Figure[][]>;
}

function contextFor(stack: RunningStack): BenchContext {
  const fixtureToken = async (credits = 20) => {
    const user = await createFixtureUser(stack.url, { credits });
    if (!user.sessionToken) throw new Error("fixture user came without a session");
    return user.sessionToken;
  };
  return { stack, fixtureToken, fixtureSession: async (credits) => `sw_session=${await fixtureToken(credits)}` };
}

export async function compare(
  against: string,
  opts: { fresh: boolean; rounds?: number; makeModules: (rounds?: number) => Record<string, BenchModule> },
): Promise<void> {
  const started = Date.now();
  const only = process.env.BENCH_ONLY?.split(",").map((s) => s.trim()) ?? DEFAULT_MODULES;
  const refused = only.filter((m) => NOT_COMPARED.has(m));
  if (refused.length > 0) throw new Error(`bench: --against cannot run ${refused.join(", ")} (bench/compare.ts)`);
  const names = Object.keys(opts.makeModules()).filter((n) => only.includes(n));
  if (names.length === 0) throw new Error(`BENCH_ONLY named no module: ${only.join(", ")}`);
  const rounds = opts.rounds ?? 3;
  console.log(`Comparing ${names.join(", ")} against ${against}, ${rounds} rounds, in turns.`);
  console.log(`Machine load at the start: ${loadavg()[0]!.toFixed(2)} (1 min) on ${availableParallelism()} cores.`);
  const rev = await prepareRevision(against, { fresh: opts.fresh });
  const baseName = `${rev.sha.slice(0, 7)} (${against})`;
  const workName = workingTreeName();

  const stateDirs: string[] = [];
  const stacks: RunningStack[] = [];
  const startSide = async (
    start: (o: StackOptions) => Promise<RunningStack>,
    port: number,
    emulatorPortBase: number,
    build: boolean,
  ) => {
    const persistDir = mkdtempSync(join(tmpdir(), "stagewise-bench-"));
    stateDirs.push(persistDir);
    const stack = await start({
      port,
      emulatorPortBase,
      persistDir,
      build,
      logFile: join(persistDir, "wrangler.log"),
      quiet: true,
      requestLog: false,
    });
    stacks.push(stack);
    return stack;
  };
  const sides: Side[] = [];
  const turns: Turn[] = [];
  try {
    // The revision's own stack script, from its own worktree: its ROOT is that worktree (its build, its wrangler).
    const theirs = (await import(pathToFileURL(join(rev.root, "scripts", "stack.ts")).href)) as {
      startStack: (o: StackOptions) => Promise<RunningStack>;
    };
    console.log(`Starting ${baseName} from ${rev.root}…`);
    const baseStack = await startSide(
      theirs.startStack,
      Number(process.env.BENCH_AGAINST_PORT ?? 5290),
      Number(process.env.BENCH_AGAINST_EMULATOR_PORT_BASE ?? 4190),
      false,
    );
    console.log(`Starting the ${workName}…`);
    const workStack = await startSide(
      startStack,
      Number(process.env.BENCH_PORT ?? 5190),
      Number(process.env.BENCH_EMULATOR_PORT_BASE ?? 4090),
      process.env.SKIP_BUILD !== "1",
    );
    for (const [name, stack] of [
      [baseName, baseStack],
      [workName, workStack],
    ] as const) {
      sides.push({ name, stack, ctx: contextFor(stack), modules: opts.makeModules(rounds), runs: {} });
    }
    for (const module of names) {
      console.log(`${sides[0]!.modules[module]!.title} [${module}, ${rounds} rounds, each side in turn]…`);
      const broken = new Map<Side, string>();
      for (const side of sides) {
        side.runs[module] = [];
        await side.modules[module]!.setup?.(side.ctx).catch((err: unknown) => {
          broken.set(side, err instanceof Error ? err.message : String(err));
        });
      }
      // A sampled module's calls alternate between the sides within a round, ABBA (bench/module.ts `samples`);
      // any other module's round is one turn per side. Which side goes first alternates from round to round too:
      // a fixed order would put any effect of going second on one side only, in every round (ADR 0334).
      const samples = Math.max(1, sides[0]!.modules[module]!.samples ?? 1);
      for (let round = 0; round < rounds; round++) {
        const calls = new Map<Side, Figure[][]>(sides.map((side) => [side, []]));
        const turnOf = new Map<Side, Turn & { ms: number }>();
        for (let sample = 0; sample < samples; sample++) {
          for (const side of turnOrder(sides, round, sample)) {
            if (broken.has(side)) continue;
            await untilQuiet();
            const loadStart = loadavg()[0]!;
            const t = Date.now();
            try {
              calls.get(side)!.push(await measureWithRetry(side.modules[module]!, side.ctx, round));
            } catch (err) {
              // One side that cannot measure a module loses that module's figures, not the comparison.
              broken.set(side, err instanceof Error ? err.message : String(err));
              console.error(`  ${side.name} could not measure ${module}: ${broken.get(side)}`);
              continue;
            }
            // A side's turn in a round spans its calls: the first one's load at the start, the last one's at the end.
            const turn = turnOf.get(side) ?? {
              side: side.name,
              module,
              round,
              loadStart,
              loadEnd: 0,
              seconds: 0,
              ms: 0,
            };
            turn.ms += Date.now() - t;
            turn.loadEnd = loadavg()[0]!;
            turnOf.set(side, turn);
          }
        }
        for (const side of sides) {
          const timed = turnOf.get(side);
          if (broken.has(side) || !timed) continue;
          const made = calls.get(side)!;
          side.runs[module]!.push(made.length === 1 ? made[0]! : mergeSamples(made));
          const { ms, ...turn } = timed;
          turn.seconds = Math.round(ms / 100) / 10;
          turns.push(turn);
          const sampled = samples > 1 ? `, ${samples} samples alternated` : "";
          console.log(
            `  round ${round + 1}, ${side.name}: ${turn.seconds} s${sampled}, load ${turn.loadStart.toFixed(2)} → ${turn.loadEnd.toFixed(2)}`,
          );
        }
      }
      for (const [side, message] of broken) {
        side.runs[module] = [
          [{ group: "Not measured", name: `${module} on ${side.name}: ${message}`, value: 0, unit: "", pass: false }],
        ];
      }
    }
  } finally {
    for (const stack of stacks) await stack.stop().catch(() => undefined);
    for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
  }

  const merged = sides.map((s) => applyRatios(Object.values(s.runs).flatMap((runs) => mergeRuns(runs))).map(judge));
  const rows = compareFigures(merged[0]!, merged[1]!);
  for (const row of rows) {
    console.log(
      `  ${row.name}: ${figureText(row.base)} | ${figureText(row.work)} | ${ratioText(row)}${row.rule ? ` ${judgement(row)}` : ""}`,
    );
  }
  const report = {
    generatedAt: new Date().toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    against: { asked: against, sha: rev.sha, subject: rev.subject, prerendered: rev.prerendered },
    workingTree: workName,
    modules: names,
    rounds,
    cores: availableParallelism(),
    turns,
    rows,
  };
  const out = join(ROOT, "bench", "results");
  mkdirSync(out, { recursive: true });
  const file = `report-against-${rev.sha.slice(0, 7)}${process.env.BENCH_ONLY ? `-${names.join("+")}` : ""}`;
  writeFileSync(join(out, `${file}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(out, `${file}.md`), renderComparison(report));
  const over = rows.filter((r) => r.pass === false);
  const invalid = rows.filter((r) => r.work?.invalid || r.base?.invalid || r.group === "Not measured");
  console.log(`\nWrote bench/results/${file}.md and .json in ${report.durationSeconds} s.`);
  for (const r of over)
    console.log(`  OVER: ${r.name}: ${ratioText(r)} of ${baseName} (budget ${r.rule!.op} ${r.rule!.ratio}x)`);
  for (const r of invalid) console.error(`  INVALID: ${r.name} (${r.work?.invalid ?? r.base?.invalid})`);
  if (over.length > 0 || invalid.length > 0) process.exitCode = 1;
}
