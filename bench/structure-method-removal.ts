// Removal's line measures (issue 43, bench/structure-method-measures.ts removalLines) judged as ADR 0221 judges a
// candidate: the limit from the calibration half only (it marks at most a tenth of calibration's kept removals, the
// midpoint between the kept values either side), the verdicts that the resampler changes on calibration, then the
// held-out counts with their distinct sources beside production's score (carriedOrMoved over 1, on these grays).
//   node bench/structure-method-removal.ts [cacheDir] [--measure novelLines] [--held]
import { join } from "node:path";
import { countsInFigures, splitByGroup } from "../test/real-pairs/evaluate.ts";
import { judgeGrays } from "../workers/lib/structure/check.ts";
import { prepare } from "../workers/lib/structure/geometry.ts";
import { candidateMeasures } from "../workers/lib/structure/room-measures.ts";
import { bestCpuMs, loadGray, realPairs } from "./structure-grays.ts";
import { removalLines } from "./structure-method-measures.ts";

const args = process.argv.slice(2);
const cache = args.find((a) => !a.startsWith("--") && !args[args.indexOf(a) - 1]?.startsWith("--")) ?? "/tmp/rp-grays";
const measure = args.includes("--measure") ? args[args.indexOf("--measure") + 1]! : "novelLines";
const held = args.includes("--held");
const pairs = realPairs().filter((p) => p.kind === "removal" && countsInFigures(p));
const halves = splitByGroup(realPairs().filter(countsInFigures));
const rows = pairs.map((p) => {
  const gray = (r: string, w: string) => loadGray(join(cache, `${p.id}.${r}.${w}.bin`));
  const v = (r: string) => removalLines(prepare(gray(r, "source"), gray(r, "result"), "removal"))[measure]!;
  const j = judgeGrays("removal", gray("sharp", "source"), gray("sharp", "result"), undefined, {
    candidates: candidateMeasures,
  });
  const pr = prepare(gray("sharp", "source"), gray("sharp", "result"), "removal");
  const cpu = bestCpuMs(() => removalLines(pr, "novelLines"));
  const cpuPrep = bestCpuMs(() => prepare(gray("sharp", "source"), gray("sharp", "result"), "removal"));
  return {
    p,
    half: halves.get(p.group)!,
    sharp: v("sharp"),
    area: v("area"),
    prod: j.measures.carriedOrMoved!,
    cpu,
    cpuPrep,
  };
});
const cal = rows.filter((r) => r.half === "calibration");
const kept = cal
  .filter((r) => r.p.class === "kept")
  .map((r) => r.sharp)
  .sort((a, b) => b - a);
const most = Math.floor(kept.length / 10);
const limit = (kept[most - 1]! + kept[most]!) / 2;
const flips = cal.filter((r) => r.sharp > limit !== r.area > limit).length;
const q = (x: number[]) => {
  const v = [...x].sort((a, b) => a - b);
  return `median ${v[v.length >> 1]!.toFixed(1)} ms, max ${v.at(-1)!.toFixed(1)} ms`;
};
console.log(`${measure}: limit ${limit.toFixed(4)} (calibration kept marked at most ${most} of ${kept.length})`);
console.log(`CPU at 640 px: novelLines ${q(rows.map((r) => r.cpu))}; prepare (align) ${q(rows.map((r) => r.cpuPrep))}`);
console.log(`resampler flips on calibration: ${flips} of ${cal.length}`);
const figures = (sel: typeof rows, name: string, marked: (r: (typeof rows)[number]) => boolean) => {
  const k = sel.filter((r) => r.p.class === "kept");
  const c = sel.filter((r) => r.p.class === "changed");
  const km = k.filter(marked);
  const cp = c.filter((r) => !marked(r));
  const src = (x: typeof rows) => new Set(x.map((r) => r.p.sourcePhoto)).size;
  console.log(
    `  ${name}: kept marked ${km.length} of ${k.length} (${src(km)} of ${src(k)} sources); ` +
      `changed passed ${cp.length} of ${c.length} (${src(cp)} of ${src(c)} sources)`,
  );
};
for (const half of held ? ["calibration", "heldOut"] : ["calibration"]) {
  const sel = rows.filter((r) => r.half === half);
  console.log(half);
  figures(sel, measure, (r) => r.sharp > limit);
  figures(sel, "production (carriedOrMoved > 1)", (r) => r.prod > 1);
  figures(sel, `${measure} or production`, (r) => r.sharp > limit || r.prod > 1);
}
