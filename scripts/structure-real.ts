// The structure check on real before/after pairs (issue 43): loads a pair set (a folder with manifest*.jsonl and
// images/<id>.source.jpg, <id>.result.jpg), reduces each picture as the check Worker's Images binding does (to 640 px
// on the long edge, gray), runs the check and prints per-pair scores and per-kind rates.
//
//   node scripts/structure-real.ts eval <dir> [--resampler sharp|area] [--kind stage|removal|sky] [--json]
//   node scripts/structure-real.ts dump <dir> <out.jsonl>   every candidate measure per pair (room-measures.ts)
//
// The images are fetched material and never committed; the manifest's labels are (test/fixtures/structure-real).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { decodeImage, resize } from "../test/fixtures/structure/pixels.ts";
import { analysisSize, checkStructure, toAnalysis } from "../workers/lib/structure/check.ts";
import type { ResultKind } from "../workers/lib/structure/measures.ts";
import { roomMeasures } from "../workers/lib/structure/room-measures.ts";

export interface RealPair {
  id: string;
  kind: ResultKind;
  class: "kept" | "changed";
  group: string;
  sourcePhoto: string;
  note: string;
  hard?: string[];
}

export function readManifest(dir: string): RealPair[] {
  const out: RealPair[] = [];
  for (const f of readdirSync(dir).filter((n) => /^manifest.*\.jsonl$/.test(n))) {
    for (const line of readFileSync(join(dir, f), "utf8").split("\n")) {
      if (!line.trim()) continue;
      out.push(JSON.parse(line) as RealPair);
    }
  }
  return out;
}

export interface GrayPic {
  width: number;
  height: number;
  data: Uint8Array;
}

const REDUCED_EDGE = 640;

/** As the Images binding's stand-in: sharp, fit inside 640 px without enlarging, then BT.601 luma. */
async function graySharp(bytes: Uint8Array): Promise<GrayPic> {
  const { data, info } = await sharp(bytes)
    .resize({ width: REDUCED_EDGE, height: REDUCED_EDGE, fit: "inside", withoutEnlargement: true })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const n = info.width * info.height;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    out[i] = (data[i * 3]! * 77 + data[i * 3 + 1]! * 150 + data[i * 3 + 2]! * 29 + 128) >> 8;
  }
  return { width: info.width, height: info.height, data: out };
}

/** An exact area average instead of sharp's kernel, for the resampler-independence check. */
function grayArea(bytes: Uint8Array): GrayPic {
  const img = decodeImage(bytes);
  const f = Math.min(1, REDUCED_EDGE / Math.max(img.width, img.height));
  const r = f < 1 ? resize(img, Math.round(img.width * f), Math.round(img.height * f)) : img;
  const n = r.width * r.height;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    out[i] = (r.data[i * 4]! * 77 + r.data[i * 4 + 1]! * 150 + r.data[i * 4 + 2]! * 29 + 128) >> 8;
  }
  return { width: r.width, height: r.height, data: out };
}

export async function reducedPair(dir: string, id: string, resampler: "sharp" | "area") {
  const read = (which: string) => new Uint8Array(readFileSync(join(dir, "images", `${id}.${which}.jpg`)));
  const gray = resampler === "sharp" ? graySharp : async (b: Uint8Array) => grayArea(b);
  return { source: await gray(read("source")), result: await gray(read("result")) };
}

async function main() {
  const [cmd, dir, ...rest] = process.argv.slice(2);
  if (cmd === "dump" && dir) return dump(dir, rest[0] ?? "/tmp/features.jsonl");
  if (cmd !== "eval" || !dir) {
    console.error("usage: node scripts/structure-real.ts eval <dir> [--resampler sharp|area] [--kind K] [--json]");
    process.exit(2);
  }
  const opt = (name: string) => {
    const i = rest.indexOf(`--${name}`);
    return i >= 0 ? rest[i + 1] : undefined;
  };
  const resampler = (opt("resampler") ?? "sharp") as "sharp" | "area";
  const kind = opt("kind");
  const pairs = readManifest(dir).filter((p) => !kind || p.kind === kind);
  const rows: { p: RealPair; score: number; pass: boolean }[] = [];
  for (const p of pairs) {
    try {
      const { source, result } = await reducedPair(dir, p.id, resampler);
      const size = analysisSize(source.width, source.height);
      const v = checkStructure(
        toAnalysis(source.data, source.width, source.height, size),
        toAnalysis(result.data, result.width, result.height, size),
        { kind: p.kind },
      );
      rows.push({ p, score: v.score, pass: v.pass });
      if (rest.includes("--json"))
        console.log(JSON.stringify({ id: p.id, kind: p.kind, class: p.class, score: v.score }));
      else
        console.log(
          `${p.id.padEnd(28)} ${p.kind.padEnd(8)} ${p.class.padEnd(8)} ${v.score.toFixed(3)} ${v.pass ? "pass" : "REFUSE"}`,
        );
    } catch (err) {
      console.log(`${p.id}: not evaluated: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  for (const k of ["stage", "removal", "sky"] as const) {
    for (const c of ["kept", "changed"] as const) {
      const sel = rows.filter((r) => r.p.kind === k && r.p.class === c && !r.p.hard?.includes("unsure"));
      if (!sel.length) continue;
      const refused = sel.filter((r) => !r.pass).length;
      const groups = new Set(sel.map((r) => r.p.group)).size;
      const photos = new Set(sel.map((r) => r.p.sourcePhoto)).size;
      console.log(
        `${k} ${c}: ${sel.length} pairs (${photos} source photos, ${groups} groups), refused ${refused} (${((100 * refused) / sel.length).toFixed(0)} %)`,
      );
    }
  }
}

async function dump(dir: string, out: string) {
  const { existsSync, appendFileSync } = await import("node:fs");
  const done = new Set(
    existsSync(out)
      ? readFileSync(out, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => (JSON.parse(l) as { id: string }).id)
      : [],
  );
  for (const p of readManifest(dir)) {
    if (done.has(p.id)) continue;
    try {
      const { source, result } = await reducedPair(dir, p.id, "sharp");
      const size = analysisSize(source.width, source.height);
      const old = checkStructure(
        toAnalysis(source.data, source.width, source.height, size),
        toAnalysis(result.data, result.width, result.height, size),
        { kind: p.kind },
      );
      const m = roomMeasures(source, result, p.kind);
      appendFileSync(
        out,
        `${JSON.stringify({ id: p.id, kind: p.kind, class: p.class, group: p.group, photo: p.sourcePhoto, unsure: p.hard?.includes("unsure") ?? false, old: old.score, ...m.values })}\n`,
      );
    } catch (err) {
      console.log(`${p.id}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

if (import.meta.main) await main();
