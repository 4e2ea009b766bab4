import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pairSetDir } from "../scripts/structure-pairs.ts";
import { reducedPair } from "../scripts/structure-real.ts";
import type { KindRates, Rate } from "../test/real-pairs/evaluate.ts";
import { countsInFigures } from "../test/real-pairs/evaluate.ts";
import { judgeGrays, type ResultKind } from "../workers/lib/structure/check.ts";
import { type BenchModule, median } from "./module.ts";
import { BUDGETS, type Figure } from "./report.ts";
import { bestCpuMs, realPairs } from "./structure-grays.ts";

// The structure check (issue 43) on real pairs only: a figure we publish is measured on material nobody here made.
// - The held-out rates per kind come from `npm run test:real-pairs` (workerd, the Images binding's stand-in, the
//   production judgeGrays), which writes bench/results/report-structure-real.json; this module reads that file.
// - The CPU per result is the production judgeGrays on the real pairs' 640 px grays, process CPU time, best of 3 per
//   pair after a warm-up, measured here when the pictures are on disk (the set's folder; outside git, ADR 0220).
// The synthetic set (test/fixtures/structure) stays a unit case and gives no figure here.

const RESULTS = join(import.meta.dirname, "results");

interface RealReport {
  pairs: number;
  kinds: KindRates[];
}

const pct = (x: number) => Math.round(x * 1000) / 10;
const described = (r: Rate) => `${r.k} of ${r.n}, ${r.sources} sources, 95 % interval ${pct(r.low)}-${pct(r.high)} %`;

function rateFigures(report: RealReport): Figure[] {
  const out: Figure[] = [];
  for (const k of report.kinds) {
    const { keptMarked, changedPassed } = k.heldOut;
    out.push(
      {
        group: "Structure check on real pairs (held out)",
        name: `${k.kind}: kept rooms marked or refused (${described(keptMarked)})`,
        value: pct(keptMarked.rate),
        unit: "%",
        ...BUDGETS.structureKeptMarked,
      },
      {
        group: "Structure check on real pairs (held out)",
        name: `${k.kind}: changed rooms passed unmarked (${described(changedPassed)})`,
        value: pct(changedPassed.rate),
        unit: "%",
        ...BUDGETS.structureChangedPassed,
      },
    );
  }
  return out;
}

export function structureModule(): BenchModule {
  let report: RealReport | null = null;
  const grays: {
    kind: ResultKind;
    source: Parameters<typeof judgeGrays>[1];
    result: Parameters<typeof judgeGrays>[2];
  }[] = [];
  return {
    stackless: true,
    title:
      "Structure check on real pairs: held-out rates per kind (from npm run test:real-pairs) and CPU per result in the check Worker's judgeGrays",
    async setup() {
      const file = join(RESULTS, "report-structure-real.json");
      if (existsSync(file)) report = JSON.parse(readFileSync(file, "utf8")) as RealReport;
      // The folder `npm run test:real-pairs` reads (STRUCTURE_PAIRS_DIR, else ../shared/structure-pairs).
      const dir = pairSetDir();
      if (!existsSync(join(dir, "images"))) {
        console.log(`  structure: no pictures in ${dir}, so no CPU figure (ADR 0220)`);
        return;
      }
      for (const p of realPairs()) {
        if (!countsInFigures(p)) continue;
        if (!existsSync(join(dir, "images", `${p.id}.result.jpg`))) continue;
        const { source, result } = await reducedPair(dir, p.id, "sharp");
        grays.push({ kind: p.kind, source, result });
      }
    },
    async measure() {
      const figures: Figure[] = report ? rateFigures(report) : [];
      if (grays.length) {
        // Warm-up: a Worker's isolate judges many results warm.
        for (const g of grays.slice(0, 8)) judgeGrays(g.kind, g.source, g.result);
        const cpu = grays.map((g) => bestCpuMs(() => judgeGrays(g.kind, g.source, g.result)));
        figures.push(
          {
            group: "Structure check on real pairs (held out)",
            name: `CPU per result in judgeGrays at 640 px, median of ${cpu.length} real pairs`,
            value: Math.round(median(cpu) * 10) / 10,
            unit: "ms",
            ...BUDGETS.structureCpuMs,
          },
          {
            group: "Structure check on real pairs (held out)",
            name: `CPU per result in judgeGrays at 640 px, the slowest of ${cpu.length} real pairs`,
            value: Math.round(Math.max(...cpu) * 10) / 10,
            unit: "ms",
            ...BUDGETS.structureCpuMs,
          },
        );
      }
      if (!figures.length) {
        throw new Error(
          "no real-pair figures: run `npm run test:real-pairs` with the pictures in the set's folder first (ADR 0220)",
        );
      }
      return figures;
    },
  };
}
