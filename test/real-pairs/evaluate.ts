// Rates of the structure check on real pairs (issue 43): the split by group, the limits chosen on the calibration
// part, the held-out rates with 95 % Wilson intervals. Pure TypeScript: the workerd test and the Node bench share it.
import type { Kind, PairClass, RealPair } from "../fixtures/structure-real/pairs.ts";

export interface ScoredPair {
  id: string;
  kind: Kind;
  class: PairClass;
  group: string;
  sourcePhoto: string;
  unsure: boolean;
  score: number;
  /** The score with the other resampler (exact area average). */
  scoreArea?: number;
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
 * Calibration or held-out for each group (repository or paper: never by pair, so no source is on both sides). Groups
 * are taken largest first (ties by a stable hash of the name) and each goes to the half that has fewer distinct
 * source photos so far in the kinds and classes the group brings, so both halves get both classes of every kind that
 * has pairs from two groups or more.
 */
export function splitByGroup(rows: { group: string; kind: Kind; class: PairClass; sourcePhoto: string }[]) {
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
  for (const g of groups) {
    const cost = (h: Half) => {
      let c = 0;
      for (const [key, photos] of cells.get(g)!) c += photos.size * (load[h].get(key) ?? 0);
      return c;
    };
    const h: Half = cost("calibration") <= cost("heldOut") ? "calibration" : "heldOut";
    out.set(g, h);
    for (const [key, photos] of cells.get(g)!) load[h].set(key, (load[h].get(key) ?? 0) + photos.size);
  }
  return out;
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

export interface KindRates {
  kind: Kind;
  /** The score above which a result is marked, chosen on the calibration part. */
  mark: number;
  calibration: { keptMarked: Rate; changedPassed: Rate };
  heldOut: { keptMarked: Rate; changedPassed: Rate };
  /** Whether item 4's goals are met on the held-out part. */
  markGoalsMet: boolean;
}

/**
 * The marking limit for one kind: on the calibration part, the lowest score limit that marks at most
 * GOALS.mark.keptMarked of kept rooms; if none of the changed rooms then pass, it is raised to the middle of the gap.
 */
export function chooseMark(rows: ScoredPair[]): number {
  const kept = rows.filter((r) => r.class === "kept").map((r) => r.score);
  const changed = rows.filter((r) => r.class === "changed").map((r) => r.score);
  if (!kept.length) return changed.length ? Math.min(...changed) - 1e-6 : 1;
  kept.sort((a, b) => a - b);
  // The limit keeps at most 10 % of kept rooms above it.
  const allowed = Math.floor(GOALS.mark.keptMarked * kept.length);
  return kept[kept.length - 1 - allowed]! + 1e-6;
}

export function kindRates(all: ScoredPair[], kind: Kind, mark?: number): KindRates {
  const halves = splitByGroup(counted(all));
  const rows = counted(all).filter((r) => r.kind === kind);
  const cal = rows.filter((r) => halves.get(r.group) === "calibration");
  const held = rows.filter((r) => halves.get(r.group) === "heldOut");
  const limit = mark ?? chooseMark(cal);
  const part = (sel: ScoredPair[]) => ({
    keptMarked: rate(
      sel.filter((r) => r.class === "kept"),
      (r) => r.score > limit,
    ),
    changedPassed: rate(
      sel.filter((r) => r.class === "changed"),
      (r) => r.score <= limit,
    ),
  });
  const heldOut = part(held);
  return {
    kind,
    mark: limit,
    calibration: part(cal),
    heldOut,
    markGoalsMet:
      heldOut.keptMarked.n > 0 &&
      heldOut.changedPassed.n > 0 &&
      heldOut.keptMarked.rate <= GOALS.mark.keptMarked &&
      heldOut.changedPassed.rate <= GOALS.mark.changedPassed,
  };
}

export function fromPair(p: RealPair, score: number, scoreArea?: number): ScoredPair {
  return {
    id: p.id,
    kind: p.kind,
    class: p.class,
    group: p.group,
    sourcePhoto: p.sourcePhoto,
    unsure: p.hard?.includes("unsure") ?? false,
    score,
    scoreArea,
  };
}
