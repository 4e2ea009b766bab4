// The structure check (issue 33, docs/decisions/0160-structure-check.md): does a staged, emptied or sky result keep
// its source's architecture — the lines of walls, ceiling and floor, the window and door openings (below the skyline
// for a sky result)? Furniture, decor, the look and the size may change; the architecture may not.
//
// It runs in the Worker on decoded pixels, outside the user's Durable Object: reduce each picture once with
// toAnalysis (or hand over any gray image: it is reduced here), then call checkStructure. Pure TypeScript.
import { ANALYSIS_LONG_EDGE, analysisSize, type Gray, reducePair, toAnalysis } from "./analysis.ts";
import { type ChangeMap, changePlaces, drawCells } from "./change-map.ts";
import { FACADE_CELL, facadeLines, type Prepared, prepare, roomTensor } from "./geometry.ts";
import { type CheckOptions, type ResultKind, type StructureScores, structureMaps } from "./measures.ts";
import { type Outcome, outcomeOf, STRUCTURE_LIMITS, type StructureLimits } from "./verdict.ts";

export type { ChangeMap, CheckOptions, Gray, Outcome, ResultKind, StructureLimits, StructureScores };
export { ANALYSIS_LONG_EDGE, analysisSize, outcomeOf, STRUCTURE_LIMITS, toAnalysis };

/**
 * The measures of a pair: ADR 0160's score (carriedOrMoved), the facade lines (geometry.ts, ADR 0300: the share of
 * 16 px cells where the source's lines below the skyline no longer run the same way in the result) and the room's
 * lines (ADR 0319); with `candidates`, every measure a kind may be judged by (room-measures.ts's, which the check
 * Worker neither runs nor ships).
 */
export interface Measures {
  carriedOrMoved: number;
  facadeLines: number;
  roomTensor: number;
  roomTensor8: number;
  [candidate: string]: number;
}

/** The evaluation's extra measures of a pair, from its preparation (room-measures.ts, candidateMeasures). */
export type Candidates = (source: Gray, result: Gray, kind: ResultKind, prepared: Prepared) => Record<string, number>;

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
  /**
   * JUDGED_BY's measure of the kind over its limit: staging the larger of roomTensor / STAGE_TENSOR_MARK and ADR
   * 0160's score / STAGE_CARRIED_MARK (ADR 0319); removal carriedOver / carried + movedAreas / moved (ADR 0160); sky
   * facadeLines / SKY_FACADE_MARK (ADR 0330). 0 when nothing of the source's architecture was lost; above 1 marked
   * under today's limits.
   */
  score: number;
  /** Where the check saw the change ("upper left", ...): empty for a result that passed. */
  reasons: string[];
  kind: ResultKind;
  limits: StructureLimits;
  /**
   * Every measure, for logs and for the real-pair evaluation (test/real-pairs), which reports what each would achieve;
   * the verdict is JUDGED_BY's measure of the kind.
   */
  measures: Measures;
  /** Where the score saw the room change (painted over, borrowed, moved; for a sky the turned cells), analysis size. */
  map: ChangeMap;
}

/**
 * Where a sky, judged by its facade lines (ADR 0300, 0330), is marked: more than this share of the judged cells turned.
 * Fixed on the 173-pair set's calibration half through the production path, in the middle (geometric mean) of the gap
 * between its kept skies (at most 5/161 = 0.031) and its changed ones (at least 0.1875).
 */
export const SKY_FACADE_MARK = 0.0763;

/**
 * A staging judged by its room's lines (ADR 0319) is marked when roomTensor is over STAGE_TENSOR_MARK (the room
 * redrawn as another) or ADR 0160's score over STAGE_CARRIED_MARK (a local change: a window painted over). Each
 * limit chosen on the real pairs' calibration half through the production path (workerd, the Images stand-in), as
 * chooseMark does (test/real-pairs/evaluate.ts): each alone marks at most a tenth of its kept stagings (ADR 0319,
 * 25 of them); the room's lines again when the result's field came to be measured on its own pixels (ADR 0362, 36).
 */
export const STAGE_TENSOR_MARK = 0.4467;
export const STAGE_CARRIED_MARK = 4.1021;

/**
 * What each kind's score is. Staging: the room's lines (ADR 0319), the larger of roomTensor / STAGE_TENSOR_MARK and
 * carriedOrMoved / STAGE_CARRIED_MARK. Removal: ADR 0160's. Sky: the facade lines over SKY_FACADE_MARK (ADR 0330):
 * ADR 0160's score marked most real relit skies that kept the house, so its mark told the agent nothing.
 */
export const JUDGED_BY: Record<ResultKind, Judged> = {
  stage: "roomLines",
  removal: "carriedOrMoved",
  sky: "facadeLines",
};

type Judged = "carriedOrMoved" | "facadeLines" | "roomLines";

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
  opts: CheckOptions & { limits?: StructureLimits; candidates?: Candidates },
): StructureVerdict {
  // The pair reduced and blurred once, for ADR 0160's maps and for the room's lines alike.
  const reduced = reducePair(source, result);
  const judgedBy = JUDGED_BY[opts.kind];
  // The measures the verdict is not judged by are measured only when the caller hands over the candidates (the
  // real-pair evaluation, the method benches): in the check Worker they cost about a third of its CPU per result for
  // nothing it answers (ADR 0307). ADR 0160's maps too: a sky is judged by its facade lines alone, and its map is
  // drawn from them. One preparation (the result lined up on the source) for every measure needing it.
  const all = opts.candidates !== undefined;
  const old = all || judgedBy !== "facadeLines" ? structureMaps(source, result, opts, reduced) : null;
  const carriedOrMoved = old ? structureScore(old.scores, STRUCTURE_THRESHOLDS[opts.kind]) : Number.NaN;
  const prepared =
    all || judgedBy !== "carriedOrMoved" ? prepare(source, result, opts.kind, opts.skyMask, reduced) : null;
  const room = prepared && opts.candidates ? opts.candidates(source, result, opts.kind, prepared) : null;
  const facade = prepared && (all || judgedBy === "facadeLines") ? facadeLines(prepared) : null;
  const tensor = prepared && (all || judgedBy === "roomLines") ? roomTensor(prepared) : null;
  const measures: Measures = {
    ...room,
    carriedOrMoved,
    facadeLines: facade?.value ?? Number.NaN,
    roomTensor: tensor?.value ?? Number.NaN,
    roomTensor8: all && prepared ? roomTensor(prepared, 8).value : Number.NaN,
  };
  const limits = opts.limits ?? STRUCTURE_LIMITS[opts.kind];
  const score =
    judgedBy === "facadeLines"
      ? facade!.value / SKY_FACADE_MARK
      : judgedBy === "roomLines"
        ? Math.max(tensor!.value / STAGE_TENSOR_MARK, carriedOrMoved / STAGE_CARRIED_MARK)
        : carriedOrMoved;
  const verdict = outcomeOf(score, limits);
  const size = analysisSize(source.width, source.height);
  const map: ChangeMap = { width: size.width, height: size.height, data: new Uint8Array(size.width * size.height) };
  if (old && (judgedBy === "carriedOrMoved" || judgedBy === "roomLines"))
    for (let i = 0; i < old.marks.length; i++) if (old.marks[i]! >= 3) map.data[i] = 255;
  if (judgedBy === "facadeLines") drawCells(map, facade!.cells, FACADE_CELL);
  if (judgedBy === "roomLines") drawCells(map, tensor!.cells, FACADE_CELL);
  const reasons = verdict === "passed" ? [] : changePlaces(map);
  return { verdict, pass: verdict === "passed", score, reasons, kind: opts.kind, limits, measures, map };
}

/** The gray image the platform reduces each picture to before the check reduces it to its analysis size. */
export const REDUCED_EDGE = 640;

type GrayPicture = { width: number; height: number; data: Uint8Array };

/**
 * The check on two grays as the Images binding gives them (REDUCED_EDGE on the long edge): its verdict, score (to
 * three places), where it saw the change and the change map. The Worker, `npm run check:structure` and the real-pair
 * evaluation all judge through here. `limits` (tests and development only) replaces the kind's STRUCTURE_LIMITS.
 */
export function judgeGrays(
  kind: ResultKind,
  src: GrayPicture,
  res: GrayPicture,
  limits?: StructureLimits,
  opts: { candidates?: Candidates } = {},
) {
  const size = analysisSize(src.width, src.height);
  const v = checkStructure(
    toAnalysis(src.data, src.width, src.height, size),
    toAnalysis(res.data, res.width, res.height, size),
    { kind, limits, candidates: opts.candidates },
  );
  return {
    verdict: v.verdict,
    score: Math.round(v.score * 1000) / 1000,
    reasons: v.reasons,
    map: v.map,
    measures: v.measures,
  };
}
