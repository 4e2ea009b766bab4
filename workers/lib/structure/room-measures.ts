// The structure check's measures on real AI results (issue 43): a result redraws the whole frame, so what it must
// keep is compared, not its pixels: the source's long lines found again in the result and the result's lines the
// source never had, the pattern of edge directions per cell (blind to relighting), and where the brightest areas
// (windows) are. Both pictures at the analysis size, the result lined up on the source.
import { type Gray, quantile } from "./analysis.ts";
import { CELL_CHANGED, type ChangeMap, drawCells } from "./change-map.ts";
import { type Prepared, prepare } from "./geometry.ts";
import { detectSegments, type Segment, support } from "./lines.ts";
import type { ResultKind } from "./measures.ts";

/** The measures the check may judge a kind by (issue 43): each 0 when the result kept what it measures. */
export const ROOM_MEASURES = [
  "lost",
  "lostUpper",
  "added",
  "addedUpper",
  "cellsMean",
  "cellsChanged",
  "cellsChangedUpper",
  "brightChange",
] as const;
export type RoomMeasure = (typeof ROOM_MEASURES)[number];

/**
 * - lost, lostUpper: length-weighted share of the source's long lines the result no longer has (whole, upper part);
 * - added, addedUpper: length of the result's long lines the source never had, per length of the source's;
 * - cellsMean: mean difference of the edge directions' pattern per cell; cellsChanged(Upper): share of cells over
 *   CELL_CHANGED;
 * - brightChange: 1 - IoU of each picture's brightest tenth (windows, doors to daylight).
 */
export type RoomValues = Record<RoomMeasure, number>;

export interface RoomMeasures {
  values: RoomValues;
  width: number;
  height: number;
  /** The first row of the upper part. */
  upperRow: number;
  lostLines: Segment[];
  addedLines: Segment[];
  cells: { cols: number; rows: number; values: Float32Array };
}

/** Lines shorter than this share of the diagonal are not judged (furniture detail, texture). */
const MIN_LINE = 0.07;
/** How far (analysis pixels) a result line may sit from the source's and still be the same line. */
const RADIUS = 3;
/** A line is found again when this share of its length has support. */
const FOUND = 0.5;
/** Rows above this share of the height are the upper part: ceiling, tops of walls, windows and doors. */
const UPPER = 0.55;

/**
 * The room measures of a pair, from its preparation (geometry.ts prepare: both pictures at the analysis size, the
 * result lined up, what is compared), made here unless the caller already has it.
 */
export function roomMeasures(
  source: Gray,
  result: Gray,
  kind: ResultKind,
  p: Prepared = prepare(source, result, kind),
): RoomMeasures {
  const { w, h, src, gS, gR, compared } = p;
  const tS = Math.max(3, 0.15 * quantile(gS.mag, compared, 0.95));
  const tR = Math.max(3, 0.15 * quantile(gR.mag, compared, 0.95));
  const minLength = MIN_LINE * Math.hypot(w, h);
  const sourceSegs = detectSegments(gS, w, h, tS, minLength, compared);
  const resultSegs = detectSegments(gR, w, h, tR, minLength, compared);
  const lostLines: Segment[] = [];
  const addedLines: Segment[] = [];
  const upperRow = UPPER * h;
  const isUpper = (s: Segment) => Math.min(s.y1, s.y2) < upperRow;

  let srcLen = 0;
  let srcUpper = 0;
  let lostLen = 0;
  let lostUpper = 0;
  for (const s of sourceSegs) {
    const found = support(s, gR, w, h, 0.5 * tR, RADIUS, compared);
    srcLen += s.length;
    if (isUpper(s)) srcUpper += s.length;
    if (found.share >= FOUND) continue;
    lostLen += s.length * (1 - found.share);
    if (isUpper(s)) lostUpper += s.length * (1 - found.share);
    lostLines.push(s);
  }
  let addedLen = 0;
  let addedUpper = 0;
  for (const s of resultSegs) {
    const was = support(s, gS, w, h, 0.5 * tS, RADIUS, compared);
    if (was.share >= FOUND) continue;
    addedLen += s.length * (1 - was.share);
    if (isUpper(s)) addedUpper += s.length * (1 - was.share);
    addedLines.push(s);
  }
  const cells = cellDissimilarity(gS, gR, w, h, compared, Math.max(2, 0.5 * tS));
  let nCells = 0;
  let nChanged = 0;
  let nUpper = 0;
  let nUpperChanged = 0;
  let sum = 0;
  for (let k = 0; k < cells.values.length; k++) {
    const v = cells.values[k]!;
    if (v < 0) continue;
    nCells++;
    sum += v;
    const upper = Math.floor(k / cells.cols) * CELL < upperRow;
    if (upper) nUpper++;
    if (v > CELL_CHANGED) {
      nChanged++;
      if (upper) nUpperChanged++;
    }
  }
  const brightChange = brightDifference(src.data, p.res.data, compared);
  return {
    values: {
      brightChange,
      cellsChanged: nCells ? nChanged / nCells : 0,
      cellsChangedUpper: nUpper ? nUpperChanged / nUpper : 0,
      cellsMean: nCells ? sum / nCells : 0,
      lost: srcLen ? lostLen / srcLen : 0,
      lostUpper: srcUpper ? lostUpper / srcUpper : 0,
      added: srcLen ? addedLen / srcLen : 0,
      addedUpper: srcUpper ? addedUpper / srcUpper : 0,
    },
    width: w,
    height: h,
    upperRow,
    lostLines,
    addedLines,
    cells,
  };
}

/**
 * Where the measures `judged` by saw the room change, drawn at the analysis size (change-map.ts). `oldMarks` are
 * measures.ts's marks (3 painted, 4 borrowed, 5 moved), drawn for ADR 0160's score (carriedOrMoved).
 */
export function changeMapOf(m: RoomMeasures, judged: readonly string[], oldMarks?: Uint8Array): ChangeMap {
  const map: ChangeMap = { width: m.width, height: m.height, data: new Uint8Array(m.width * m.height) };
  const upperOnly = (name: string) => name.endsWith("Upper");
  const isUpper = (s: Segment) => Math.min(s.y1, s.y2) < m.upperRow;
  for (const name of judged) {
    if (name === "carriedOrMoved" && oldMarks) {
      for (let i = 0; i < oldMarks.length; i++) if (oldMarks[i]! >= 3) map.data[i] = 255;
    }
    if (name.startsWith("lost")) for (const s of m.lostLines) if (!upperOnly(name) || isUpper(s)) draw(map, s);
    if (name.startsWith("added")) for (const s of m.addedLines) if (!upperOnly(name) || isUpper(s)) draw(map, s);
    if (name.startsWith("cells") || name === "brightChange") {
      const rows = upperOnly(name) ? Math.ceil(m.upperRow / CELL) : m.cells.rows;
      drawCells(map, { ...m.cells, rows: Math.min(rows, m.cells.rows) }, CELL);
    }
  }
  return map;
}

function draw(map: ChangeMap, s: Segment): void {
  const steps = Math.max(1, Math.round(s.length));
  for (let k = 0; k <= steps; k++) {
    const x = Math.round(s.x1 + ((s.x2 - s.x1) * k) / steps);
    const y = Math.round(s.y1 + ((s.y2 - s.y1) * k) / steps);
    if (x >= 0 && y >= 0 && x < map.width && y < map.height) map.data[y * map.width + x] = 255;
  }
}

/** Cells (analysis pixels a side) the appearance of the two pictures is compared in. */
const CELL = 16;

/**
 * Per cell of the compared area, how much the pattern of edge directions differs between the pictures (1 - cosine of
 * their magnitude-weighted orientation histograms; 0 where both are flat). Relighting and tone changes move no
 * edge; another facade, wall or window does.
 */
export function cellDissimilarity(
  gS: { gx: Float32Array; gy: Float32Array; mag: Float32Array },
  gR: { gx: Float32Array; gy: Float32Array; mag: Float32Array },
  w: number,
  h: number,
  compared: Uint8Array,
  flat: number,
): { cols: number; rows: number; values: Float32Array } {
  const cols = Math.floor(w / CELL);
  const rows = Math.floor(h / CELL);
  const values = new Float32Array(cols * rows).fill(-1);
  const hs = new Float32Array(8);
  const hr = new Float32Array(8);
  for (let cy = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx++) {
      hs.fill(0);
      hr.fill(0);
      let inside = 0;
      let es = 0;
      let er = 0;
      for (let y = cy * CELL; y < (cy + 1) * CELL; y++) {
        for (let x = cx * CELL; x < (cx + 1) * CELL; x++) {
          const i = y * w + x;
          if (!compared[i]) continue;
          inside++;
          const ms = gS.mag[i]!;
          const mr = gR.mag[i]!;
          if (ms > flat) {
            es += ms;
            hs[bin(gS.gx[i]!, gS.gy[i]!)]! += ms;
          }
          if (mr > flat) {
            er += mr;
            hr[bin(gR.gx[i]!, gR.gy[i]!)]! += mr;
          }
        }
      }
      if (inside < (CELL * CELL) / 2) continue;
      const n = CELL * CELL;
      if (es < flat * n * 0.05 && er < flat * n * 0.05) {
        values[cy * cols + cx] = 0;
        continue;
      }
      let dot = 0;
      let a = 0;
      let b = 0;
      for (let k = 0; k < 8; k++) {
        dot += hs[k]! * hr[k]!;
        a += hs[k]! * hs[k]!;
        b += hr[k]! * hr[k]!;
      }
      values[cy * cols + cx] = a > 0 && b > 0 ? 1 - dot / Math.sqrt(a * b) : 1;
    }
  }
  return { cols, rows, values };
}

function bin(gx: number, gy: number): number {
  let a = Math.atan2(gy, gx);
  if (a < 0) a += Math.PI;
  return Math.min(7, Math.floor((a / Math.PI) * 8));
}

/** 1 - the intersection over union of the two pictures' brightest tenth (each by its own tones) where compared. */
function brightDifference(a: Float32Array, b: Float32Array, compared: Uint8Array): number {
  const cut = (p: Float32Array) => {
    const hist = new Uint32Array(256);
    let n = 0;
    for (let i = 0; i < p.length; i++) {
      if (!compared[i]) continue;
      hist[Math.max(0, Math.min(255, Math.round(p[i]!)))]!++;
      n++;
    }
    let seen = 0;
    for (let v = 255; v >= 0; v--) {
      seen += hist[v]!;
      if (seen >= 0.1 * n) return v;
    }
    return 0;
  };
  const ca = cut(a);
  const cb = cut(b);
  let inter = 0;
  let union = 0;
  for (let i = 0; i < a.length; i++) {
    if (!compared[i]) continue;
    const x = a[i]! >= ca;
    const y = b[i]! >= cb;
    if (x && y) inter++;
    if (x || y) union++;
  }
  return union ? 1 - inter / union : 0;
}

/**
 * The room measures as the evaluation's candidates (check.ts, Candidates): the real-pair test and the method benches
 * hand this to judgeGrays, so the check Worker, which judges by none of them, does not import this module.
 */
export function candidateMeasures(source: Gray, result: Gray, kind: ResultKind, p: Prepared): Record<string, number> {
  return roomMeasures(source, result, kind, p).values;
}
