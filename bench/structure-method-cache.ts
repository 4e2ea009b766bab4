// Caches the 640 px grays of every real pair (issue 43, method work): sharp as the Images stand-in, and the exact area
// average, so measures can be iterated on in Node without workerd. Pictures and cache stay outside git (ADR 0220).
//   node bench/structure-method-cache.ts <pairsDir> <cacheDir>
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { reducedPair } from "../scripts/structure-real.ts";
import { parseManifest } from "../test/fixtures/structure-real/pairs.ts";

const [dir = "/work/realpairs", out = "/tmp/rp-grays"] = process.argv.slice(2);
mkdirSync(out, { recursive: true });
const pairs = parseManifest(
  readFileSync(join(import.meta.dirname, "../test/fixtures/structure-real/pairs.jsonl"), "utf8"),
);
const save = (f: string, g: { width: number; height: number; data: Uint8Array }) => {
  const head = new Uint8Array(new Uint32Array([g.width, g.height]).buffer);
  const b = new Uint8Array(8 + g.data.length);
  b.set(head);
  b.set(g.data, 8);
  writeFileSync(f, b);
};
let n = 0;
for (const p of pairs) {
  for (const r of ["sharp", "area"] as const) {
    const f = join(out, `${p.id}.${r}.result.bin`);
    if (existsSync(f)) continue;
    if (!existsSync(join(dir, "images", `${p.id}.result.jpg`))) continue;
    const { source, result } = await reducedPair(dir, p.id, r);
    save(join(out, `${p.id}.${r}.source.bin`), source);
    save(f, result);
    n++;
  }
}
console.log(`cached ${n} new grays in ${out}`);
