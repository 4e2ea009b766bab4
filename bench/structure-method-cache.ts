// Caches the 640 px grays of every real pair (issue 43, method work): sharp as the Images stand-in, and the exact area
// average, so measures can be iterated on in Node without workerd. Pictures and cache stay outside git (ADR 0220).
//   node bench/structure-method-cache.ts <pairsDir> <cacheDir>
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { reducedPair } from "../scripts/structure-real.ts";
import { realPairs, saveGray } from "./structure-grays.ts";

const [dir = "/work/realpairs", out = "/tmp/rp-grays"] = process.argv.slice(2);
mkdirSync(out, { recursive: true });
const pairs = realPairs();
let n = 0;
for (const p of pairs) {
  for (const r of ["sharp", "area"] as const) {
    const f = join(out, `${p.id}.${r}.result.bin`);
    if (existsSync(f)) continue;
    if (!existsSync(join(dir, "images", `${p.id}.result.jpg`))) continue;
    const { source, result } = await reducedPair(dir, p.id, r);
    saveGray(join(out, `${p.id}.${r}.source.bin`), source);
    saveGray(f, result);
    n++;
  }
}
console.log(`cached ${n} new grays in ${out}`);
