// The structure check (issue 33, docs/decisions/0160-structure-check.md): does a staged, emptied or sky result keep
// its source's architecture — the lines of walls, ceiling and floor, the window and door openings (below the skyline
// for a sky result)? Furniture, decor, the look and the size may change; the architecture may not.
//
// It runs in the Worker on decoded pixels, outside the user's Durable Object: reduce each picture once with
// toAnalysis (or hand over any gray image: it is reduced here), then call checkStructure. Pure TypeScript.
import { ANALYSIS_LONG_EDGE, analysisSize, type Gray, toAnalysis } from "./analysis.ts";
import { type CheckOptions, type ResultKind, type StructureScores, structureMaps } from "./measures.ts";
import { type Outcome, outcomeOf, STRUCTURE_LIMITS, type StructureLimits } from "./verdict.ts";
import { whereChanged } from "./where.ts";

export type { CheckOptions, Gray, Outcome, ResultKind, StructureLimits, StructureScores };
export { ANALYSIS_LONG_EDGE, analysisSize, outcomeOf, STRUCTURE_LIMITS, toAnalysis };

/** The two measures' limits for one kind of result. */
export interface StructureThresholds {
  /** The carried-over run (StructureScores.carriedOver) that alone fails a result. */
  carried: number;
  /** The moved areas (StructureScores.movedAreas) that alone fail a result; Infinity when moves are not judged. */
  moved: number;
}

/**
 * Per kind of result, fixed on the calibration half of the labelled set (test/fixtures/structure; the test checks
 * that calibration still chooses these). A result fails when carriedOver / carried + movedAreas / moved > 1.
 */
export const STRUCTURE_THRESHOLDS: Record<ResultKind, StructureThresholds> = {
  stage: { carried: 0.055, moved: 10 },
  removal: { carried: 0.29, moved: 40 },
  sky: { carried: 0.005, moved: 34 },
};

export interface StructureVerdict {
  /** Passed, flagged or refused, by the kind's limits (verdict.ts: the one place a score becomes an outcome). */
  verdict: Outcome;
  /** Not flagged nor refused: the score is at most the kind's `mark` (above 1 the labelled set's pairs fail). */
  pass: boolean;
  /** carriedOver / carried + movedAreas / moved: 0 when nothing of the source's architecture was lost. */
  score: number;
  /** Where the check saw the change ("upper left", ...): empty for a result that passed. */
  reasons: string[];
  kind: ResultKind;
  thresholds: StructureThresholds;
  limits: StructureLimits;
  /** Every measure, for logs and for whoever tunes the check. */
  scores: StructureScores;
}

export function structureScore(scores: StructureScores, t: StructureThresholds): number {
  return scores.carriedOver / t.carried + scores.movedAreas / t.moved;
}

/**
 * Compares a result with its source on what must not change. `source` and `result` may be any size and aspect (the
 * provider's output sizes differ from the source's); both are reduced to the source's analysis size and lined up.
 * `opts.kind` says what the provider was asked for; a sky result is compared below the skyline only (found in the
 * source, or `opts.skyMask`). `opts.limits` (tests, the evaluation) replaces the kind's STRUCTURE_LIMITS.
 */
export function checkStructure(
  source: Gray,
  result: Gray,
  opts: CheckOptions & { limits?: StructureLimits },
): StructureVerdict {
  const maps = structureMaps(source, result, opts);
  const { scores } = maps;
  const thresholds = STRUCTURE_THRESHOLDS[opts.kind];
  const limits = opts.limits ?? STRUCTURE_LIMITS[opts.kind];
  const score = structureScore(scores, thresholds);
  const verdict = outcomeOf(score, limits);
  const reasons = verdict === "passed" ? [] : whereChanged(maps.marks, maps.width, maps.height);
  return { verdict, pass: verdict === "passed", score, reasons, kind: opts.kind, thresholds, limits, scores };
}
