import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import jpeg from "jpeg-js";
import { describe, expect, it } from "vitest";
import { decodeImage, encodeJpeg, type Raster, shrinkToFit } from "../../emulators/images.ts";
import * as draw from "../../emulators/provider-images.ts";
import { analysisSize, checkStructure, type Gray, toAnalysis } from "../../workers/lib/structure/check.ts";

/** Limits that refuse any score over 1 (the rule before ADR 0215), as the e2e gives its refusal test's user. */
const REFUSE_OVER_ONE = { mark: 1, refuse: 1 };

// The provider emulator against the structure check (issue 33, docs/decisions/0162-results-true-to-the-room.md and
// 0215-flag-when-unsure.md), on the real room photos of the check's labelled set: its ordinary results (furniture,
// tint, EMULATED banner, the provider's sizes) must pass, so a local stage is charged as production's would be; its
// "drift" results (a window moved, the ceiling line shifted) must score over the mark: flagged under production's
// limits (no kind refuses), refused under limits that refuse over 1, so both paths can be tried in a browser.

const DIR = join(import.meta.dirname, "../fixtures/structure/photos");
const PHOTOS = readdirSync(DIR).filter((f) => f.endsWith(".jpg") && f !== "street.jpg");
const drawing = { room: "livingroom", style: "modern", options: null, variation: { index: 0, of: 1, seed: null } };

function load(name: string): { src: Raster; gray: Gray; size: { width: number; height: number } } {
  const src = shrinkToFit(decodeImage(new Uint8Array(readFileSync(join(DIR, name)))), 1600);
  const size = analysisSize(src.width, src.height);
  return { src, gray: toAnalysis(src.data, src.width, src.height, size), size };
}

/** A result as the Worker sees it: encoded as the emulator answers, decoded, reduced to the source's analysis size. */
function asResult(img: Raster, size: { width: number; height: number }): Gray {
  const d = jpeg.decode(encodeJpeg(img), { useTArray: true });
  return toAnalysis(d.data, d.width, d.height, size);
}

describe("the provider emulator's results and the structure check", () => {
  it("on the e2e's photo (living-room.jpg): staging and removal pass, their drifted results are flagged (refused over 1)", () => {
    const { src, gray, size } = load("living-room.jpg");
    const staged = () => draw.stage(src, 2304, 1536, drawing, 3);
    const emptied = () => draw.removal(src, 768, 576, null);
    expect(checkStructure(gray, asResult(staged(), size), { kind: "stage" }).verdict).toBe("passed");
    expect(checkStructure(gray, asResult(emptied(), size), { kind: "removal" }).verdict).toBe("passed");
    const stagedDrift = asResult(draw.drift(staged()), size);
    const emptiedDrift = asResult(draw.drift(emptied()), size);
    expect(checkStructure(gray, stagedDrift, { kind: "stage" }).verdict).toBe("flagged");
    expect(checkStructure(gray, emptiedDrift, { kind: "removal" }).verdict).toBe("flagged");
    expect(checkStructure(gray, stagedDrift, { kind: "stage", limits: REFUSE_OVER_ONE }).verdict).toBe("refused");
    expect(checkStructure(gray, emptiedDrift, { kind: "removal", limits: REFUSE_OVER_ONE }).verdict).toBe("refused");
    // Said where: the drift moves a window and the ceiling line.
    expect(checkStructure(gray, stagedDrift, { kind: "stage" }).reasons.length).toBeGreaterThan(0);
  });

  it("results made from emulated results pass: a sky over a staged room, a staging of an emptied or staged room", () => {
    const { src } = load("living-room.jpg");
    const round = (img: Raster): Raster => {
      const d = jpeg.decode(encodeJpeg(img), { useTArray: true });
      return { width: d.width, height: d.height, data: d.data };
    };
    const judge = (from: Raster, to: Raster, kind: "stage" | "sky") => {
      const size = analysisSize(from.width, from.height);
      const a = toAnalysis(from.data, from.width, from.height, size);
      return checkStructure(a, toAnalysis(to.data, to.width, to.height, size), { kind }).verdict === "passed";
    };
    const staged = round(draw.stage(src, 2304, 1536, drawing, 3));
    const emptied = round(draw.upscale(draw.removal(src, 768, 576, null), 3));
    expect(judge(staged, round(draw.upscale(draw.sky(staged, 768, 512, "dusk"), 3)), "sky")).toBe(true);
    expect(judge(emptied, round(draw.stage(emptied, 2304, 1536, drawing, 3)), "stage")).toBe(true);
    expect(judge(staged, round(draw.stage(staged, 2304, 1536, drawing, 3)), "stage")).toBe(true);
    // Still: a drifted result of an emulated one fails.
    expect(judge(staged, round(draw.drift(draw.stage(staged, 2304, 1536, drawing, 3))), "stage")).toBe(false);
  }, 60_000);

  it("skies of the labelled set's houses (ADR 0330): day, dusk and night pass; drifted ones and another house are flagged", () => {
    const other = { "townhouse.jpg": "farmhouse.jpg", "farmhouse.jpg": "townhouse.jpg" } as const;
    for (const [house, elsewhere] of Object.entries(other)) {
      const { src, gray, size } = load(house);
      const verdict = (img: Raster) => checkStructure(gray, asResult(img, size), { kind: "sky" }).verdict;
      for (const sky of ["day", "dusk", "night"] as const) {
        expect(verdict(draw.sky(src, 768, 512, sky)), `${house} ${sky}`).toBe("passed");
      }
      expect(verdict(draw.drift(draw.sky(src, 768, 512, "dusk"))), `${house} drifted`).toBe("flagged");
      expect(verdict(draw.sky(load(elsewhere).src, 768, 512, "dusk")), `${house} sold as ${elsewhere}`).toBe("flagged");
    }
  }, 60_000);

  it("across the labelled set's rooms: every drifted staging but boiler-room's is flagged, and at most 2 ordinary ones are", () => {
    const refused: string[] = [];
    const missed: string[] = [];
    // The pixels as drawn (the JPEG round trip of the case above changes no verdict here, and costs seconds a photo).
    const reduced = (img: Raster, size: { width: number; height: number }) =>
      toAnalysis(img.data, img.width, img.height, size);
    for (const name of PHOTOS) {
      const { src, gray, size } = load(name);
      const staged = draw.stage(src, 2304, 1536, drawing, 3);
      if (checkStructure(gray, reduced(staged, size), { kind: "stage" }).verdict !== "passed") refused.push(name);
      const drifted = draw.drift({ ...staged, data: staged.data.slice() });
      if (checkStructure(gray, reduced(drifted, size), { kind: "stage" }).verdict !== "flagged") missed.push(name);
    }
    // Staging is judged by the room's lines since ADR 0319, chosen on real pairs: boiler-room.jpg's drift (a window
    // moved) scores 0.443 on roomTensor (limit 0.4467, ADR 0362) and 2.86 on ADR 0160's score (limit 4.1021), so it
    // passes, a blind spot ADR 0319 states. Any other room whose drift passes fails here.
    expect(
      missed.filter((n) => n !== "boiler-room.jpg"),
      missed.join(", "),
    ).toEqual([]);
    // Measured 2026-11-26: library.jpg and palace-hall.jpg (busy walls behind the emulator's furniture) score over 1,
    // the check's own false-alarm rate (2.2% on its held-out half) at work on drawn furniture.
    expect(refused.length, refused.join(", ")).toBeLessThanOrEqual(2);
  }, 120_000);
});
