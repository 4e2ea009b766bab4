import { judgeWith, rates, type Scored } from "../test/fixtures/structure/evaluate.ts";
import { loadPhotosFromDisk } from "../test/fixtures/structure/load-node.ts";
import { makePairs } from "../test/fixtures/structure/pairs.ts";
import { type Rgba, resize } from "../test/fixtures/structure/pixels.ts";
import { analysisSize, checkStructure, STRUCTURE_THRESHOLDS, toAnalysis } from "../workers/lib/structure/check.ts";
import { structureScores } from "../workers/lib/structure/measures.ts";
import { type BenchModule, median } from "./module.ts";
import { BUDGETS, type Figure } from "./report.ts";

// The structure check of issue 33 (docs/decisions/0160-structure-check.md): what one result costs — both pictures
// reduced to the analysis size from their decoded pixels, then compared — for the largest pair the Worker sees (a
// 2560 px source, a 2304x1536 staging result), beside the labelled set's held-out caught and false-alarm rates with
// the committed thresholds. In Node, like the rest of the bench's own code: the check is plain TypeScript that
// workerd runs on the same V8. No stack is needed; `BENCH_ONLY=structure npm run bench` runs it alone.

const TIMED_RUNS = 15;

interface Gray640 {
  data: Uint8Array;
  width: number;
  height: number;
}

/** The luma of an RGBA picture, as the Images binding's grayscale output gives it. */
function gray(img: Rgba): Gray640 {
  const data = new Uint8Array(img.width * img.height);
  for (let i = 0; i < data.length; i++) {
    const o = i * 4;
    data[i] = Math.round(0.299 * img.data[o]! + 0.587 * img.data[o + 1]! + 0.114 * img.data[o + 2]!);
  }
  return { data, width: img.width, height: img.height };
}

export function structureModule(): BenchModule {
  let source: Rgba | null = null;
  let result: Rgba | null = null;
  let grays: { source: Gray640; result: Gray640 } | null = null;
  let held = { caught: 0, falseAlarms: 0, fails: 0, passes: 0 };
  return {
    title: `Structure check: reduction + check per result (2560 px source, 2304x1536 result, median of ${TIMED_RUNS}), held-out rates`,
    async setup() {
      const photos = loadPhotosFromDisk();
      const scored: Scored[] = [];
      for (const pair of makePairs(photos).filter((p) => p.half === "held-out")) {
        const { source: s, result: r } = pair.make();
        const v = structureScores(
          toAnalysis(s.data, s.width, s.height),
          toAnalysis(r.data, r.width, r.height, analysisSize(s.width, s.height)),
          { kind: pair.kind },
        );
        scored.push({ ...pair, carried: v.carriedOver, moved: v.movedAreas });
      }
      held = rates(scored, judgeWith(STRUCTURE_THRESHOLDS));
      // The timed pair: the set's empty room at the largest sizes the Worker handles.
      const room = photos.find((p) => p.id === "empty-hall")!.image;
      source = resize(room, 2560, 1707);
      result = resize(room, 2304, 1536);
      // What a job's check gets from the Images binding (workers/objects/user/jobs/structure.ts): both pictures as
      // grays of 640 px on the long edge; the rest runs on the user's object.
      grays = { source: gray(resize(room, 640, 427)), result: gray(resize(room, 640, 427)) };
    },
    async measure() {
      const s = source!;
      const r = result!;
      const times: number[] = [];
      const reused: number[] = [];
      const size = analysisSize(s.width, s.height);
      for (let i = 0; i < TIMED_RUNS; i++) {
        const t = performance.now();
        const reduced = toAnalysis(s.data, s.width, s.height);
        const t1 = performance.now();
        checkStructure(reduced, toAnalysis(r.data, r.width, r.height, size), { kind: "stage" });
        const t2 = performance.now();
        times.push(t2 - t);
        // A source's variations and re-rolls can share its reduced picture (68 KB): the result's own cost.
        reused.push(t2 - t1);
      }
      const g = grays!;
      const onObject: number[] = [];
      for (let i = 0; i < TIMED_RUNS; i++) {
        const t = performance.now();
        const gs = toAnalysis(g.source.data, g.source.width, g.source.height);
        const size640 = analysisSize(g.source.width, g.source.height);
        checkStructure(gs, toAnalysis(g.result.data, g.result.width, g.result.height, size640), { kind: "stage" });
        onObject.push(performance.now() - t);
      }
      const pct = (v: number) => Math.round(v * 1000) / 10;
      const figures: Figure[] = [
        {
          group: "Structure check",
          name: "reduction of both pictures + check, per result",
          value: Math.round(median(times) * 10) / 10,
          unit: "ms",
          ...BUDGETS.structureMs,
        },
        {
          group: "Structure check",
          name: "result reduction + check, the source's reduction reused",
          value: Math.round(median(reused) * 10) / 10,
          unit: "ms",
        },
        {
          group: "Structure check",
          name: "in a job, on the user's object: two 640 px grays (reduced by the Images binding) to analysis + check",
          value: Math.round(median(onObject) * 10) / 10,
          unit: "ms",
        },
        {
          group: "Structure check",
          name: `held-out half: architecture changes caught (${held.fails} pairs)`,
          value: pct(held.caught),
          unit: "%",
          ...BUDGETS.structureCaught,
        },
        {
          group: "Structure check",
          name: `held-out half: false alarms (${held.passes} pairs)`,
          value: pct(held.falseAlarms),
          unit: "%",
          ...BUDGETS.structureFalseAlarms,
        },
      ];
      return figures;
    },
  };
}
