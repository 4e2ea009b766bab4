import type { Figure } from "./report.ts";

// What `npm run bench` runs (docs/decisions/0134-bench-reports-its-spread.md):
// a list of measurement modules. Each module measures once per call and
// returns its figures; the runner calls it `runs` times (3 at least) and
// reports every figure as the median of those runs with the min and max beside
// it, judged on the median. A figure that is a ratio to another names it in
// `relativeTo`. When each run measured the two side by side and says so
// (`pairedRatio`), the ratio is the median of those runs' ratios, with their
// min and max; otherwise it is taken between the two medians.
//
// To add a measurement: write a module (bench/<name>.ts exporting a
// BenchModule) and add it to makeModules() in bench/run.ts.

export interface BenchStack {
  url: string;
  /** `images`: the local images emulator, which draws labels where the Images stand-in cannot (ADR 0250). */
  ports: { provider: number; images?: number };
  vars: Record<string, string>;
  /** The app's wrangler dev process (scripts/stack.ts): its workerd runtime is a child of it. */
  pids: { app: number };
}

export interface BenchContext {
  stack: BenchStack;
  /** A fresh verified user with `credits`, signed in: its session token. */
  fixtureToken(credits?: number): Promise<string>;
  /** The Cookie header value for a fresh signed-in user. */
  fixtureSession(credits?: number): Promise<string>;
}

export interface BenchModule {
  /** Printed while it runs. */
  title: string;
  /** How many times the runner calls `measure` (at least 3; more for noisy figures such as Lighthouse). */
  runs?: number;
  /** Measures no page nor job: when every chosen module says so, the runner starts no stack. */
  stackless?: true;
  /** Once before the runs: fixtures shared by every run. */
  setup?(ctx: BenchContext): Promise<void>;
  /** One run: every figure once. The same figure names in every run. */
  measure(ctx: BenchContext, run: number): Promise<Figure[]>;
  /**
   * A run made of this many calls of `measure`, each figure the median of them: for a short figure that the machine's
   * slow swings move (its disk's sync time). Compared with a revision, the two sides' calls alternate within a round
   * (ABBA), so both meet the same swing (bench/compare.ts).
   */
  samples?: number;
}

export const MIN_RUNS = 3;

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** Rounds like the figures it came from: as many decimals as the most precise run. */
function roundLike(value: number, samples: number[]): number {
  const decimals = Math.max(0, ...samples.map((v) => (String(v).split(".")[1] ?? "").length));
  const f = 10 ** Math.min(decimals, 4);
  return Math.round(value * f) / f;
}

/** Merges the runs of one module: one figure per name, the median as its value, with min, max and the run count. */
export function mergeRuns(runs: Figure[][]): Figure[] {
  const byName = new Map<string, Figure[]>();
  for (const run of runs) {
    for (const f of run) byName.set(f.name, [...(byName.get(f.name) ?? []), f]);
  }
  return [...byName.values()].map((all) => {
    const values = all.map((f) => f.value);
    const ratios = all.flatMap((f) => (f.pairedRatio === undefined ? [] : [f.pairedRatio]));
    const { pairedRatio: _one, ...last } = all.at(-1)!;
    return {
      ...last,
      value: roundLike(median(values), values),
      min: Math.min(...values),
      max: Math.max(...values),
      runs: values.length,
      samples: values,
      ...(ratios.length === values.length ? { ratioSamples: ratios } : {}),
    };
  });
}

/** The calls of one sampled run (`samples`) as one run: each figure their median, a paired ratio's median too. */
export function mergeSamples(calls: Figure[][]): Figure[] {
  return mergeRuns(calls).map(({ min: _min, max: _max, runs: _runs, samples: _samples, ratioSamples, ...f }) =>
    ratioSamples ? { ...f, pairedRatio: median(ratioSamples) } : f,
  );
}

/**
 * Fills in `ratio` and `baseline` for figures measured relative to another: the median of the runs' paired ratios
 * with their spread when every run measured one (`pairedRatio`), else the ratio of the two medians.
 */
export function applyRatios(figures: Figure[]): Figure[] {
  const byName = new Map(figures.map((f) => [f.name, f]));
  return figures.map((f) => {
    if (!f.relativeTo) return f;
    const extra = f.baseline ? `; ${f.baseline}` : "";
    const label = f.relativeTo.label;
    if (f.ratioSamples && f.ratioSamples.length > 0) {
      const ratio = median(f.ratioSamples);
      const spread = `${Math.min(...f.ratioSamples).toFixed(2)}–${Math.max(...f.ratioSamples).toFixed(2)}x`;
      return {
        ...f,
        ratio: Math.round(ratio * 100) / 100,
        baseline: `${ratio.toFixed(2)}x ${label} beside it, ${spread} over the runs${extra}`,
      };
    }
    const base = byName.get(f.relativeTo.name);
    if (!base || base.value === 0) return f;
    const ratio = f.value / base.value;
    return {
      ...f,
      ratio: Math.round(ratio * 100) / 100,
      baseline: `${ratio.toFixed(2)}x ${label}${extra}`,
    };
  });
}
