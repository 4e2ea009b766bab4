// The small image operations the structure measures are made of (docs/decisions/0160-structure-check.md).
import type { Gradients, Plane } from "./analysis.ts";

/** Orientation bins over 180 degrees. */
export const BINS = 8;
/** How far on each side of an edge (analysis pixels) its two surfaces are sampled. */
const SIDE = 3;
/** The least difference (gray levels) between an edge's two surfaces for one to be carried over the other. */
const MIN_STEP = 6;

/**
 * The result's tones mapped onto the source's: for each source tone (in 16 bands), the median result tone of the
 * pixels that had it, made monotone. A tone curve, exposure or white balance moves every pixel of a band alike;
 * furniture changes some pixels of many bands, which the median ignores (a histogram match would not).
 */
export function matchTones(res: Plane, src: Plane, mask: Uint8Array): Plane {
  const BANDS = 16;
  const hist = Array.from({ length: BANDS }, () => new Uint32Array(256));
  const count = new Uint32Array(BANDS);
  const sum = new Float64Array(BANDS);
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    const band = Math.min(BANDS - 1, Math.max(0, Math.floor((src.data[i]! * BANDS) / 256)));
    hist[band]![Math.min(255, Math.max(0, Math.round(res.data[i]!)))]!++;
    count[band]!++;
    sum[band]! += src.data[i]!;
  }
  // Per band with enough pixels: (median result tone, mean source tone, pixel count).
  const bands: { from: number; to: number; n: number }[] = [];
  for (let band = 0; band < BANDS; band++) {
    if (count[band]! < 30) continue;
    let seen = 0;
    let median = 0;
    for (let v = 0; v < 256; v++) {
      seen += hist[band]![v]!;
      if (seen * 2 >= count[band]!) {
        median = v;
        break;
      }
    }
    bands.push({ from: median, to: sum[band]! / count[band]!, n: count[band]! });
  }
  // The heaviest increasing run of bands: a band that furniture took over (its pixels now show something else
  // entirely) falls out of order and is dropped, instead of bending the whole curve.
  const weight = bands.map((b) => b.n);
  const prev = bands.map(() => -1);
  for (let i = 0; i < bands.length; i++) {
    for (let j = 0; j < i; j++) {
      if (bands[j]!.from + 1 < bands[i]!.from && weight[j]! + bands[i]!.n > weight[i]!) {
        weight[i] = weight[j]! + bands[i]!.n;
        prev[i] = j;
      }
    }
  }
  let end = weight.indexOf(Math.max(...weight, 0));
  const kept: number[] = [];
  while (end >= 0) {
    kept.unshift(end);
    end = prev[end]!;
  }
  const from = kept.map((k) => bands[k]!.from);
  const to = kept.map((k) => bands[k]!.to);
  if (from.length < 2) return res;
  const lut = new Float32Array(256);
  for (let v = 0; v < 256; v++) {
    let k = 0;
    while (k < from.length - 2 && v > from[k + 1]!) k++;
    const t = (v - from[k]!) / (from[k + 1]! - from[k]!);
    // Beyond the outer bands: the same slope as the nearest pair, within 0..255.
    lut[v] = Math.min(255, Math.max(0, to[k]! + t * (to[k + 1]! - to[k]!)));
  }
  const out = new Float32Array(res.data.length);
  for (let i = 0; i < out.length; i++) {
    const v = Math.min(255, Math.max(0, res.data[i]!));
    const k = Math.floor(v);
    const f = v - k;
    out[i] = k < 255 ? lut[k]! * (1 - f) + lut[k + 1]! * f : lut[255]!;
  }
  return { width: res.width, height: res.height, data: out };
}

/** The largest 8-connected group of marked pixels (gaps of one pixel bridged), with its bounding box. */
export function largestRun(marked: Uint8Array, w: number, h: number, reach = 2) {
  const seen = new Uint8Array(w * h);
  const stack: number[] = [];
  let best = { count: 0, box: { x: 0, y: 0, width: 0, height: 0 } };
  for (let start = 0; start < w * h; start++) {
    if (!marked[start] || seen[start]) continue;
    let count = 0;
    let x0 = w;
    let y0 = h;
    let x1 = 0;
    let y1 = 0;
    seen[start] = 1;
    stack.push(start);
    while (stack.length) {
      const i = stack.pop()!;
      const x = i % w;
      const y = (i - x) / w;
      count++;
      x0 = Math.min(x0, x);
      y0 = Math.min(y0, y);
      x1 = Math.max(x1, x);
      y1 = Math.max(y1, y);
      for (let dy = -reach; dy <= reach; dy++) {
        for (let dx = -reach; dx <= reach; dx++) {
          const xx = x + dx;
          const yy = y + dy;
          if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
          const j = yy * w + xx;
          if (marked[j] && !seen[j]) {
            seen[j] = 1;
            stack.push(j);
          }
        }
      }
    }
    if (count > best.count) best = { count, box: { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 } };
  }
  return best;
}

/** Mean SSIM of two maps over 8 x 8 windows (step 4) that lie wholly in the compared area. */
export function gradientSsim(a: Float32Array, b: Float32Array, mask: Uint8Array, w: number, h: number): number {
  const C1 = (0.01 * 64) ** 2;
  const C2 = (0.03 * 64) ** 2;
  let sum = 0;
  let n = 0;
  for (let y = 0; y + 8 <= h; y += 4) {
    for (let x = 0; x + 8 <= w; x += 4) {
      if (!mask[y * w + x] || !mask[(y + 7) * w + x + 7]) continue;
      let ma = 0;
      let mb = 0;
      for (let j = 0; j < 8; j++)
        for (let i = 0; i < 8; i++) {
          ma += a[(y + j) * w + x + i]!;
          mb += b[(y + j) * w + x + i]!;
        }
      ma /= 64;
      mb /= 64;
      let va = 0;
      let vb = 0;
      let cov = 0;
      for (let j = 0; j < 8; j++)
        for (let i = 0; i < 8; i++) {
          const da = a[(y + j) * w + x + i]! - ma;
          const db = b[(y + j) * w + x + i]! - mb;
          va += da * da;
          vb += db * db;
          cov += da * db;
        }
      sum += ((2 * ma * mb + C1) * (2 * (cov / 63) + C2)) / ((ma * ma + mb * mb + C1) * (va / 63 + vb / 63 + C2));
      n++;
    }
  }
  return n > 0 ? sum / n : 1;
}

/** Dilates then erodes a mask by `r` (a square): closes the chance holes in a changed object. Running counts. */
export function closeMask(mask: Uint8Array, w: number, h: number, r: number) {
  const a = new Uint8Array(w * h);
  const b = new Uint8Array(w * h);
  // Grow along rows (a), then columns (b); shrink along rows (a), then columns (mask). A pixel outside the picture
  // counts as unmarked when growing and marked when shrinking.
  slide(mask, a, w, h, 1, w, r, true);
  slide(a, b, h, w, w, 1, r, true);
  slide(b, a, w, h, 1, w, r, false);
  slide(a, mask, h, w, w, 1, r, false);
}

/** One pass of a running count along `lines` lines of `n` pixels (`step` apart, lines `next` apart). */
function slide(
  src: Uint8Array,
  out: Uint8Array,
  n: number,
  lines: number,
  step: number,
  next: number,
  r: number,
  grow: boolean,
) {
  for (let l = 0; l < lines; l++) {
    const base = l * next;
    let count = 0;
    for (let k = 0; k < Math.min(r, n); k++) count += src[base + k * step]!;
    for (let k = 0; k < n; k++) {
      if (k + r < n) count += src[base + (k + r) * step]!;
      if (k - r - 1 >= 0) count -= src[base + (k - r - 1) * step]!;
      if (grow) out[base + k * step] = count > 0 ? 1 : 0;
      else {
        const span = Math.min(n - 1, k + r) - Math.max(0, k - r) + 1;
        out[base + k * step] = count === span ? 1 : 0;
      }
    }
  }
}

export function orientationBins(g: { gx: Float32Array; gy: Float32Array }): Uint8Array {
  // tan of 22.5 and 67.5 degrees: the bin edges, so no arctangent is needed.
  const T1 = 0.41421356;
  const T2 = 2.41421356;
  const out = new Uint8Array(g.gx.length);
  for (let i = 0; i < out.length; i++) {
    let x = g.gx[i]!;
    let y = g.gy[i]!;
    // Fold onto 0..180 degrees (y >= 0).
    if (y < 0 || (y === 0 && x < 0)) {
      x = -x;
      y = -y;
    }
    const ax = Math.abs(x);
    // 8 bins of 22.5 degrees from 0: 0-22.5, 22.5-45, ..., 157.5-180.
    let bin: number;
    if (y <= T1 * ax) bin = x >= 0 ? 0 : 7;
    else if (y <= ax) bin = x >= 0 ? 1 : 6;
    else if (y <= T2 * ax) bin = x >= 0 ? 2 : 5;
    else bin = x >= 0 ? 3 : 4;
    out[i] = bin;
  }
  return out;
}

/** A local maximum of the gradient magnitude across the edge (the edge's centre line). */
export function isRidge(g: Gradients, i: number, w: number): boolean {
  const ax = Math.abs(g.gx[i]!);
  const ay = Math.abs(g.gy[i]!);
  const step = ax > 2.4 * ay ? 1 : ay > 2.4 * ax ? w : g.gx[i]! * g.gy[i]! > 0 ? w + 1 : w - 1;
  const m = g.mag[i]!;
  return m >= g.mag[i - step]! && m >= g.mag[i + step]!;
}

/**
 * Painted over: where the source had an edge between two surfaces, the result carries one of them across it — that
 * side is unchanged and the other side now looks like it (the caller checked that no result edge is near). Furniture
 * in front of an edge covers both sides with something else; a window painted over, or a wall line moved, leaves the
 * wall on one side and extends it over the other.
 */
export function continuesASide(src: Plane, res: Plane, g: Gradients, i: number, w: number, h: number): boolean {
  const x = i % w;
  const y = (i - x) / w;
  const nx = g.gx[i]! / g.mag[i]!;
  const ny = g.gy[i]! / g.mag[i]!;
  const at = (p: Plane, d: number) => {
    const xx = Math.min(w - 1, Math.max(0, Math.round(x + d * nx)));
    const yy = Math.min(h - 1, Math.max(0, Math.round(y + d * ny)));
    return p.data[yy * w + xx]!;
  };
  const a = at(src, SIDE);
  const b = at(src, -SIDE);
  const ra = at(res, SIDE);
  const rb = at(res, -SIDE);
  // A thin line (a slat, a seam) has the same surface on both sides: nothing to carry over, and blur loses it anyway.
  if (Math.abs(a - b) < MIN_STEP) return false;
  const tolerance = Math.max(3, 0.25 * Math.abs(a - b));
  const keepsA = Math.abs(ra - a) < tolerance && Math.abs(rb - a) < tolerance;
  const keepsB = Math.abs(rb - b) < tolerance && Math.abs(ra - b) < tolerance;
  return keepsA || keepsB;
}
