// The structure check's labelled set (test/fixtures/structure/README.md, ADR 0160).
//
//   node scripts/structure-set.ts prepare <dir>   reduces the original photos in <dir> (each named as the last part of
//                                                 its upstream path) to the committed photos/<id>.jpg
//   node scripts/structure-set.ts write <dir>     writes every generated pair to <dir> as JPEGs, to look at
//   node scripts/structure-set.ts outline <dir>   draws each photo's described architecture over it (rooms.ts)
//   node scripts/structure-set.ts measure         rates every measure of ADR 0160 on the set (calibrated on one half,
//                                                 measured on the other) and prints the thresholds calibration chose
//
// The pairs themselves are not committed: the test makes them from the committed photos and their descriptions,
// the same way every time (test/fixtures/structure/pairs.ts).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { calibrateAll, judgeWith, rates, type Scored } from "../test/fixtures/structure/evaluate.ts";
import { loadPhotosFromDisk } from "../test/fixtures/structure/load-node.ts";
import { makePairs } from "../test/fixtures/structure/pairs.ts";
import { crop, decodeImage, encodeJpeg, resize } from "../test/fixtures/structure/pixels.ts";
import { ROOMS } from "../test/fixtures/structure/rooms.ts";
import { PHOTO_SOURCES } from "../test/fixtures/structure/sources.ts";
import { analysisSize, toAnalysis } from "../workers/lib/structure/analysis.ts";
import { type StructureScores, structureScores } from "../workers/lib/structure/measures.ts";

const ROOT = join(import.meta.dirname, "..");
const PHOTOS = join(ROOT, "test/fixtures/structure/photos");
const LONG_EDGE = 1280;

function prepare(dir: string) {
  mkdirSync(PHOTOS, { recursive: true });
  for (const s of PHOTO_SOURCES) {
    let img = decodeImage(new Uint8Array(readFileSync(join(dir, basename(s.path)))));
    if (s.crop) img = crop(img, ...s.crop);
    const long = Math.max(img.width, img.height);
    if (long > LONG_EDGE) {
      const f = LONG_EDGE / long;
      img = resize(img, Math.round(img.width * f), Math.round(img.height * f));
    }
    const bytes = encodeJpeg(img, 85);
    writeFileSync(join(PHOTOS, `${s.id}.jpg`), bytes);
    console.log(`${s.id}: ${img.width}x${img.height}, ${Math.round(bytes.length / 1024)} KB`);
  }
}

function write(dir: string) {
  mkdirSync(dir, { recursive: true });
  const pairs = makePairs(loadPhotosFromDisk());
  for (const p of pairs) {
    const name = `${p.id.replace("/", "-")}-${p.expect}`;
    const { source, result } = p.make();
    writeFileSync(join(dir, `${name}-result.jpg`), encodeJpeg(result, 85));
    if (p.kind === "removal") writeFileSync(join(dir, `${name}-source.jpg`), encodeJpeg(source, 85));
    console.log(`${name}: ${p.kind} ${result.width}x${result.height} ${p.what}`);
  }
  console.log(`${pairs.length} pairs, ${pairs.filter((p) => p.expect === "fail").length} must fail`);
}

/** Windows red, doors blue, lines green, wall areas yellow, removable things magenta, the floor band cyan. */
function outline(dir: string) {
  mkdirSync(dir, { recursive: true });
  for (const photo of loadPhotosFromDisk()) {
    const room = ROOMS.find((r) => r.id === photo.id);
    if (!room) continue;
    const img = photo.image;
    const px = ([x, y]: [number, number]): [number, number] => [x * (img.width - 1), y * (img.height - 1)];
    const seg = (a: [number, number], b: [number, number], c: [number, number, number]) => {
      const [x0, y0] = px(a);
      const [x1, y1] = px(b);
      const n = Math.ceil(Math.hypot(x1 - x0, y1 - y0)) + 1;
      for (let i = 0; i <= n; i++) {
        const x = Math.round(x0 + ((x1 - x0) * i) / n);
        const y = Math.round(y0 + ((y1 - y0) * i) / n);
        for (let dy = -1; dy <= 1; dy++)
          for (let dx = -1; dx <= 1; dx++) {
            const xx = x + dx;
            const yy = y + dy;
            if (xx < 0 || yy < 0 || xx >= img.width || yy >= img.height) continue;
            img.data.set(c, (yy * img.width + xx) * 4);
          }
      }
    };
    const quad = (q: [number, number][], c: [number, number, number]) => {
      for (const [i, p] of q.entries()) seg(p, q[(i + 1) % 4]!, c);
    };
    for (const q of room.windows) quad(q, [255, 0, 0]);
    for (const q of room.doors) quad(q, [0, 80, 255]);
    for (const q of room.walls) quad(q, [255, 220, 0]);
    for (const q of room.removable ?? []) quad(q, [255, 0, 255]);
    for (const l of room.lines) seg(l.a, l.b, [0, 230, 0]);
    const f = room.floor;
    quad(
      [
        [f.left, f.top],
        [f.right, f.top],
        [f.right, f.bottom],
        [f.left, f.bottom],
      ],
      [0, 230, 230],
    );
    writeFileSync(join(dir, `${photo.id}.jpg`), encodeJpeg(img, 85));
  }
}

type Row = Scored & { scores: StructureScores; ms: number };

/** One measure alone: per kind, the cut between calibration scores that best separates them; held-out rates. */
function rateAlone(rows: Row[], pick: (s: StructureScores) => number) {
  const cut: Record<string, number> = {};
  for (const kind of ["stage", "removal", "sky"]) {
    const cal = rows.filter((r) => r.half === "calibration" && r.kind === kind);
    const values = [...new Set(cal.map((r) => pick(r.scores)))].sort((a, b) => a - b);
    const cuts = [...values.slice(0, -1).map((v, i) => (v + values[i + 1]!) / 2), (values.at(-1) ?? 0) + 1];
    let best = -Infinity;
    let tied: number[] = [];
    for (const c of cuts) {
      const r = rates(cal, (x) => pick((x as Row).scores) > c);
      const score = r.caught - r.falseAlarms;
      if (score > best + 1e-12) {
        best = score;
        tied = [c];
      } else if (Math.abs(score - best) <= 1e-12) tied.push(c);
    }
    cut[kind] = tied[Math.floor((tied.length - 1) / 2)]!;
  }
  return rates(
    rows.filter((r) => r.half === "held-out"),
    (x) => pick((x as Row).scores) > cut[x.kind]!,
  );
}

function measure() {
  const rows: Row[] = [];
  for (const p of makePairs(loadPhotosFromDisk())) {
    const { source, result } = p.make();
    const t0 = performance.now();
    const s = toAnalysis(source.data, source.width, source.height);
    const r = toAnalysis(result.data, result.width, result.height, analysisSize(source.width, source.height));
    const scores = structureScores(s, r, { kind: p.kind, baselines: true });
    const ms = performance.now() - t0;
    rows.push({ ...p, carried: scores.carriedOver, moved: scores.movedAreas, scores, ms });
  }
  const pct = (v: number) => `${(v * 100).toFixed(1)} %`;
  console.log(`${rows.length} pairs; held out: ${rows.filter((r) => r.half === "held-out").length}`);
  console.log("| measure | caught | false alarms |\n|---|---:|---:|");
  for (const [name, pick] of [
    ["edge-map loss (edgeLoss)", (s: StructureScores) => s.edgeLoss],
    ["gradient-structure dissimilarity (1 - SSIM of gradients)", (s: StructureScores) => s.gradientDissimilarity],
    ["painted-over run (paintedRun)", (s: StructureScores) => s.paintedRun],
    ["borrowed run (borrowedRun)", (s: StructureScores) => s.borrowedRun],
    ["carried-over run (carriedOver)", (s: StructureScores) => s.carriedOver],
    ["moved areas (movedAreas)", (s: StructureScores) => s.movedAreas],
  ] as const) {
    const r = rateAlone(rows, pick);
    console.log(`| ${name} | ${pct(r.caught)} | ${pct(r.falseAlarms)} |`);
  }
  const t = calibrateAll(rows);
  const r = rates(
    rows.filter((x) => x.half === "held-out"),
    judgeWith(t),
  );
  console.log(`| carried-over run + moved areas (the check) | ${pct(r.caught)} | ${pct(r.falseAlarms)} |`);
  console.log(`wrong: ${r.wrong.join(", ")}`);
  console.log(`thresholds: ${JSON.stringify(t)}`);
  const ms = rows.map((x) => x.ms).sort((a, b) => a - b);
  console.log(`reduction + check per pair (set sizes): median ${ms[Math.floor(ms.length / 2)]!.toFixed(1)} ms`);
}

const [mode, dir] = process.argv.slice(2);
if (mode === "prepare" && dir) prepare(dir);
else if (mode === "write" && dir) write(dir);
else if (mode === "outline" && dir) outline(dir);
else if (mode === "measure") measure();
else {
  console.error("usage: node scripts/structure-set.ts prepare <originals> | write <out> | outline <out> | measure");
  process.exit(2);
}
