// Every measure the structure check was chosen from (docs/decisions/0160-structure-check.md), computed on one pair
// at the analysis size: both pictures reduced, lined up, their tones matched, then compared on the source's edges.
// check.ts judges with two of them (carriedOver, movedAreas); scripts/structure-set.ts measure rates them all.
import { type Alignment, align, warp } from "./align.ts";
import { blur, type Gray, gradients, type Plane, quantile, type Reduced, reducePair } from "./analysis.ts";
import {
  BINS,
  closeMask,
  continuesASide,
  gradientSsim,
  isRidge,
  largestRun,
  matchTones,
  orientationBins,
} from "./helpers.ts";
import { fillFromSurroundings, groundedTop } from "./regions.ts";
import { shiftedBlocks } from "./shift.ts";
import { skylineFromMask, skylineFromSource } from "./sky.ts";

export type ResultKind = "stage" | "removal" | "sky";

export interface CheckOptions {
  kind: ResultKind;
  /** Also compute the measures the check does not judge by (edgeLoss is always there), for the ADR's comparison. */
  baselines?: boolean;
  /** Where the source's sky is (nonzero), at any size; without it a sky result's sky is found in the source. */
  skyMask?: Gray;
}

export interface StructureScores {
  /** Source edges the result no longer has (same orientation within 2 px), as a share of the source's edges. */
  edgeLoss: number;
  /** 1 - the mean SSIM of the two gradient-magnitude maps (gradient-structure dissimilarity); NaN without baselines. */
  gradientDissimilarity: number;
  /** The largest run of lost source edges where one side's tone now covers the other, per diagonal pixel (baseline). */
  paintedRun: number;
  /**
   * The largest run of lost source edges inside a change that is only the surroundings carried in (the result there
   * matches the source's surroundings filled across it), per diagonal pixel (baseline).
   */
  borrowedRun: number;
  /**
   * The check's first measure: the largest run (gaps of up to 4 px bridged) of source edges carried over — borrowed,
   * or painted where too little changed to count as a change (a white door on a white wall) — per diagonal pixel.
   */
  carriedOver: number;
  /** The check's second measure: small areas whose content sits 3-20 px across its lines from where it was. */
  movedAreas: number;
  alignment: Alignment;
  /** The share of the picture compared (inside both pictures, below the skyline). */
  compared: number;
}

/** Source edges: gradients above this share of the source's 95th percentile (and above 2.5 gray levels a pixel). */
const EDGE_SHARE = 0.12;
/** A source edge is still there when the result has an edge at least this share as strong near it. */
const KEPT = 0.4;
/** Result tones counted as clipped, and the source tone above which clipped detail is not judged. */
const CLIPPED_HIGH = 244;
const CLIPPED_LOW = 6;
const BRIGHT = 205;
/** A pixel has changed when its tone-matched difference is above this (and above 3x the pair's median difference). */
const CHANGED = 10;
/** Holes closed in the changed mask (analysis pixels). */
const CLOSE = 4;
/** The floor band: furniture a removal takes away stands in the rows below this share of the height. */
const FLOOR_BAND = 0.62;
/** Gaps (analysis pixels) bridged in a run of carried-over edges: a painted-over line is not cut by a few kept pixels. */
const RUN_GAP = 4;
/** How far (analysis pixels) a result edge may be from the source's and still count as the same edge. */
const RADIUS = 2;
/** Pixels at the picture's border never compared (the reduction and the blur smear them). */
const BORDER = 3;

export function structureScores(source: Gray, result: Gray, opts: CheckOptions): StructureScores {
  return structureMaps(source, result, opts).scores;
}

/** What the scores were counted from, at the analysis size: 1 = source edge, 2 = lost, 3 = painted, 4 = borrowed. */
export interface StructureMaps {
  scores: StructureScores;
  width: number;
  height: number;
  marks: Uint8Array;
  source: Plane;
  result: Plane;
}

export function structureMaps(
  source: Gray,
  result: Gray,
  opts: CheckOptions,
  reduced: Reduced = reducePair(source, result),
): StructureMaps {
  const { width: w, height: h } = reduced.size;
  const src = blur(reduced.src);
  const resRaw = reduced.res;
  const gS = gradients(src);
  const all = new Uint8Array(w * h).fill(1);
  const strong = Math.max(4, 0.4 * quantile(gS.mag, all, 0.95));

  // Sky: the first compared row of each column.
  const skyline =
    opts.kind !== "sky"
      ? new Int32Array(w)
      : opts.skyMask
        ? skylineFromMask(opts.skyMask, w, h)
        : skylineFromSource(src, gS.mag, strong);
  const rowWeight = new Uint8Array(h);
  let highestCompared = 0;
  for (let x = 0; x < w; x++) highestCompared = Math.max(highestCompared, skyline[x]!);
  for (let y = highestCompared; y < h; y++) rowWeight[y] = 1;
  if (highestCompared > h * 0.8) rowWeight.fill(1);

  const alignment = align(gS, reduced.gRes, w, h, strong, rowWeight);
  const warped = warp(resRaw, alignment);
  const cmp = new Uint8Array(w * h);
  let compared = 0;
  for (let y = BORDER; y < h - BORDER; y++) {
    for (let x = BORDER; x < w - BORDER; x++) {
      const i = y * w + x;
      if (y < skyline[x]! || !warped.inside[i]) continue;
      cmp[i] = 1;
      compared++;
    }
  }
  const res = blur(matchTones(warped.plane, src, cmp));
  const raw = warped.plane;
  const gR = gradients(res);
  // Low enough for a white door on a white wall; each edge is then judged against its own strength.
  const edge = Math.max(2.5, EDGE_SHARE * quantile(gS.mag, cmp, 0.95));
  const binS = orientationBins(gS);
  const binR = orientationBins(gR);

  const marks = new Uint8Array(w * h);
  const painted = new Uint8Array(w * h);
  let edges = 0;
  let lost = 0;
  for (let y = RADIUS + 1; y < h - RADIUS - 1; y++) {
    for (let x = RADIUS + 1; x < w - RADIUS - 1; x++) {
      const i = y * w + x;
      if (!cmp[i] || gS.mag[i]! < edge || !isRidge(gS, i, w)) continue;
      // Detail in the highlights of a bright source that the result's exposure pushed to white (or shadows to black)
      // cannot be judged.
      if ((raw.data[i]! >= CLIPPED_HIGH && src.data[i]! >= BRIGHT) || raw.data[i]! <= CLIPPED_LOW) continue;
      edges++;
      marks[i] = 1;
      // The same edge in the result: as strong as KEPT of the source's, same orientation (one bin either way), near.
      const need = Math.max(KEPT * gS.mag[i]!, 0.8 * edge);
      const b = binS[i]!;
      let same = false;
      let any = false;
      for (let dy = -RADIUS; dy <= RADIUS && !same; dy++) {
        for (let dx = -RADIUS; dx <= RADIUS; dx++) {
          const j = i + dy * w + dx;
          if (gR.mag[j]! < need) continue;
          any = true;
          const d = Math.abs(binR[j]! - b);
          if (d <= 1 || d === BINS - 1) {
            same = true;
            break;
          }
        }
      }
      if (same) continue;
      lost++;
      marks[i] = 2;
      // Another edge there means something stands in front; nothing near means the surface may have been carried over.
      if (!any && continuesASide(src, res, gS, i, w, h)) {
        painted[i] = 1;
        marks[i] = 3;
      }
    }
  }

  // Changed pixels (tone-matched difference above the pair's noise), chance holes closed.
  const diff = new Float32Array(w * h);
  for (let i = 0; i < w * h; i++) diff[i] = cmp[i] ? Math.abs(res.data[i]! - src.data[i]!) : 0;
  const noise = quantile(diff, cmp, 0.5);
  const changed = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) changed[i] = cmp[i] && diff[i]! > Math.max(CHANGED, 3 * noise) ? 1 : 0;
  closeMask(changed, w, h, CLOSE);
  const hole = new Uint8Array(w * h);
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1; x < w - 1; x++) {
      const i = y * w + x;
      if (changed[i] || changed[i - 1] || changed[i + 1] || changed[i - w] || changed[i + w]) hole[i] = 1;
    }
  }
  // Borrowed: lost source edges where the result is only the source's surroundings carried in.
  const filled = fillFromSurroundings(src.data, hole, w, h);
  // A removal may empty whatever stands on the floor: the change rising from the floor band is not judged.
  const grounded = opts.kind === "removal" ? groundedTop(hole, w, h, Math.round(FLOOR_BAND * h)) : null;
  const tolerance = Math.max(6, 2 * noise);
  const borrowed = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) {
    if (marks[i]! < 2 || !hole[i]) continue;
    if (grounded && Math.floor(i / w) >= grounded[i % w]!) continue;
    let carried = true;
    for (const d of [0, -1, 1, -w, w]) if (Math.abs(res.data[i + d]! - filled[i + d]!) >= tolerance) carried = false;
    if (!carried) continue;
    borrowed[i] = 1;
    marks[i] = 4;
  }

  const diagonal = Math.hypot(w, h);
  // Carried over: borrowed, or painted where the change was too faint to count as one.
  const carried = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) {
    if (grounded && Math.floor(i / w) >= grounded[i % w]!) continue;
    carried[i] = borrowed[i] || (painted[i] && !hole[i]) ? 1 : 0;
  }
  const movedAt: number[] = [];
  const scores: StructureScores = {
    edgeLoss: edges > 0 ? lost / edges : 0,
    gradientDissimilarity: opts.baselines ? 1 - gradientSsim(gS.mag, gR.mag, cmp, w, h) : Number.NaN,
    paintedRun: opts.baselines ? largestRun(painted, w, h).count / diagonal : Number.NaN,
    borrowedRun: opts.baselines ? largestRun(borrowed, w, h).count / diagonal : Number.NaN,
    carriedOver: largestRun(carried, w, h, RUN_GAP).count / diagonal,
    movedAreas: shiftedBlocks(src, res, gS, cmp, edge, grounded, changed, movedAt),
    alignment,
    compared: compared / (w * h),
  };
  for (const i of movedAt) for (const d of [0, 1, -1, w, -w, w + 1, w - 1, -w + 1, -w - 1]) marks[i + d] = 5;
  return { scores, width: w, height: h, marks, source: src, result: res };
}
