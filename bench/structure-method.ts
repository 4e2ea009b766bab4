// Method work on the structure check (issue 43, ADR 0300): per candidate measure, its AUC on the calibration half by
// kind (the split of test/real-pairs/evaluate.ts), from cached 640 px grays (bench/structure-method-cache.ts).
//   node bench/structure-method.ts [cacheDir] [--held] [--kind K] [--only name,...] [--dump file]
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { countsInFigures, splitByGroup } from "../test/real-pairs/evaluate.ts";
import { judgeGrays } from "../workers/lib/structure/check.ts";
import { candidateMeasures } from "../workers/lib/structure/room-measures.ts";
import { loadGray, realPairs } from "./structure-grays.ts";
import { geometryMeasures } from "./structure-method-measures.ts";

const args = process.argv.slice(2);
const cache = args.find((a) => !a.startsWith("--") && !args[args.indexOf(a) - 1]?.startsWith("--")) ?? "/tmp/rp-grays";
const opt = (n: string) => (args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1] : undefined);
const held = args.includes("--held");
const onlyKind = opt("kind");
const resampler = opt("resampler") ?? "sharp";
const pairs = realPairs().filter(countsInFigures);
const halves = splitByGroup(pairs);
type Row = { id: string; kind: string; cls: string; half: string; v: Record<string, number> };
const rows: Row[] = [];
let ms = 0;
for (const p of pairs) {
  if (onlyKind && p.kind !== onlyKind) continue;
  const s = loadGray(join(cache, `${p.id}.${resampler}.source.bin`));
  const r = loadGray(join(cache, `${p.id}.${resampler}.result.bin`));
  const j = judgeGrays(p.kind, s, r, undefined, { candidates: candidateMeasures });
  const t0 = performance.now();
  const g = geometryMeasures(s, r, p.kind);
  ms += performance.now() - t0;
  rows.push({ id: p.id, kind: p.kind, cls: p.class, half: halves.get(p.group)!, v: { ...j.measures, ...g } });
}
console.log(`geometry: ${(ms / rows.length).toFixed(1)} ms per pair`);
const auc = (sel: Row[], m: string) => {
  const k = sel.filter((r) => r.cls === "kept").map((r) => r.v[m]!);
  const c = sel.filter((r) => r.cls === "changed").map((r) => r.v[m]!);
  let s = 0;
  for (const a of k) for (const b of c) s += b > a ? 1 : b === a ? 0.5 : 0;
  return s / (k.length * c.length);
};
const names = Object.keys(rows[0]!.v);
for (const kind of ["stage", "removal", "sky"]) {
  if (onlyKind && kind !== onlyKind) continue;
  const cal = rows.filter((r) => r.kind === kind && r.half === "calibration");
  const ho = rows.filter((r) => r.kind === kind && r.half === "heldOut");
  const line = names
    .map((m) => ({ m, a: auc(cal, m), h: held ? auc(ho, m) : Number.NaN }))
    .sort((x, y) => y.a - x.a)
    .map((x) => `${x.m} ${x.a.toFixed(2)}${held ? `/${x.h.toFixed(2)}` : ""}`);
  console.log(`${kind} (cal ${cal.length}${held ? `, held ${ho.length}` : ""}): ${line.join("; ")}`);
}
const dump = opt("dump");
if (dump) writeFileSync(dump, JSON.stringify(rows));
