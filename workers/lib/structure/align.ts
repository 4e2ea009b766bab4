// Lines a result up with its source at the analysis size (docs/decisions/0160-structure-check.md). The provider
// returns other sizes and aspects than it was sent (staging 768x512 x a factor, removal 768x576) and may crop a few
// per cent: both pictures are reduced to the source's analysis grid, then each axis gets its own scale and shift.
import type { Gradients, Plane } from "./analysis.ts";

/** Result coordinate = (source coordinate - centre) * scale + centre + shift, on each axis. */
export interface Alignment {
  sx: number;
  tx: number;
  sy: number;
  ty: number;
}

/** Scales searched: a 3:2 source returned as 4:3 and cropped back is a 1.125 scale on one axis. */
const MIN_SCALE = 0.85;
const MAX_SCALE = 1.18;
/** Shifts searched, as a fraction of the axis. */
const MAX_SHIFT = 0.1;
/** Distances are counted up to this many pixels: a source edge with no result edge nearer costs this much. */
const CAP = 4;
/** Source edge points used per axis. */
const POINTS = 200;

/**
 * The scale and shift on each axis under which the source's edges land on the result's edges (a chamfer match): the
 * source's vertical edges against the result's vertical edges along each row for x, the horizontal ones along each
 * column for y, each axis in turn, twice. Furniture adds result edges, which costs nothing; it hides source edges,
 * which costs every candidate alike. `edge` is the source's edge threshold; rows with rowWeight 0 are left out.
 */
export function align(
  src: Gradients,
  res: Gradients,
  width: number,
  height: number,
  edge: number,
  rowWeight: Uint8Array,
): Alignment {
  const vertical: number[] = [];
  const horizontal: number[] = [];
  for (let y = 2; y < height - 2; y++) {
    if (!rowWeight[y]) continue;
    for (let x = 2; x < width - 2; x++) {
      const i = y * width + x;
      if (src.mag[i]! < edge) continue;
      const ax = Math.abs(src.gx[i]!);
      const ay = Math.abs(src.gy[i]!);
      if (ax > 2 * ay && src.mag[i]! >= src.mag[i - 1]! && src.mag[i]! >= src.mag[i + 1]!) vertical.push(i);
      else if (ay > 2 * ax && src.mag[i]! >= src.mag[i - width]! && src.mag[i]! >= src.mag[i + width]!)
        horizontal.push(i);
    }
  }
  const v = thin(vertical);
  const h = thin(horizontal);
  const weak = edge * 0.5;
  const dx = distances(res, width, height, weak, true);
  const dy = distances(res, width, height, weak, false);
  let a: Alignment = { sx: 1, tx: 0, sy: 1, ty: 0 };
  const costV = costOf(v, dx, width, height);
  const costH = costOf(h, dy, width, height);
  // Most results come back at the source's framing (stretched to the provider's size and back) or cut by a few per
  // cent: a fine search near the identity, then the wide one (a 4:3 photo cut to 3:2 is a 1.125 scale).
  for (let round = 0; round < 2; round++) {
    if (v.length >= 20) {
      const best = search(width, (s, t) => costV({ ...a, sx: s, tx: t }), true);
      a = { ...a, sx: best.scale, tx: best.shift };
    }
    if (h.length >= 20) {
      const best = search(height, (s, t) => costH({ ...a, sy: s, ty: t }), true);
      a = { ...a, sy: best.scale, ty: best.shift };
    }
  }
  const nearCost = costV(a) + costH(a);
  let wide: Alignment = { sx: 1, tx: 0, sy: 1, ty: 0 };
  for (let round = 0; round < 1; round++) {
    if (v.length >= 20) {
      const best = search(width, (s, t) => costV({ ...wide, sx: s, tx: t }), false);
      wide = { ...wide, sx: best.scale, tx: best.shift };
    }
    if (h.length >= 20) {
      const best = search(height, (s, t) => costH({ ...wide, sy: s, ty: t }), false);
      wide = { ...wide, sy: best.scale, ty: best.shift };
    }
  }
  // The wide search must do clearly better: dense texture (bricks, planks) lets many framings look alike.
  if (costV(wide) + costH(wide) < nearCost - 0.15) a = wide;
  return a;
}

function thin(points: number[]): number[] {
  if (points.length <= POINTS) return points;
  const step = points.length / POINTS;
  return Array.from({ length: POINTS }, (_, k) => points[Math.floor(k * step)]!);
}

/**
 * Per pixel, how far (up to CAP) the nearest result edge of one direction is: along the row for vertical edges
 * (`alongRows`), along the column for horizontal ones.
 */
function distances(res: Gradients, w: number, h: number, weak: number, alongRows: boolean): Uint8Array {
  // Which pixels are edges of this direction, once, then a forward and a backward sweep along each line.
  const edge = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) {
    if (res.mag[i]! < weak) continue;
    const ax = Math.abs(res.gx[i]!);
    const ay = Math.abs(res.gy[i]!);
    if (alongRows ? ax > ay : ay > ax) edge[i] = 1;
  }
  const out = new Uint8Array(w * h);
  const lines = alongRows ? h : w;
  const len = alongRows ? w : h;
  const stride = alongRows ? 1 : w;
  for (let l = 0; l < lines; l++) {
    const first = alongRows ? l * w : l;
    let last = -1000;
    for (let k = 0, i = first; k < len; k++, i += stride) {
      if (edge[i]) last = k;
      out[i] = Math.min(CAP, k - last);
    }
    last = 1000 + len;
    for (let k = len - 1, i = first + (len - 1) * stride; k >= 0; k--, i -= stride) {
      if (edge[i]) last = k;
      if (last - k < out[i]!) out[i] = last - k;
    }
  }
  return out;
}

/** The mean capped distance of `points` mapped by an alignment; coordinates taken apart once, not per candidate. */
function costOf(points: number[], dist: Uint8Array, w: number, h: number): (a: Alignment) => number {
  const cx = (w - 1) / 2;
  const cy = (h - 1) / 2;
  const rx = Float64Array.from(points, (i) => (i % w) - cx);
  const ry = Float64Array.from(points, (i) => (i - (i % w)) / w - cy);
  const n = points.length;
  return (a) => {
    let sum = 0;
    for (let k = 0; k < n; k++) {
      const u = Math.round(rx[k]! * a.sx + cx + a.tx);
      const v = Math.round(ry[k]! * a.sy + cy + a.ty);
      sum += u < 0 || v < 0 || u >= w || v >= h ? CAP : dist[v * w + u]!;
    }
    return sum / n;
  };
}

/**
 * The best scale and shift for one axis of `n` pixels: near the identity only (`near`: scales 0.96-1.04, shifts of
 * up to 4 % of the axis), or over the whole range in coarse steps; then fine steps around the best.
 */
function search(n: number, f: (scale: number, shift: number) => number, near: boolean) {
  // A change from no scale and no shift must earn its keep: ties and near-ties stay at the identity.
  const bias = (s: number, t: number) => 0.02 * (Math.abs(s - 1) * 20 + Math.abs(t) / 8);
  let best = { scale: 1, shift: 0, c: f(1, 0) };
  const range = near ? 0.04 : 0;
  const lo = near ? 1 - range : MIN_SCALE;
  const hi = near ? 1 + range : MAX_SCALE;
  const maxShift = Math.round((near ? 0.04 : MAX_SHIFT) * n);
  const step = near ? 0.01 : 0.03;
  const shiftStep = near ? 2 : 3;
  for (let scale = lo; scale <= hi + 1e-9; scale += step) {
    for (let shift = -maxShift; shift <= maxShift; shift += shiftStep) {
      const c = f(scale, shift) + bias(scale, shift);
      if (c < best.c) best = { scale, shift, c };
    }
  }
  const coarse = best;
  for (let ds = -step; ds <= step + 1e-9; ds += step / 4) {
    for (let dt = -shiftStep; dt <= shiftStep; dt += shiftStep / 4) {
      const s = coarse.scale + ds;
      const t = coarse.shift + dt;
      const c = f(s, t) + bias(s, t);
      if (c < best.c) best = { scale: s, shift: t, c };
    }
  }
  return { scale: best.scale, shift: best.shift };
}

/** The result resampled onto the source's grid (bilinear), and which pixels fell inside the result. */
export function warp(res: Plane, a: Alignment): { plane: Plane; inside: Uint8Array } {
  const { width: w, height: h } = res;
  const out = new Float32Array(w * h);
  const inside = new Uint8Array(w * h);
  const cx = (w - 1) / 2;
  const cy = (h - 1) / 2;
  for (let y = 0; y < h; y++) {
    const v = (y - cy) * a.sy + cy + a.ty;
    if (v < 0 || v > h - 1) continue;
    const k = Math.min(h - 2, Math.floor(v));
    const fy = v - k;
    for (let x = 0; x < w; x++) {
      const u = (x - cx) * a.sx + cx + a.tx;
      if (u < 0 || u > w - 1) continue;
      const j = Math.min(w - 2, Math.floor(u));
      const fx = u - j;
      const o = k * w + j;
      const top = res.data[o]! * (1 - fx) + res.data[o + 1]! * fx;
      const bottom = res.data[o + w]! * (1 - fx) + res.data[o + w + 1]! * fx;
      out[y * w + x] = top * (1 - fy) + bottom * fy;
      inside[y * w + x] = 1;
    }
  }
  return { plane: { width: w, height: h, data: out }, inside };
}
