// Straight line segments of a picture and how well another picture supports them (issue 43). Real AI results redraw
// the whole frame, so no pixel of the source survives; what survives in a result that kept the room is its lines: the
// wall, ceiling and floor lines and the frames of windows and doors, each within a few pixels and degrees of where it
// was. A simplified line segment detector (LSD's region growing on the level-line angle, without its a-contrario
// test) finds them; support is counted along each segment. Pure TypeScript, relative imports only.
import type { Gradients } from "./analysis.ts";

export interface Segment {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  /** Direction of the line, radians in [0, pi). */
  angle: number;
  length: number;
  /** Mean gradient magnitude along it. */
  strength: number;
}

/** Angle tolerance of region growing and of support (22.5 degrees, LSD's). */
const TOLERANCE = Math.PI / 8;

function lineAngle(gx: number, gy: number): number {
  // The level line runs across the gradient.
  let a = Math.atan2(gx, -gy);
  if (a < 0) a += Math.PI;
  if (a >= Math.PI) a -= Math.PI;
  return a;
}

/** The difference of two directions in [0, pi), which wrap at pi. */
function angleDiff(a: number, b: number): number {
  const d = a > b ? a - b : b - a;
  return d > Math.PI / 2 ? Math.PI - d : d;
}

/**
 * Segments at least `minLength` pixels long among the pixels whose gradient is at least `threshold`. `mask` (optional)
 * leaves pixels out (0).
 */
export function detectSegments(
  g: Gradients,
  width: number,
  height: number,
  threshold: number,
  minLength: number,
  mask?: Uint8Array,
): Segment[] {
  const n = width * height;
  const angles = new Float32Array(n);
  // Twice the angle's cosine and sine: region growing averages directions that wrap at 180 degrees.
  const cos2 = new Float32Array(n);
  const sin2 = new Float32Array(n);
  const candidates: number[] = [];
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      if (g.mag[i]! < threshold || (mask && !mask[i])) continue;
      const a = lineAngle(g.gx[i]!, g.gy[i]!);
      angles[i] = a;
      cos2[i] = Math.cos(2 * a);
      sin2[i] = Math.sin(2 * a);
      candidates.push(i);
    }
  }
  // Strongest first, by a counting sort on the magnitude in quarter levels (LSD's pseudo-ordering).
  const order = pseudoOrder(candidates, g.mag);
  const used = new Uint8Array(n);
  const segments: Segment[] = [];
  const region: number[] = [];
  for (const seed of order) {
    if (used[seed]) continue;
    region.length = 0;
    region.push(seed);
    used[seed] = 1;
    let sx = cos2[seed]!;
    let sy = sin2[seed]!;
    let regionAngle = angles[seed]!;
    for (let k = 0; k < region.length; k++) {
      const p = region[k]!;
      const px = p % width;
      const py = (p - px) / width;
      for (let dy = -1; dy <= 1; dy++) {
        for (let dx = -1; dx <= 1; dx++) {
          const qx = px + dx;
          const qy = py + dy;
          if (qx < 1 || qy < 1 || qx >= width - 1 || qy >= height - 1) continue;
          const q = qy * width + qx;
          if (used[q] || g.mag[q]! < threshold || (mask && !mask[q])) continue;
          if (angleDiff(angles[q]!, regionAngle) > TOLERANCE) continue;
          used[q] = 1;
          region.push(q);
          sx += cos2[q]!;
          sy += sin2[q]!;
          // The region's direction settles as it grows: recomputed at every pixel at first, then every eighth.
          if (region.length < 32 || (region.length & 7) === 0) {
            regionAngle = Math.atan2(sy, sx) / 2;
            if (regionAngle < 0) regionAngle += Math.PI;
          }
        }
      }
    }
    if (region.length < minLength) continue;
    const seg = fitSegment(region, g, width, regionAngle);
    if (seg && seg.length >= minLength) segments.push(seg);
  }
  return segments;
}

function pseudoOrder(candidates: number[], mag: Float32Array): Int32Array {
  const BINS = 1024;
  let top = 0;
  for (const i of candidates) top = Math.max(top, mag[i]!);
  const scale = (BINS - 1) / (top || 1);
  const count = new Int32Array(BINS + 1);
  for (const i of candidates) count[BINS - 1 - Math.floor(mag[i]! * scale)]!++;
  for (let b = 1; b <= BINS; b++) count[b]! += count[b - 1]!;
  const out = new Int32Array(candidates.length);
  for (let k = candidates.length - 1; k >= 0; k--) {
    const i = candidates[k]!;
    out[--count[BINS - 1 - Math.floor(mag[i]! * scale)]!] = i;
  }
  return out;
}

/** The segment a region of pixels makes, when it is long and thin enough to be a line. */
function fitSegment(region: number[], g: Gradients, width: number, angle: number): Segment | null {
  let wSum = 0;
  let cx = 0;
  let cy = 0;
  for (const p of region) {
    const m = g.mag[p]!;
    wSum += m;
    cx += (p % width) * m;
    cy += Math.floor(p / width) * m;
  }
  cx /= wSum;
  cy /= wSum;
  const dx = Math.cos(angle);
  const dy = Math.sin(angle);
  let lo = Infinity;
  let hi = -Infinity;
  let wLo = Infinity;
  let wHi = -Infinity;
  for (const p of region) {
    const x = (p % width) - cx;
    const y = Math.floor(p / width) - cy;
    const along = x * dx + y * dy;
    const across = -x * dy + y * dx;
    lo = Math.min(lo, along);
    hi = Math.max(hi, along);
    wLo = Math.min(wLo, across);
    wHi = Math.max(wHi, across);
  }
  const length = hi - lo + 1;
  const thickness = wHi - wLo + 1;
  // A line: long against its thickness, and its pixels fill the rectangle they span reasonably.
  if (thickness > Math.max(3, length / 5)) return null;
  if (region.length < 0.5 * length) return null;
  return {
    x1: cx + lo * dx,
    y1: cy + lo * dy,
    x2: cx + hi * dx,
    y2: cy + hi * dy,
    angle,
    length,
    strength: wSum / region.length,
  };
}

/**
 * The share of `seg` (sampled every pixel) along which `g` has an edge within `radius` pixels across it, at least
 * `threshold` strong and within the angle tolerance of the segment's direction. `inside` (optional) says which pixels
 * of `g` are in the picture: points outside count as neither.
 */
export function support(
  seg: Segment,
  g: Gradients,
  width: number,
  height: number,
  threshold: number,
  radius: number,
  inside?: Uint8Array,
): { share: number; points: number } {
  const steps = Math.max(1, Math.round(seg.length));
  const nx = -Math.sin(seg.angle);
  const ny = Math.cos(seg.angle);
  let points = 0;
  let hits = 0;
  for (let s = 0; s <= steps; s++) {
    const t = s / steps;
    const x = seg.x1 + (seg.x2 - seg.x1) * t;
    const y = seg.y1 + (seg.y2 - seg.y1) * t;
    const xi = Math.round(x);
    const yi = Math.round(y);
    if (xi < 1 || yi < 1 || xi >= width - 1 || yi >= height - 1) continue;
    if (inside && !inside[yi * width + xi]) continue;
    points++;
    let hit = false;
    for (let r = -radius; r <= radius && !hit; r++) {
      const qx = Math.round(x + nx * r);
      const qy = Math.round(y + ny * r);
      if (qx < 1 || qy < 1 || qx >= width - 1 || qy >= height - 1) continue;
      const q = qy * width + qx;
      if (g.mag[q]! < threshold) continue;
      if (angleDiff(lineAngle(g.gx[q]!, g.gy[q]!), seg.angle) <= TOLERANCE) hit = true;
    }
    if (hit) hits++;
  }
  return { share: points ? hits / points : 1, points };
}
