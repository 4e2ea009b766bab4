// The real pairs' cached 640 px grays (bench/structure-method-cache.ts writes them, the method benches read them):
// each file is the width and height as two little-endian 32-bit words, then one byte a pixel. Outside git (ADR 0220).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseManifest, type RealPair } from "../test/fixtures/structure-real/pairs.ts";

export interface CachedGray {
  width: number;
  height: number;
  data: Uint8Array;
}

export function saveGray(file: string, g: CachedGray): void {
  const b = new Uint8Array(8 + g.data.length);
  b.set(new Uint8Array(new Uint32Array([g.width, g.height]).buffer));
  b.set(g.data, 8);
  writeFileSync(file, b);
}

export function loadGray(file: string): CachedGray {
  const b = readFileSync(file);
  const [width, height] = new Uint32Array(b.buffer.slice(b.byteOffset, b.byteOffset + 8));
  return { width: width!, height: height!, data: new Uint8Array(b.buffer, b.byteOffset + 8, width! * height!) };
}

/** Every pair of the manifest (test/fixtures/structure-real/pairs.jsonl). */
export function realPairs(): RealPair[] {
  return parseManifest(readFileSync(join(import.meta.dirname, "../test/fixtures/structure-real/pairs.jsonl"), "utf8"));
}

/** The least process CPU time (ms) of three calls of `f`: what one judged result costs, scheduling noise aside. */
export function bestCpuMs(f: () => void): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const t = process.cpuUsage();
    f();
    const d = process.cpuUsage(t);
    best = Math.min(best, (d.user + d.system) / 1000);
  }
  return best;
}
