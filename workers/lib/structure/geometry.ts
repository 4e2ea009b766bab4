// The facade-lines measure of a sky result (issue 43, docs/decisions/0300-facade-lines-for-sky.md): a sky result may
// replace the sky and relight the whole building (dusk, night), which moves every tone but not the direction of its
// lines. Where the source below the skyline is a line (strong and coherent: a wall edge, a window frame, a roofline),
// the result must still run the same way. Per 16 px cell, the disagreement of the two pictures' dominant orientation
// (the double-angle structure tensor, smoothed over 9 x 9 pixels) over the source's line pixels; the measure is the
// share of cells where it is over a half. Another building, or the same one rebuilt, turns most cells; a relit one few.
// Both pictures at the analysis size, the result lined up on the source (align.ts). Pure TypeScript, relative imports.
import { type Alignment, align, warp } from "./align.ts";
import { type Gradients, type Gray, gradients, type Plane, quantile, type Reduced, reducePair } from "./analysis.ts";
import type { ResultKind } from "./measures.ts";
import { skylineFromMask, skylineFromSource } from "./sky.ts";

/** Box blur of radius r (separable running sums, the window clamped at the borders). */
export function boxBlur(p: Plane, r: number): Plane {
  const { width: w, height: h } = p;
  const tmp = new Float32Array(w * h);
  const out = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    const row = y * w;
    let s = 0;
    for (let k = 0; k <= Math.min(w - 1, r); k++) s += p.data[row + k]!;
    for (let x = 0; x < w; x++) {
      const lo = Math.max(0, x - r);
      const hi = Math.min(w - 1, x + r);
      tmp[row + x] = s / (hi - lo + 1);
      if (x + r + 1 < w) s += p.data[row + x + r + 1]!;
      if (x - r >= 0) s -= p.data[row + x - r]!;
    }
  }
  // Down the columns, row by row (memory order): each column's running sum adds and drops the same values in the
  // same order as a walk down that column would.
  const sums = new Float64Array(w);
  for (let k = 0; k <= Math.min(h - 1, r); k++) {
    for (let x = 0; x < w; x++) sums[x] = sums[x]! + tmp[k * w + x]!;
  }
  for (let y = 0; y < h; y++) {
    const n = Math.min(h - 1, y + r) - Math.max(0, y - r) + 1;
    const row = y * w;
    const add = y + r + 1 < h ? (y + r + 1) * w : -1;
    const drop = y - r >= 0 ? (y - r) * w : -1;
    for (let x = 0; x < w; x++) {
      let s = sums[x]!;
      out[row + x] = s / n;
      if (add >= 0) s += tmp[add + x]!;
      if (drop >= 0) s -= tmp[drop + x]!;
      sums[x] = s;
    }
  }
  return { width: w, height: h, data: out };
}

/** Both pictures at the analysis size, the result lined up, and what is compared (inside it, below the skyline). */
export interface Prepared {
  w: number;
  h: number;
  src: Plane;
  res: Plane;
  gS: Gradients;
  gR: Gradients;
  compared: Uint8Array;
  /** |log sx| + |log sy| of the alignment. */
  scale: number;
  /** The result's gradients on its own grid, before it was lined up, and the alignment that lines it up. */
  gOwn: Gradients;
  alignment: Alignment;
}

export function prepare(
  source: Gray,
  result: Gray,
  kind: ResultKind,
  skyMask?: Gray,
  reduced: Reduced = reducePair(source, result),
): Prepared {
  const { width: w, height: h } = reduced.size;
  const src = reduced.src;
  const resRaw = reduced.res;
  const gS = gradients(src);
  const all = new Uint8Array(w * h).fill(1);
  const strong = Math.max(4, 0.4 * quantile(gS.mag, all, 0.95));
  const skyline =
    kind !== "sky"
      ? new Int32Array(w)
      : skyMask
        ? skylineFromMask(skyMask, w, h)
        : skylineFromSource(src, gS.mag, strong);
  const a = align(gS, reduced.gRes, w, h, strong, new Uint8Array(h).fill(1));
  const warped = warp(resRaw, a);
  const gR = gradients(warped.plane);
  const compared = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) compared[y * w + x] = warped.inside[y * w + x] && y >= skyline[x]! ? 1 : 0;
  }
  return {
    w,
    h,
    src,
    res: warped.plane,
    gS,
    gR,
    compared,
    scale: Math.abs(Math.log(a.sx)) + Math.abs(Math.log(a.sy)),
    gOwn: reduced.gRes,
    alignment: a,
  };
}

/**
 * The double-angle orientation field (gx² - gy², 2 gx gy) and the energy (gx² + gy²), each averaged over a
 * (2r + 1)² box: the field's length over the energy is how coherent (one direction) the neighbourhood is. Only its
 * first `rows` rows are asked for: the box reaches r rows further, so r + 1 more are made and the rest left out (a
 * row's value is the same whatever lies more than r rows below it).
 */
export function orientationField(g: Gradients, w: number, h: number, r: number, mask: Uint8Array, rows = h) {
  const made = Math.min(h, rows + r + 1);
  const c = new Float32Array(w * made);
  const s = new Float32Array(w * made);
  const e = new Float32Array(w * made);
  for (let i = 0; i < w * made; i++) {
    if (!mask[i]) continue;
    const gx = g.gx[i]!;
    const gy = g.gy[i]!;
    c[i] = gx * gx - gy * gy;
    s[i] = 2 * gx * gy;
    e[i] = gx * gx + gy * gy;
  }
  return {
    C: boxBlur({ width: w, height: made, data: c }, r).data,
    S: boxBlur({ width: w, height: made, data: s }, r).data,
    E: boxBlur({ width: w, height: made, data: e }, r).data,
  };
}

/** Cells (analysis pixels a side) the facade lines are judged in. */
export const FACADE_CELL = 16;
/** A cell is judged when it holds at least this many of the source's line pixels. */
const FACADE_MIN_PIXELS = 12;
/** A cell whose mean disagreement (1 - cosine of the double angles) is over this has turned. */
export const FACADE_TURNED = 0.5;

export interface FacadeLines {
  /** The share of judged cells that turned: 0 when every line of the source still runs the same way. */
  value: number;
  /** Per cell its disagreement, -1 where not judged (too few of the source's line pixels). */
  cells: { cols: number; rows: number; values: Float32Array };
  /** Where the compared area's lines are, the mean disagreement over all of them (a second look, not judged). */
  mean: number;
}

/**
 * The facade lines of `p` (prepare) at smoothing radius `r` (4: 9 x 9 pixels), over rows above `rowTo` of the
 * height. The source's line pixels: in its strongest 30 % of energy where compared, and coherent (the field's length
 * at least half the energy).
 */
export function facadeLines(p: Prepared, r = 4, rowTo = 1): FacadeLines {
  const { w, h, gS, gR, compared } = p;
  const A = orientationField(gS, w, h, r, compared);
  const B = orientationField(gR, w, h, r, compared);
  let n = 0;
  for (let i = 0; i < w * h; i++) if (compared[i]) n++;
  const energies = new Float32Array(n);
  for (let i = 0, k = 0; i < w * h; i++) if (compared[i]) energies[k++] = A.E[i]!;
  energies.sort();
  const strong = n ? energies[Math.floor(0.7 * n)]! : 0;
  const cols = Math.ceil(w / FACADE_CELL);
  const rows = Math.ceil(h / FACADE_CELL);
  const sum = new Float64Array(cols * rows);
  const count = new Float64Array(cols * rows);
  let all = 0;
  let lines = 0;
  for (let y = 0; y < Math.min(h, Math.ceil(rowTo * h)); y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (!compared[i]) continue;
      const ma = Math.sqrt(A.C[i]! * A.C[i]! + A.S[i]! * A.S[i]!);
      if (A.E[i]! < strong || ma < 0.5 * A.E[i]!) continue;
      const mb = Math.sqrt(B.C[i]! * B.C[i]! + B.S[i]! * B.S[i]!);
      const cos = mb > 1e-6 ? (A.C[i]! * B.C[i]! + A.S[i]! * B.S[i]!) / (ma * mb) : 0;
      all += cos;
      lines++;
      const c = Math.floor(y / FACADE_CELL) * cols + Math.floor(x / FACADE_CELL);
      sum[c]! += cos;
      count[c]!++;
    }
  }
  const values = new Float32Array(cols * rows).fill(-1);
  let judged = 0;
  let turned = 0;
  for (let c = 0; c < values.length; c++) {
    if (count[c]! < FACADE_MIN_PIXELS) continue;
    const v = 1 - sum[c]! / count[c]!;
    values[c] = v;
    judged++;
    if (v > FACADE_TURNED) turned++;
  }
  return { value: judged ? turned / judged : 0, cells: { cols, rows, values }, mean: lines ? 1 - all / lines : 0 };
}

/** The upper share of the picture the room's lines are judged in: the ceiling, the tops of walls, the openings. */
export const ROOM_TENSOR_ROWS = 0.55;

export interface RoomTensor {
  /** 0 when every neighbourhood of the upper part runs the same way in both pictures; 1 when none does. */
  value: number;
  /** The same weighted by the source's lines only (lines lost), and by the result's only (lines added). */
  src: number;
  res: number;
  /** Per cell of the upper part its disagreement weighted by the source's lines, -1 where not judged. */
  cells: { cols: number; rows: number; values: Float32Array };
}

/**
 * The room's lines of a staged result (issue 43, docs/decisions/0319-room-lines-for-staging.md): over the upper
 * ROOM_TENSOR_ROWS of the picture, where furniture seldom stands, how far the two pictures' dominant orientations
 * (the double-angle structure tensor over (2r + 1)² pixels) disagree, as a mean over pixels weighted by the square
 * root of each picture's coherent energy, taken both ways (the source's lines lost, the result's lines added) and
 * averaged. A pixel where one picture has no direction at all counts wholly against, weighted by the other's energy.
 * A restyled room keeps where its ceiling line, corners and window frames run; another room or a rebuilt wall does not.
 * The result's field is measured on its own pixels, then carried onto the source's grid (resultField).
 */
export function roomTensor(p: Prepared, r = 4, rowTo = ROOM_TENSOR_ROWS): RoomTensor {
  const { w, h, gS, compared } = p;
  const upper = Math.min(h, Math.ceil(rowTo * h));
  // Each picture's field over all of its own pixels; only the pixels compared are summed below.
  const A = orientationField(gS, w, h, r, new Uint8Array(w * h).fill(1), upper);
  const B = resultField(p, r);
  const cols = Math.ceil(w / FACADE_CELL);
  const rows = Math.ceil(upper / FACADE_CELL);
  const cellNum = new Float64Array(cols * rows);
  const cellDen = new Float64Array(cols * rows);
  let num = 0;
  let den = 0;
  let numR = 0;
  let denR = 0;
  for (let y = 0; y < upper; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (!compared[i]) continue;
      const ma = Math.hypot(A.C[i]!, A.S[i]!);
      const mb = Math.hypot(B.C[i]!, B.S[i]!);
      if (ma <= 1e-6 || mb <= 1e-6) {
        den += ma;
        denR += mb;
        continue;
      }
      const cos = (A.C[i]! * B.C[i]! + A.S[i]! * B.S[i]!) / (ma * mb);
      const wa = Math.sqrt(ma);
      const wb = Math.sqrt(mb);
      num += wa * cos;
      den += wa;
      numR += wb * cos;
      denR += wb;
      const c = Math.floor(y / FACADE_CELL) * cols + Math.floor(x / FACADE_CELL);
      cellNum[c]! += wa * cos;
      cellDen[c]! += wa;
    }
  }
  const values = new Float32Array(cols * rows).fill(-1);
  for (let c = 0; c < values.length; c++) if (cellDen[c]! > 0) values[c] = 1 - cellNum[c]! / cellDen[c]!;
  const src = den ? 1 - num / den : 0;
  const res = denR ? 1 - numR / denR : 0;
  return { value: (src + res) / 2, src, res, cells: { cols, rows, values } };
}

/**
 * The result's double-angle field (orientationField) measured on the result's own grid, then carried onto the
 * source's by the alignment (docs/decisions/0362-the-results-lines-measured-on-its-own-pixels.md). Resampling the
 * result first and measuring after made the field depend on where the alignment fell between pixels: an interpolation
 * half a pixel off smooths one axis only, which gives a flat wall or ceiling a direction the source's does not have.
 * The field, an average over (2r + 1)² pixels, changes little when carried a fraction of a pixel.
 */
export function resultField(p: Prepared, r: number): { C: Float32Array; S: Float32Array } {
  const { w, h } = p;
  const own = orientationField(p.gOwn, w, h, r, new Uint8Array(w * h).fill(1));
  return {
    C: warp({ width: w, height: h, data: own.C }, p.alignment).plane.data,
    S: warp({ width: w, height: h, data: own.S }, p.alignment).plane.data,
  };
}
