// Moved structure (docs/decisions/0160-structure-check.md): a wall, ceiling or floor line that moved, or a window
// resized, shows as small areas along that line that match the source well, but only when shifted by a few pixels
// across the line, all by about the same amount. Furniture in front matches nowhere (or by chance, here and there);
// unchanged areas match where they are.
import type { Gradients, Plane } from "./analysis.ts";

const BLOCK = 12;
const STEP = 6;
/** Shifts tried, each way across the block's lines (analysis pixels). */
const MAX_SHIFT = 20;
/** The smallest shift that counts as moved. */
const MIN_SHIFT = 3;
/** A block matches when its mean-removed squared difference is below this share of its own variance. */
const GOOD = 0.25;
/** Beyond a moved line's band, at most this share of a block may have changed. */
const QUIET = 0.3;
/** ...and has moved when the shifted match is this many times better than the match in place. */
const GAIN = 3;

/**
 * The number of blocks with a clear line in them (their gradients mostly one way) whose result content sits
 * pixels across that line from where the source had it (3 to 20 pixels; matching well there and GAIN times better than in place),
 * next to a block along the same line that moved the same way: a line moves as a whole.
 * For a removal, blocks in the change that stands on the floor (rows from `grounded[x]` down) are left out.
 */
export function shiftedBlocks(
  src: Plane,
  res: Plane,
  g: Gradients,
  cmp: Uint8Array,
  edge: number,
  grounded: Int32Array | null,
  changed: Uint8Array,
  found?: number[],
): number {
  const { width: w, height: h } = src;
  const cols = Math.max(0, Math.floor((w - BLOCK - 2 * MAX_SHIFT) / STEP) + 1);
  const rows = Math.max(0, Math.floor((h - BLOCK - 2 * MAX_SHIFT) / STEP) + 1);
  // Per block: 0 = not moved, otherwise the shift, + 100 when across x (a vertical line), - 100 when across y.
  const moved = new Int32Array(cols * rows);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const shift = blockShift(src, res, g, cmp, edge, grounded, changed, MAX_SHIFT + c * STEP, MAX_SHIFT + r * STEP);
      moved[r * cols + c] = shift;
    }
  }
  let count = 0;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const m = moved[r * cols + c]!;
      if (m === 0) continue;
      // Along a vertical line the neighbours are above and below; along a horizontal one, left and right.
      const along = m > 0 ? [cols, -cols, 2 * cols, -2 * cols] : [1, -1, 2, -2];
      let ok = false;
      for (const d of along) {
        const k = r * cols + c + d;
        if (k < 0 || k >= moved.length || (Math.abs(d) <= 2 && Math.floor(k / cols) !== r)) continue;
        const n = moved[k]!;
        if (n !== 0 && Math.sign(n) === Math.sign(m) && Math.abs(n - m) <= 2) ok = true;
      }
      if (!ok) continue;
      count++;
      found?.push((MAX_SHIFT + r * STEP + BLOCK / 2) * w + MAX_SHIFT + c * STEP + BLOCK / 2);
    }
  }
  return count;
}

/** The block's shift (see `moved` above), or 0. */
function blockShift(
  src: Plane,
  res: Plane,
  g: Gradients,
  cmp: Uint8Array,
  edge: number,
  grounded: Int32Array | null,
  changed: Uint8Array,
  bx: number,
  by: number,
): number {
  const { width: w } = src;
  // The block's main direction: summed horizontal against vertical gradient.
  let sx = 0;
  let sy = 0;
  let strong = 0;
  let mean = 0;
  for (let y = by; y < by + BLOCK; y++) {
    for (let x = bx; x < bx + BLOCK; x++) {
      const i = y * w + x;
      if (!cmp[i]) return 0;
      sx += Math.abs(g.gx[i]!);
      sy += Math.abs(g.gy[i]!);
      if (g.mag[i]! >= 2 * edge) strong++;
      mean += src.data[i]!;
    }
  }
  if (strong < BLOCK) return 0;
  // A removal may move what stands on the floor.
  if (grounded && by + BLOCK / 2 >= grounded[bx + BLOCK / 2]!) return 0;
  const acrossX = sx > 2 * sy;
  if (!acrossX && !(sy > 2 * sx)) return 0;
  mean /= BLOCK * BLOCK;
  let variance = 0;
  for (let y = by; y < by + BLOCK; y++) {
    for (let x = bx; x < bx + BLOCK; x++) variance += (src.data[y * w + x]! - mean) ** 2;
  }
  variance /= BLOCK * BLOCK;
  // The mean-removed squared difference in one pass: sum((a - ma) - (b - mb))^2 = sum((a - b)^2) - n * mean(a - b)^2.
  const n = BLOCK * BLOCK;
  const shiftedMean = (d: number) => {
    const offset = acrossX ? d : d * w;
    let mr = 0;
    for (let y = by; y < by + BLOCK; y++) {
      for (let x = bx; x < bx + BLOCK; x++) mr += res.data[y * w + x + offset]!;
    }
    return mr / n;
  };
  const cost = (d: number) => {
    const offset = acrossX ? d : d * w;
    let sum = 0;
    let sumSq = 0;
    for (let y = by; y < by + BLOCK; y++) {
      const row = y * w;
      for (let x = bx; x < bx + BLOCK; x++) {
        const e = src.data[row + x]! - res.data[row + x + offset]!;
        sum += e;
        sumSq += e * e;
      }
    }
    return (sumSq - (sum * sum) / n) / n;
  };
  const here = cost(0);
  // Still in place: most blocks stop here.
  if (here < GOOD * variance) return 0;
  let best = Infinity;
  let at = 0;
  for (let d = -MAX_SHIFT; d <= MAX_SHIFT; d++) {
    if (Math.abs(d) < MIN_SHIFT) continue;
    const c = cost(d);
    if (c < best) {
      best = c;
      at = d;
    }
  }
  if (best * GAIN >= here || best >= GOOD * variance) return 0;
  // The same surfaces, moved: their tones agree too (something new in front that happens to fit the lines does not).
  if (Math.abs(shiftedMean(at) - mean) > Math.max(8, 0.5 * Math.sqrt(variance))) return 0;
  // A moved line disturbs a band along it; beyond the band, on one side at least, the picture is as it was. An
  // object in front (a bookcase's shelves fitting a wall's lines) is changed all round.
  const reach = BLOCK + 2 * Math.abs(at);
  const quietBeyond = [-1, 1].some((side) => {
    const ox = bx + (acrossX ? side * reach : 0);
    const oy = by + (acrossX ? 0 : side * reach);
    let n = 0;
    let c = 0;
    for (let y = oy; y < oy + BLOCK; y++) {
      for (let x = ox; x < ox + BLOCK; x++) {
        if (x < 0 || y < 0 || x >= w || y >= src.height) continue;
        n++;
        c += changed[y * w + x]!;
      }
    }
    return n > 0 && c < QUIET * n;
  });
  if (!quietBeyond) return 0;
  return acrossX ? 100 + at : -100 + at;
}
