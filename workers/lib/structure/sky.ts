// The sky of a sky result (docs/decisions/0160-structure-check.md): everything above the skyline may change, so the
// check compares only below it. Found in the source at the analysis size unless the caller passes a mask: a column's
// sky is the smooth run from the top of the picture down to its first real edge, when that run is bright (sky is the
// brightest large area of an exterior photo). The skyline is then widened by the neighbouring columns' (a roof edge
// or a tree is not a gap in the sky) and lowered by a margin, for the blend the provider makes along it.
import type { Plane } from "./analysis.ts";

/** Rows under the skyline a sky result may also change: the provider blends the new sky into the edge. */
const MARGIN = 4;
/** Columns a skyline point also covers on each side. */
const SPREAD = 3;

/**
 * Per column, the first row the check compares. `edge` is the edge threshold of the source's gradients, `mag` its
 * gradient magnitude, `plane` its blurred gray.
 */
export function skylineFromSource(plane: Plane, mag: Float32Array, edge: number): Int32Array {
  const { width: w, height: h, data } = plane;
  let mean = 0;
  for (let i = 0; i < data.length; i++) mean += data[i]!;
  mean /= data.length;
  const raw = new Int32Array(w);
  for (let x = 0; x < w; x++) {
    // A column whose top is not bright is not sky (a wall or a tree reaching the top edge).
    if (data[2 * w + x]! < Math.max(mean, 90)) continue;
    let y = 2;
    while (y < h - 1 && mag[y * w + x]! < edge) y++;
    raw[x] = y;
  }
  const out = new Int32Array(w);
  for (let x = 0; x < w; x++) {
    let lowest = 0;
    for (let k = Math.max(0, x - SPREAD); k <= Math.min(w - 1, x + SPREAD); k++) lowest = Math.max(lowest, raw[k]!);
    out[x] = lowest > 0 ? Math.min(h, lowest + MARGIN) : 0;
  }
  return out;
}

/** A caller's sky mask (any size, nonzero = sky) as the first compared row per column of a `w` x `h` grid. */
export function skylineFromMask(mask: { width: number; height: number; data: Uint8Array }, w: number, h: number) {
  const out = new Int32Array(w);
  for (let x = 0; x < w; x++) {
    const mx = Math.min(mask.width - 1, Math.floor(((x + 0.5) * mask.width) / w));
    let lowest = -1;
    for (let my = 0; my < mask.height; my++) if (mask.data[my * mask.width + mx]) lowest = my;
    out[x] = lowest < 0 ? 0 : Math.min(h, Math.ceil(((lowest + 1) * h) / mask.height) + MARGIN);
  }
  return out;
}
