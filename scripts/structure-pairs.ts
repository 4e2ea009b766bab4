// The structure check's set of real before/after pairs (issue 43, test/fixtures/structure-real/README.md).
//
//   node scripts/structure-pairs.ts materialize <mirrors> <out>   writes <out>/images/<id>.{source,result}.jpg from the
//        repositories' snapshots under <mirrors> (one bare git folder per repository, <mirrors>/<owner>+<name>/repo):
//        each file at its commit, cut to its crop, reduced to 1280 px on the long edge, JPEG quality 85; with ids after
//        <out>, only those pairs (so the pictures already in the set stay as they are); STRUCTURE_PAIRS_MANIFEST names
//        another manifest to read (a candidate file before it is merged)
//   node scripts/structure-pairs.ts merge <file.jsonl>...          adds labelled pairs to the committed manifest, each
//        stamped with the time it was added
//   node scripts/structure-pairs.ts review <looks.jsonl>...         adds blind looks (and rulings, ADR 0335) to
//        reviews.jsonl and sets each reviewed pair's label to what they decide (reviewedLabel; the README's "Blind
//        review")
//   node scripts/structure-pairs.ts counts                         pairs, source photos and groups per kind and class
//
// The manifest (our labels and where each picture comes from) is committed; the pictures are not: they are fetched
// material (docs/decisions/0220-real-pairs-outside-git.md). The set's folder is STRUCTURE_PAIRS_DIR, else
// ../shared/structure-pairs beside the repository.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import sharp from "sharp";
import { decodeImage, resize } from "../test/fixtures/structure/pixels.ts";
import {
  applyReviews,
  LOOKS,
  manifestLine,
  type Picture,
  parseManifest,
  parseReviews,
  type RealPair,
  type Review,
  ruledOn,
} from "../test/fixtures/structure-real/pairs.ts";
import { countsInFigures } from "../test/real-pairs/evaluate.ts";

export type { RealPair };

const ROOT = resolve(import.meta.dirname, "..");
export const MANIFEST = join(ROOT, "test/fixtures/structure-real/pairs.jsonl");
export const REVIEWS = join(ROOT, "test/fixtures/structure-real/reviews.jsonl");

export function readManifest(file = MANIFEST): RealPair[] {
  return existsSync(file) ? parseManifest(readFileSync(file, "utf8")) : [];
}

/** Where the set's pictures are: STRUCTURE_PAIRS_DIR, else ../shared/structure-pairs. */
export function pairSetDir(): string {
  return resolve(process.env.STRUCTURE_PAIRS_DIR ?? join(ROOT, "..", "shared", "structure-pairs"));
}

/** Whether every picture of the manifest is in the set's folder. */
export function missingPictures(dir = pairSetDir(), pairs = readManifest()): string[] {
  const missing: string[] = [];
  for (const p of pairs) {
    for (const which of ["source", "result"]) {
      const f = join(dir, "images", `${p.id}.${which}.jpg`);
      if (!existsSync(f)) missing.push(f);
    }
  }
  return missing;
}

/** A picture reduced to `longEdge` by an exact area average (no resampling kernel), as BT.601 luma. */
export function areaGray(bytes: Uint8Array, longEdge: number) {
  const img = decodeImage(bytes);
  const f = Math.min(1, longEdge / Math.max(img.width, img.height));
  const r = f < 1 ? resize(img, Math.round(img.width * f), Math.round(img.height * f)) : img;
  const n = r.width * r.height;
  const data = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    data[i] = (r.data[i * 4]! * 77 + r.data[i * 4 + 1]! * 150 + r.data[i * 4 + 2]! * 29 + 128) >> 8;
  }
  return { width: r.width, height: r.height, data };
}

function parseCrop(geometry: string) {
  const m = /^(\d+)x(\d+)\+(\d+)\+(\d+)$/.exec(geometry);
  if (!m) throw new Error(`not a crop geometry: ${geometry}`);
  const [width, height, left, top] = m.slice(1).map(Number) as [number, number, number, number];
  return { width, height, left, top };
}

async function materializePicture(mirrors: string, pic: Picture, out: string) {
  // A snapshot is a bare git folder, or (for some repositories fetch brings) a work tree with its .git inside.
  const snapshot = join(mirrors, pic.repo.replace("/", "+"), "repo");
  const gitDir = existsSync(join(snapshot, ".git")) ? join(snapshot, ".git") : snapshot;
  // "anim.webp#frame2-coalesced": frame 2 (from 0) of an animation, composed onto the canvas as libvips does.
  const [path, fragment] = pic.path.split("#") as [string, string | undefined];
  const frame = fragment === undefined ? undefined : /^frame(\d+)(-coalesced)?$/.exec(fragment)?.[1];
  if (fragment !== undefined && frame === undefined) throw new Error(`not a frame: ${pic.path}`);
  const bytes = execFileSync("git", ["--git-dir", gitDir, "show", `${pic.commit}:${path}`], {
    maxBuffer: 64 << 20,
  });
  let img = sharp(bytes, frame === undefined ? {} : { page: Number(frame) }).rotate();
  if (pic.crop) img = sharp(await img.extract(parseCrop(pic.crop)).toBuffer());
  await img
    .resize({ width: 1280, height: 1280, fit: "inside", withoutEnlargement: true })
    .flatten({ background: "#ffffff" })
    .jpeg({ quality: 85 })
    .toFile(out);
}

async function materialize(mirrors: string, out: string, ids: string[] = [], manifest = MANIFEST) {
  mkdirSync(join(out, "images"), { recursive: true });
  const pairs = readManifest(manifest);
  const unknown = ids.filter((id) => !pairs.some((p) => p.id === id));
  if (unknown.length) throw new Error(`not in the manifest: ${unknown.join(", ")}`);
  let done = 0;
  for (const p of pairs) {
    if (ids.length && !ids.includes(p.id)) continue;
    for (const which of ["source", "result"] as const) {
      await materializePicture(mirrors, p[which], join(out, "images", `${p.id}.${which}.jpg`));
    }
    done++;
  }
  console.log(`${done} pairs written to ${out}/images`);
}

function merge(files: string[], now = new Date().toISOString().replace(/\.\d+Z$/, "Z")) {
  const pairs = readManifest();
  const ids = new Set(pairs.map((p) => p.id));
  for (const f of files) {
    for (const p of parseManifest(readFileSync(f, "utf8"))) {
      if (ids.has(p.id)) continue;
      ids.add(p.id);
      // When it entered the manifest (whatever the file said): a rule fixed before this never saw it
      // (test/real-pairs/evaluate.ts, afterRule).
      pairs.push({ ...p, added: now });
    }
  }
  pairs.sort((a, b) => a.id.localeCompare(b.id));
  writeFileSync(MANIFEST, `${pairs.map((p) => manifestLine(p)).join("\n")}\n`);
  console.log(`${pairs.length} pairs in ${MANIFEST}`);
}

/** Whether the looks so far leave `pair` unsure (a ruling may label only such a pair, ADR 0335). */
function unsureByLooks(reviews: Review[], pair: RealPair): boolean {
  const look = (l: Review["look"]) => reviews.find((r) => r.id === pair.id && r.look === l)?.label;
  return ruledOn(pair.firstClass ?? pair.class, look("second"), look("third"));
}

function review(files: string[]) {
  const reviews = existsSync(REVIEWS) ? parseReviews(readFileSync(REVIEWS, "utf8")) : [];
  const manifest = readManifest();
  const byId = new Map(manifest.map((p) => [p.id, p]));
  const seen = new Set(reviews.map((r) => `${r.id}/${r.look}`));
  for (const f of files) {
    for (const r of parseReviews(readFileSync(f, "utf8"))) {
      const pair = byId.get(r.id);
      if (!pair) throw new Error(`${f}: no pair ${r.id} in the manifest`);
      if (!LOOKS.includes(r.label) || !["second", "third", "ruling"].includes(r.look) || !r.why?.trim()) {
        throw new Error(`${f}: ${r.id}: a look is second, third or ruling, labels ${LOOKS.join(", ")}, and says why`);
      }
      if (r.look === "ruling" && (r.label === "unsure" || !unsureByLooks(reviews, pair))) {
        throw new Error(`${f}: ${r.id}: a ruling labels kept or changed, and only a pair its looks left unsure`);
      }
      if (seen.has(`${r.id}/${r.look}`)) continue;
      seen.add(`${r.id}/${r.look}`);
      reviews.push({ id: r.id, look: r.look, label: r.label, why: r.why });
    }
  }
  reviews.sort((a, b) => a.id.localeCompare(b.id) || a.look.localeCompare(b.look));
  writeFileSync(REVIEWS, `${reviews.map((r) => manifestLine(r)).join("\n")}\n`);
  const pairs = applyReviews(manifest, reviews);
  writeFileSync(MANIFEST, `${pairs.map((p) => manifestLine(p)).join("\n")}\n`);
  const moved = pairs.filter((p) => p.firstClass).length;
  const unsure = pairs.filter((p) => p.hard?.includes("unsure-on-review")).length;
  console.log(`${reviews.length} looks; ${moved} pairs relabelled by them, ${unsure} left unsure`);
}

export function counts(pairs: RealPair[]) {
  const rows: string[] = [];
  for (const kind of ["stage", "removal", "sky"] as const) {
    for (const cls of ["kept", "changed"] as const) {
      const sel = pairs.filter((p) => p.kind === kind && p.class === cls && countsInFigures(p));
      const photos = new Set(sel.map((p) => p.sourcePhoto)).size;
      const groups = new Set(sel.map((p) => p.group)).size;
      rows.push(`${kind} ${cls}: ${sel.length} pairs, ${photos} source photos, ${groups} groups`);
    }
  }
  return rows;
}

if (import.meta.main) {
  const [cmd, ...args] = process.argv.slice(2);
  if (cmd === "materialize" && args.length >= 2) {
    await materialize(args[0]!, args[1]!, args.slice(2), process.env.STRUCTURE_PAIRS_MANIFEST ?? MANIFEST);
  } else if (cmd === "merge" && args.length) merge(args);
  else if (cmd === "review" && args.length) review(args);
  else if (cmd === "counts") console.log(counts(readManifest()).join("\n"));
  else {
    console.error(
      "usage: node scripts/structure-pairs.ts materialize <mirrors> <out> [id...] | merge <file>... | review <file>... | counts",
    );
    process.exit(2);
  }
}
