import {
  calibrateAll,
  judgeWith,
  meetsRequirement,
  REQUIRED,
  rates,
  type Scored,
} from "@test/fixtures/structure/evaluate";
import { makePairs, type Pair } from "@test/fixtures/structure/pairs";
import { decodeImage } from "@test/fixtures/structure/pixels";
import { PHOTO_SOURCES } from "@test/fixtures/structure/sources";
import { decodeBase64Strict } from "@workers/lib/base64";
import { warp } from "@workers/lib/structure/align";
import { gradients, reducePair } from "@workers/lib/structure/analysis";
import {
  analysisSize,
  checkStructure,
  type Gray,
  STRUCTURE_THRESHOLDS,
  toAnalysis,
} from "@workers/lib/structure/check";
import { orientationField, prepare, roomTensor } from "@workers/lib/structure/geometry";
import { structureScores } from "@workers/lib/structure/measures";
import { beforeAll, describe, expect, it } from "vitest";

// Issue 33: ADR 0160's measures (carriedOrMoved, one of the measures the check may judge a kind by: issue 43, ADR 0221)
// on the synthetic labelled set: extra unit cases, never a published figure (test/fixtures/structure/README.md, ADR 0160). Thresholds are
// fixed on the calibration half (split by source photo); on the held-out half the check must catch at least 95 % of
// the results whose architecture changed and fail at most 5 % of those that only changed furniture, decor, the look
// or the size. A check that always passes, and one that always fails, must not meet the same bar.

const PHOTO_FILES = import.meta.glob("/test/fixtures/structure/photos/*.jpg", {
  eager: true,
  query: "?inline",
  import: "default",
}) as Record<string, string>;

function loadPhotos() {
  return PHOTO_SOURCES.map((s) => {
    const url = PHOTO_FILES[`/test/fixtures/structure/photos/${s.id}.jpg`];
    if (!url) throw new Error(`photo ${s.id} is missing from test/fixtures/structure/photos`);
    return { id: s.id, image: decodeImage(decodeBase64Strict(url.slice(url.indexOf(",") + 1))) };
  });
}

let pairs: Pair[] = [];
const scored: Scored[] = [];
/** Each pair's two pictures at the analysis size, as reduced for the scores. */
const analysed = new Map<string, { s: Gray; r: Gray }>();

beforeAll(() => {
  pairs = makePairs(loadPhotos());
  for (const pair of pairs) {
    const { source, result } = pair.make();
    // As the Worker will: each picture reduced once (the result straight to the source's analysis size), compared.
    const s = toAnalysis(source.data, source.width, source.height);
    const r = toAnalysis(result.data, result.width, result.height, analysisSize(source.width, source.height));
    analysed.set(pair.id, { s, r });
    const scores = structureScores(s, r, { kind: pair.kind });
    scored.push({
      id: pair.id,
      photo: pair.photo,
      kind: pair.kind,
      expect: pair.expect,
      half: pair.half,
      carried: scores.carriedOver,
      moved: scores.movedAreas,
    });
  }
}, 900_000);

describe("the labelled set", () => {
  it("has at least 60 pairs from at least 10 room photos, both answers, split by photo", () => {
    expect(pairs.length).toBeGreaterThanOrEqual(60);
    const rooms = new Set(
      pairs.filter((p) => PHOTO_SOURCES.find((s) => s.id === p.photo)?.scene === "interior").map((p) => p.photo),
    );
    expect(rooms.size).toBeGreaterThanOrEqual(10);
    for (const half of ["calibration", "held-out"] as const) {
      const of = pairs.filter((p) => p.half === half);
      expect(of.some((p) => p.expect === "pass") && of.some((p) => p.expect === "fail")).toBe(true);
    }
    // No photo in both halves.
    for (const photo of new Set(pairs.map((p) => p.photo))) {
      expect(new Set(pairs.filter((p) => p.photo === photo).map((p) => p.half)).size).toBe(1);
    }
  });
});

describe("checkStructure", () => {
  it("uses the thresholds calibration chooses on the calibration half", () => {
    const chosen = calibrateAll(scored);
    expect(STRUCTURE_THRESHOLDS).toEqual(chosen);
  });

  it("catches at least 95 % and falsely alarms on at most 5 % of the held-out half", () => {
    const held = scored.filter((r) => r.half === "held-out");
    const r = rates(held, judgeWith(STRUCTURE_THRESHOLDS));
    console.log(
      `held-out: ${r.fails} must fail, ${r.passes} must pass; caught ${(r.caught * 100).toFixed(1)} %, ` +
        `false alarms ${(r.falseAlarms * 100).toFixed(1)} %; wrong: ${r.wrong.join(", ") || "none"}`,
    );
    expect(r.caught, `caught, wrong: ${r.wrong.join(", ")}`).toBeGreaterThanOrEqual(REQUIRED.caught);
    expect(r.falseAlarms, `false alarms, wrong: ${r.wrong.join(", ")}`).toBeLessThanOrEqual(REQUIRED.falseAlarms);
    expect(meetsRequirement(r)).toBe(true);
  });

  it("would fail the same bar if it always passed or always failed", () => {
    const held = scored.filter((r) => r.half === "held-out");
    const alwaysPass = rates(held, () => false);
    const alwaysFail = rates(held, () => true);
    expect(alwaysPass.caught).toBe(0);
    expect(alwaysFail.falseAlarms).toBe(1);
    expect(meetsRequirement(alwaysPass)).toBe(false);
    expect(meetsRequirement(alwaysFail)).toBe(false);
  });
});

describe("the room's lines measure only the rows they judge", () => {
  it("an orientation field made for the first rows equals the whole field's first rows, bit for bit", () => {
    const w = 37;
    const h = 53;
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return (seed / 2147483648) * 40 - 20;
    };
    const g = {
      gx: Float32Array.from({ length: w * h }, next),
      gy: Float32Array.from({ length: w * h }, next),
      mag: new Float32Array(w * h),
    };
    const mask = Uint8Array.from({ length: w * h }, (_, i) => (i % 11 === 0 ? 0 : 1));
    const whole = orientationField(g, w, h, 4, mask);
    for (const rows of [1, 10, 29, 44, 48, 53]) {
      const part = orientationField(g, w, h, 4, mask, rows);
      for (const k of ["C", "S", "E"] as const) expect(part[k].slice(0, rows * w)).toEqual(whole[k].slice(0, rows * w));
      // Made as far as the box reaches, not further.
      expect(part.C.length).toBe(Math.min(h, rows + 5) * w);
    }
  });
});

describe("a sky is judged by its facade lines alone", () => {
  it("without ADR 0160's maps, which it is not judged by: the same verdict, score, places and change map", () => {
    const skies = pairs.filter((p) => p.kind === "sky");
    expect(skies.length).toBeGreaterThanOrEqual(10);
    for (const pair of skies) {
      const { s, r } = analysed.get(pair.id)!;
      // As the check Worker judges it, and with every measure taken (the real-pair evaluation's way).
      const judged = checkStructure(s, r, { kind: "sky" });
      const everything = checkStructure(s, r, { kind: "sky", candidates: () => ({}) });
      expect(judged.measures.carriedOrMoved).toBeNaN();
      expect(everything.measures.carriedOrMoved).not.toBeNaN();
      expect({ id: pair.id, verdict: judged.verdict, score: judged.score, reasons: judged.reasons }).toEqual({
        id: pair.id,
        verdict: everything.verdict,
        score: everything.score,
        reasons: everything.reasons,
      });
      expect(judged.map.data).toEqual(everything.map.data);
    }
  });
});

describe("the room's lines of a staging (ADR 0362)", () => {
  it("do not move when the alignment falls half a pixel further: the result's field is measured on its own pixels", () => {
    // The same picture as source and result, lined up at no shift, then half a pixel to the side (an alignment the
    // search gives when two framings tie). Resampling the result before measuring it smoothed one axis only, and a
    // flat wall or ceiling took that axis's direction: the value of one picture against itself jumped.
    const photos = new Map<string, Gray>();
    for (const pair of pairs) {
      if (pair.kind === "stage" && !photos.has(pair.photo)) photos.set(pair.photo, analysed.get(pair.id)!.s);
    }
    expect(photos.size).toBeGreaterThanOrEqual(10);
    const moved: string[] = [];
    for (const [name, gray] of photos) {
      const reduced = reducePair(gray, gray);
      const p = prepare(gray, gray, "stage", undefined, reduced);
      for (const alignment of [
        { sx: 1, tx: 0.5, sy: 1, ty: 0 },
        { sx: 1, tx: 0, sy: 1, ty: 0.5 },
        { sx: 1.004, tx: 0, sy: 1.004, ty: 0 },
      ]) {
        const carried = warp(reduced.res, alignment);
        const shifted = { ...p, res: carried.plane, gR: gradients(carried.plane), compared: carried.inside, alignment };
        const change = Math.abs(roomTensor(shifted).value - roomTensor(p).value);
        if (change > 0.05) moved.push(`${name} ${JSON.stringify(alignment)}: ${change.toFixed(3)}`);
      }
    }
    expect(moved).toEqual([]);
  });
});
