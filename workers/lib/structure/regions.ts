// Changed regions (docs/decisions/0160-structure-check.md). Where the result differs from its source there is either
// something new in front (furniture, decor, a curtain: its own tones and outline) or the old surface carried over
// (a window or door painted over with wall, a line moved: the result there is what surrounded it in the source).

/**
 * Per column, the top row of the change that stands on the floor: walking up from the bottom of the picture through
 * changed pixels (gaps of up to 2 rows bridged), when that run reaches into the floor band (rows from `floorRow`
 * down). A removal empties what stands on the floor; a window above the furniture, with unchanged wall between, is
 * not part of it. Columns with no such change get `h`.
 */
export function groundedTop(changed: Uint8Array, w: number, h: number, floorRow: number): Int32Array {
  const out = new Int32Array(w).fill(h);
  for (let x = 0; x < w; x++) {
    let y = h - 1;
    // The lowest changed pixel of the column, if it is in the floor band.
    while (y >= floorRow && !changed[y * w + x]) y--;
    if (y < floorRow) continue;
    let top = y;
    let gap = 0;
    for (; y >= 0; y--) {
      if (changed[y * w + x]) {
        top = y;
        gap = 0;
      } else if (++gap > 2) break;
    }
    out[x] = top;
  }
  return out;
}

/**
 * The source with the `hole` pixels filled from the pixels around them (push-pull: a smooth surface meeting its
 * surroundings): what the picture would look like if the changed part were painted over with what surrounds it.
 */
export function fillFromSurroundings(values: Float32Array, hole: Uint8Array, w: number, h: number): Float32Array {
  type Level = { w: number; h: number; v: Float32Array; wt: Float32Array };
  const levels: Level[] = [];
  const v0 = new Float32Array(w * h);
  const wt0 = new Float32Array(w * h);
  for (let i = 0; i < w * h; i++) {
    if (hole[i]) continue;
    v0[i] = values[i]!;
    wt0[i] = 1;
  }
  levels.push({ w, h, v: v0, wt: wt0 });
  while (levels.at(-1)!.w > 1 || levels.at(-1)!.h > 1) {
    const p = levels.at(-1)!;
    const nw = Math.max(1, Math.ceil(p.w / 2));
    const nh = Math.max(1, Math.ceil(p.h / 2));
    const v = new Float32Array(nw * nh);
    const wt = new Float32Array(nw * nh);
    for (let y = 0; y < p.h; y++) {
      for (let x = 0; x < p.w; x++) {
        const i = y * p.w + x;
        const j = (y >> 1) * nw + (x >> 1);
        wt[j]! += p.wt[i]!;
        v[j]! += p.v[i]! * p.wt[i]!;
      }
    }
    for (let j = 0; j < nw * nh; j++) {
      if (wt[j]! > 0) v[j]! /= wt[j]!;
      wt[j] = Math.min(1, wt[j]!);
    }
    levels.push({ w: nw, h: nh, v, wt });
  }
  for (let l = levels.length - 2; l >= 0; l--) {
    const p = levels[l]!;
    const q = levels[l + 1]!;
    for (let y = 0; y < p.h; y++) {
      for (let x = 0; x < p.w; x++) {
        const i = y * p.w + x;
        const a = p.wt[i]!;
        if (a >= 1) continue;
        const fx = Math.min(q.w - 1, Math.max(0, (x + 0.5) / 2 - 0.5));
        const fy = Math.min(q.h - 1, Math.max(0, (y + 0.5) / 2 - 0.5));
        const x0 = Math.floor(fx);
        const y0 = Math.floor(fy);
        const x1 = Math.min(q.w - 1, x0 + 1);
        const y1 = Math.min(q.h - 1, y0 + 1);
        const tx = fx - x0;
        const ty = fy - y0;
        const s =
          (q.v[y0 * q.w + x0]! * (1 - tx) + q.v[y0 * q.w + x1]! * tx) * (1 - ty) +
          (q.v[y1 * q.w + x0]! * (1 - tx) + q.v[y1 * q.w + x1]! * tx) * ty;
        p.v[i] = p.v[i]! * a + s * (1 - a);
        p.wt[i] = 1;
      }
    }
  }
  return levels[0]!.v;
}
