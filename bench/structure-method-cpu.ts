import { join } from "node:path";
import { judgeGrays } from "../workers/lib/structure/check.ts";
import { facadeLines, prepare } from "../workers/lib/structure/geometry.ts";
import { bestCpuMs, loadGray, realPairs } from "./structure-grays.ts";

const args = process.argv.slice(2);
const cache = args[0] && !args[0].startsWith("--") ? args[0] : "/tmp/rp-grays";
const k = args.indexOf("--kind");
const kind = k >= 0 ? args[k + 1] : undefined;
const pairs = realPairs().filter((p) => !kind || p.kind === kind);
const whole: number[] = [];
const ids: string[] = [];
const facade: number[] = [];
// Warm-up: the first calls compile the code (a Worker's isolate serves many checks warm).
for (const p of pairs.slice(0, 8)) {
  judgeGrays(
    p.kind,
    loadGray(join(cache, `${p.id}.sharp.source.bin`)),
    loadGray(join(cache, `${p.id}.sharp.result.bin`)),
  );
}
for (const p of pairs) {
  const s = loadGray(join(cache, `${p.id}.sharp.source.bin`));
  const r = loadGray(join(cache, `${p.id}.sharp.result.bin`));
  whole.push(bestCpuMs(() => judgeGrays(p.kind, s, r)));
  ids.push(p.id);
  facade.push(bestCpuMs(() => facadeLines(prepare(s, r, p.kind))));
}
const med = (x: number[]) => [...x].sort((a, b) => a - b)[Math.floor(x.length / 2)]!;
const max = (x: number[]) => Math.max(...x);
console.log(
  `${pairs.length} results at 640 px${kind ? ` (${kind})` : ""}: judgeGrays CPU median ${med(whole).toFixed(1)} ms, ` +
    `max ${max(whole).toFixed(1)} ms; of which facade lines (prepare + facadeLines) median ${med(facade).toFixed(1)} ms, ` +
    `max ${max(facade).toFixed(1)} ms`,
);
const slowest = whole
  .map((ms, i) => ({ ms, id: ids[i]! }))
  .sort((a, b) => b.ms - a.ms)
  .slice(0, 3);
console.log(`slowest: ${slowest.map((x) => `${x.id} ${x.ms.toFixed(1)} ms`).join(", ")}`);
