// Rates of the structure check on real pairs (issue 43): the split by group, the limits chosen on the calibration
// part, the held-out rates with 95 % Wilson intervals. Pure TypeScript: the workerd test and the Node bench share it.

import { type Gray, gradients, resizeGray, toPlane } from "../../workers/lib/structure/analysis.ts";
import type { Kind, PairClass, RealPair } from "../fixtures/structure-real/pairs.ts";
import PINNED from "./halves.json" with { type: "json" };

export interface ScoredPair {
  id: string;
  kind: Kind;
  class: PairClass;
  group: string;
  sourcePhoto: string;
  unsure: boolean;
  /** The production check's score (above 1: marked) and verdict. */
  score: number;
  verdict: string;
  /** The same with the other resampler (exact area average). */
  scoreArea: number;
  /** Every candidate measure (workers/lib/structure/room-measures.ts), and the same with the other resampler. */
  values: Record<string, number>;
  valuesArea: Record<string, number>;
  /** When the pair entered the manifest (RealPair.added). */
  added?: string;
  /** A picture of the pair carries marks drawn for a figure (DRAWN_MARKS): one the check never receives. */
  drawn?: boolean;
}

/** The most calibration pairs whose verdict a candidate may flip when the resampler changes (item 2). */
export const MAX_RESAMPLER_FLIPS = 0.05;

/**
 * The measures a kind may be judged by: each must see a change both ways (an opening added and one removed), so the
 * one-way line measures (lost, added and their upper parts) only enter as sums. ADR 0160's score (carriedOrMoved),
 * the cell and brightness measures of room-measures.ts, and three sums of two. The list and the two-way rule were
 * fixed after the first real-pair figures were seen (ADR 0221); the facade lines (geometry.ts) were added by ADR 0300,
 * the room's lines (roomTensor, and at radius 8 roomTensor8) by ADR 0319.
 * The calibration part chooses one per kind (chooseMeasure); the held-out part only reports.
 */
export const CANDIDATES: readonly (readonly string[])[] = [
  ["carriedOrMoved"],
  ["cellsMean"],
  ["cellsChanged"],
  ["cellsChangedUpper"],
  ["brightChange"],
  ["addedUpper", "lostUpper"],
  ["added", "lost"],
  ["lost", "cellsMean"],
  ["facadeLines"],
  ["roomTensor"],
  ["roomTensor8"],
];

export function measureOf(r: ScoredPair, measure: readonly string[], area = false): number {
  const values = area ? r.valuesArea : r.values;
  return measure.reduce((sum, m) => sum + (values[m] ?? Number.NaN), 0);
}

/** The share of `rows` whose verdict under `measure` at `mark` changes with the resampler. */
export function resamplerFlips(rows: ScoredPair[], measure: readonly string[], mark: number): number {
  if (!rows.length) return 0;
  return rows.filter((r) => measureOf(r, measure) > mark !== measureOf(r, measure, true) > mark).length / rows.length;
}

/** Mann-Whitney AUC: the chance a changed room scores above a kept one (ties count half). */
export function auc(rows: ScoredPair[], measure: readonly string[]): number {
  const kept = rows.filter((r) => r.class === "kept").map((r) => measureOf(r, measure));
  const changed = rows.filter((r) => r.class === "changed").map((r) => measureOf(r, measure));
  if (!kept.length || !changed.length) return 0.5;
  let sum = 0;
  for (const k of kept) for (const c of changed) sum += c > k ? 1 : c === k ? 0.5 : 0;
  return sum / (kept.length * changed.length);
}

/** The goals of issue 43 on held-out pairs. */
export const GOALS = {
  /** Item 3, for a kind that refuses: kept rooms refused, changed rooms passed. */
  refuse: { keptRefused: 0.05, changedPassed: 0.05, sources: 20 },
  /** Item 4, every kind: kept rooms marked or refused, changed rooms passed unmarked. */
  mark: { keptMarked: 0.1, changedPassed: 0.05 },
};

/** A stable 32-bit hash (FNV-1a) of a group's name: the split must not move when pairs are added. */
function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export type Half = "calibration" | "heldOut";

/**
 * Calibration or held-out for each group (repository or paper: never by pair, so no source is on both sides). A group
 * named in `pinned` (halves.json: every group as of 513 pairs) keeps its half, so adding pairs never moves a pair
 * the method was chosen on into the held-out part, nor the reverse. The other groups are taken largest first (ties by
 * a stable hash of the name) and each goes to the half that has fewer distinct source photos so far in the kinds and
 * classes the group brings, so both halves get both classes of every kind that has pairs from two groups or more.
 */
export function splitByGroup(
  rows: { group: string; kind: Kind; class: PairClass; sourcePhoto: string }[],
  pinned: Record<string, string> = PINNED,
) {
  const cells = new Map<string, Map<string, Set<string>>>();
  for (const r of rows) {
    const g = cells.get(r.group) ?? new Map<string, Set<string>>();
    const key = `${r.kind}/${r.class}`;
    g.set(key, (g.get(key) ?? new Set()).add(r.sourcePhoto));
    cells.set(r.group, g);
  }
  const size = (g: string) => [...cells.get(g)!.values()].reduce((n, s) => n + s.size, 0);
  const groups = [...cells.keys()].sort((a, b) => size(b) - size(a) || fnv(a) - fnv(b));
  const load: Record<Half, Map<string, number>> = { calibration: new Map(), heldOut: new Map() };
  const out = new Map<string, Half>();
  const place = (g: string, h: Half) => {
    out.set(g, h);
    for (const [key, photos] of cells.get(g)!) load[h].set(key, (load[h].get(key) ?? 0) + photos.size);
  };
  for (const g of groups) {
    const h = pinned[g];
    if (h === "calibration" || h === "heldOut") place(g, h);
  }
  for (const g of groups) {
    if (out.has(g)) continue;
    const cost = (h: Half) => {
      let c = 0;
      for (const [key, photos] of cells.get(g)!) c += photos.size * (load[h].get(key) ?? 0);
      return c;
    };
    place(g, cost("calibration") <= cost("heldOut") ? "calibration" : "heldOut");
  }
  return out;
}

/**
 * Tags that keep a pair out of every figure: unsure labels (the first labeller's, or the blind looks' that no two of
 * agreed on: unsure-on-review), unclear licences, results no AI system made, and results of a task the product does
 * not do (an artistic restyle, a street scene regenerated, a vehicle swapped).
 */
export const NOT_COUNTED = ["unsure", "unsure-on-review", "licence-unclear", "non-ml-system", "off-task"];

/** Whether a pair counts in the figures: none of its tags is in NOT_COUNTED. */
export function countsInFigures(p: { hard?: string[] }): boolean {
  return !p.hard?.some((t) => NOT_COUNTED.includes(t));
}

export function counted(rows: ScoredPair[]): ScoredPair[] {
  return rows.filter((r) => !r.unsure);
}

export interface Rate {
  /** Pairs that went the wrong way, of `n`. */
  k: number;
  n: number;
  rate: number;
  low: number;
  high: number;
  sources: number;
}

/** The 95 % Wilson score interval of k of n. */
export function wilson(k: number, n: number): { low: number; high: number } {
  if (n === 0) return { low: 0, high: 1 };
  const z = 1.96;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const c = p + (z * z) / (2 * n);
  const r = z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  return { low: Math.max(0, (c - r) / d), high: Math.min(1, (c + r) / d) };
}

function rate(rows: ScoredPair[], wrong: (r: ScoredPair) => boolean): Rate {
  const k = rows.filter(wrong).length;
  return {
    k,
    n: rows.length,
    rate: rows.length ? k / rows.length : 0,
    ...wilson(k, rows.length),
    sources: new Set(rows.map((r) => r.sourcePhoto)).size,
  };
}

/** The least calibration AUC at which a kind's measure may mark anything (below it, marks would be noise). */
export const MIN_AUC_TO_MARK = 0.65;

/**
 * What calibration chooses for a kind: the candidate with the highest AUC on the calibration part (the earlier one on
 * a tie) among those whose verdicts at their own limit change with the resampler on at most MAX_RESAMPLER_FLIPS of the
 * calibration pairs (the best overall when none does), its limit as the score's scale, and whether it may mark at
 * all: only when it is admissible and its AUC is at least MIN_AUC_TO_MARK.
 */
export function chooseJudged(calibration: ScoredPair[]): { measure: readonly string[]; scale: number; marks: boolean } {
  const ranked = CANDIDATES.map((c, i) => {
    const mark = chooseMark(calibration, c);
    return { c, i, a: auc(calibration, c), mark, ok: resamplerFlips(calibration, c, mark) <= MAX_RESAMPLER_FLIPS };
  }).sort((x, y) => y.a - x.a || x.i - y.i);
  const best = ranked.find((r) => r.ok) ?? ranked[0]!;
  return { measure: best.c, scale: best.mark, marks: best.ok && best.a >= MIN_AUC_TO_MARK };
}

export function chooseMeasure(calibration: ScoredPair[]): readonly string[] {
  return chooseJudged(calibration).measure;
}

/**
 * The marking limit of a measure on the calibration part: the lowest limit that marks at most GOALS.mark.keptMarked of
 * its kept rooms (the measure's value of the kept room just above the allowance).
 */
export function chooseMark(rows: ScoredPair[], measure: readonly string[]): number {
  const kept = rows
    .filter((r) => r.class === "kept")
    .map((r) => measureOf(r, measure))
    .sort((a, b) => a - b);
  if (!kept.length) return 1;
  const allowed = Math.floor(GOALS.mark.keptMarked * kept.length);
  return kept[kept.length - 1 - allowed]!;
}

/** Marked by the production check: its verdict was not a pass. */
const byProduction = (r: ScoredPair) => r.verdict !== "passed";

/** The two ways a check goes wrong on a set of pairs: kept rooms it marks, changed rooms it passes. */
export interface ClassRates {
  keptMarked: Rate;
  changedPassed: Rate;
}

/** Of `rows`, the kept rooms `marked` marks and the changed rooms it passes. */
function classRates(rows: ScoredPair[], marked: (r: ScoredPair) => boolean): ClassRates {
  return {
    keptMarked: rate(
      rows.filter((r) => r.class === "kept"),
      marked,
    ),
    changedPassed: rate(
      rows.filter((r) => r.class === "changed"),
      (r) => !marked(r),
    ),
  };
}

export interface KindRates {
  kind: Kind;
  /** What calibration chose: the measure, its limit (the score's scale) and whether the kind marks at all. */
  measure: readonly string[];
  mark: number;
  marks: boolean;
  /** The production check's rates (its verdicts as given: not passed is marked). */
  calibration: ClassRates;
  heldOut: ClassRates;
  /** The held-out rates calibration's choice would have (marking nothing when `marks` is false). */
  choiceHeldOut: ClassRates;
  /** Whether item 4's goals are met on the held-out part. */
  markGoalsMet: boolean;
  /** Every candidate on the calibration part: its AUC, its limit and the share of verdicts the resampler flips. */
  candidates: { measure: readonly string[]; auc: number; mark: number; flips: number }[];
}

export function kindRates(all: ScoredPair[], kind: Kind): KindRates {
  const halves = splitByGroup(counted(all));
  const rows = counted(all).filter((r) => r.kind === kind);
  const cal = rows.filter((r) => halves.get(r.group) === "calibration");
  const held = rows.filter((r) => halves.get(r.group) === "heldOut");
  const { measure, scale, marks } = chooseJudged(cal);
  const choice = (r: ScoredPair) => marks && measureOf(r, measure) > scale;
  const part = (sel: ScoredPair[], marked = byProduction) => classRates(sel, marked);
  const heldOut = part(held);
  return {
    kind,
    measure,
    mark: scale,
    marks,
    calibration: part(cal),
    heldOut,
    choiceHeldOut: part(held, choice),
    candidates: CANDIDATES.map((c) => {
      const mark = chooseMark(cal, c);
      return { measure: c, auc: auc(cal, c), mark, flips: resamplerFlips(cal, c, mark) };
    }),
    markGoalsMet:
      heldOut.keptMarked.n > 0 &&
      heldOut.changedPassed.n > 0 &&
      heldOut.keptMarked.rate <= GOALS.mark.keptMarked &&
      heldOut.changedPassed.rate <= GOALS.mark.changedPassed,
  };
}

export function fromPair(
  p: RealPair,
  checked: { score: number; verdict: string },
  scoreArea: number,
  values: Record<string, number>,
  valuesArea: Record<string, number>,
): ScoredPair {
  return {
    id: p.id,
    kind: p.kind,
    class: p.class,
    group: p.group,
    sourcePhoto: p.sourcePhoto,
    unsure: !countsInFigures(p),
    score: checked.score,
    verdict: checked.verdict,
    scoreArea,
    values,
    valuesArea,
    added: p.added,
    drawn: p.hard?.some((t) => DRAWN_MARKS.includes(t)) ?? false,
  };
}

/**
 * Tags of a pair with something drawn on its pictures for a figure: a mask painted over what to remove, drag handles
 * and arrows, a caption over the photo. The check never receives such a picture (a removal's mask travels beside the
 * clean photo), so the report also gives the held-out rates without them. Counted in the headline figures all the
 * same: whether to leave them out was asked after those figures were seen.
 */
export const DRAWN_MARKS = ["mask-overlay-on-source", "text-overlay"];

/** The production check's held-out rates on the pairs with nothing drawn on their pictures. */
export function undrawnHeldOut(all: ScoredPair[], kind: Kind): ClassRates {
  const halves = splitByGroup(counted(all));
  const rows = counted(all).filter((r) => r.kind === kind && !r.drawn && halves.get(r.group) === "heldOut");
  return classRates(rows, byProduction);
}

/**
 * When each kind's verdict rule was last fixed: staging's room's lines measured on the result's own pixels, their
 * limit chosen again on the calibration half, by ADR 0362 (after every pair then in the manifest had been seen; ADR
 * 0319's limits were fixed in commit c7f962c); removal's are ADR 0160's thresholds, set on synthetic edits (commit 2772366) before the first real
 * pair existed; sky is judged by the facade lines from ADR 0330 (their limit is ADR 0300's, the switch was made after
 * every pair then in the manifest had been seen).
 */
export const RULE_FIXED: Record<Kind, { at: string; by: string }> = {
  stage: { at: "2026-12-03T19:15:00Z", by: "ADR 0362's field and limit" },
  removal: { at: "2026-11-26T15:48:44Z", by: "ADR 0160's thresholds (2772366)" },
  sky: { at: "2026-11-30T06:41:12Z", by: "ADR 0330's facade lines" },
};

/**
 * The production check's rates on the pairs added after the kind's rule was fixed, from both halves: pictures the
 * rule was never chosen on, so every one of them is held out from it. A pair without a date is not counted here.
 */
export interface AfterRule extends ClassRates {
  pairs: number;
}

export function afterRule(all: ScoredPair[], kind: Kind): AfterRule {
  const fixed = Date.parse(RULE_FIXED[kind].at);
  const rows = counted(all).filter((r) => r.kind === kind && r.added !== undefined && Date.parse(r.added) > fixed);
  return { ...classRates(rows, byProduction), pairs: rows.length };
}

/** The side of a picture's outline (outline): coarse enough that a re-encoded or resized copy keeps it. */
export const OUTLINE_SIDE = 48;
/** Two outlines at least this alike are taken for one photo (likeness). */
export const SAME_PHOTO = 0.8;

/**
 * A picture's outline, for finding one photo under two groups: the gradient magnitude of its OUTLINE_SIDE² area
 * average (analysis.ts: resizeGray, gradients), with its mean taken out and scaled to length 1. Gradients, not tones:
 * two photos of skies over dark roofs share their tones' layout, not their edges. Framing matters: a crop of the photo
 * is another outline.
 */
export function outline(g: Gray): Float32Array {
  const out = gradients(toPlane(resizeGray(g, { width: OUTLINE_SIDE, height: OUTLINE_SIDE }))).mag;
  const mean = out.reduce((s, v) => s + v, 0) / out.length;
  let norm = 0;
  for (let k = 0; k < out.length; k++) {
    out[k]! -= mean;
    norm += out[k]! ** 2;
  }
  norm = Math.sqrt(norm) || 1;
  for (let k = 0; k < out.length; k++) out[k]! /= norm;
  return out;
}

/** How alike two outlines are: 1 for the same, about 0 for unrelated pictures. */
export function likeness(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let k = 0; k < a.length; k++) s += a[k]! * b[k]!;
  return s;
}

export interface Outlined {
  /** The pair's id and which of its pictures. */
  id: string;
  picture: "source" | "result";
  group: string;
  /** Width over height. */
  aspect: number;
  outline: Float32Array;
}

/**
 * Pictures of two groups in different halves that look like one photo (issue 43, item 2: split by source): a photo
 * published by two repositories (a shared dataset's picture) would put one source on both sides of the split. Only
 * pictures of about the same aspect are compared; a photo cropped differently by each is not found.
 */
export function photosInBothHalves(pictures: Outlined[], halves: Map<string, Half>): string[] {
  const found: string[] = [];
  for (let i = 0; i < pictures.length; i++) {
    for (let j = i + 1; j < pictures.length; j++) {
      const a = pictures[i]!;
      const b = pictures[j]!;
      const [ha, hb] = [halves.get(a.group), halves.get(b.group)];
      if (a.group === b.group || !ha || !hb || ha === hb) continue;
      if (Math.abs(Math.log(a.aspect / b.aspect)) > 0.1) continue;
      const l = likeness(a.outline, b.outline);
      if (l >= SAME_PHOTO) found.push(`${a.id} ${a.picture} ~ ${b.id} ${b.picture} (${l.toFixed(2)})`);
    }
  }
  return found;
}
