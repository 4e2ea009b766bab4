import { paintOver, providerSize } from "@test/fixtures/structure/edit";
import { decodeImage } from "@test/fixtures/structure/pixels";
import { ROOMS } from "@test/fixtures/structure/rooms";
import { decodeBase64Strict } from "@workers/lib/base64";
import { analysisSize, checkStructure, toAnalysis } from "@workers/lib/structure/check";
import { describe, expect, it } from "vitest";

// How the integrator calls the structure check (ADR 0160); the labelled set itself is structure-check.test.ts.

const EMPTY_HALL = import.meta.glob("/test/fixtures/structure/photos/empty-hall.jpg", {
  eager: true,
  query: "?inline",
  import: "default",
}) as Record<string, string>;

function emptyHall() {
  const url = Object.values(EMPTY_HALL)[0]!;
  return decodeImage(decodeBase64Strict(url.slice(url.indexOf(",") + 1)));
}

describe("toAnalysis", () => {
  it("reduces gray, RGB or RGBA pixels to a 320 px long edge, keeping the aspect", () => {
    const rgba = new Uint8Array(2560 * 1707 * 4).fill(200);
    expect(analysisSize(2560, 1707)).toEqual({ width: 320, height: 213 });
    const g = toAnalysis(rgba, 2560, 1707);
    expect([g.width, g.height, g.data[0]]).toEqual([320, 213, 200]);
    expect(toAnalysis(new Uint8Array(30 * 20 * 3).fill(9), 30, 20, { width: 12, height: 8 }).data[5]).toBe(9);
  });

  it("refuses bytes that are not a picture of the size it is told", () => {
    expect(() => toAnalysis(new Uint8Array(100), 10, 20)).toThrow(/not a 10x20 gray, RGB or RGBA image/);
  });
});

describe("checkStructure", () => {
  const photo = emptyHall();
  const source = toAnalysis(photo.data, photo.width, photo.height);
  const room = ROOMS.find((r) => r.id === "empty-hall")!;

  it("passes the same room at the provider's size, reduced straight to the source's grid or at its own size", () => {
    const result = providerSize(photo, 768, 512, "stretch");
    const straight = toAnalysis(result.data, result.width, result.height, analysisSize(photo.width, photo.height));
    const own = toAnalysis(result.data, result.width, result.height);
    for (const r of [straight, own]) {
      const v = checkStructure(source, r, { kind: "stage" });
      expect(v.pass, JSON.stringify(v.measures)).toBe(true);
      expect(v.score).toBeLessThan(0.5);
    }
  });

  it("fails a room whose window was painted over, unless a sky mask puts the window in the sky", () => {
    const changed = providerSize(paintOver(photo, room.windows[0]!, 3, 1), 768, 512, "stretch");
    const result = toAnalysis(changed.data, changed.width, changed.height, analysisSize(photo.width, photo.height));
    const v = checkStructure(source, result, { kind: "stage" });
    expect(v.pass).toBe(false);
    expect(v.score).toBeGreaterThan(1);
    // A caller's sky mask (any size): everything above its lowest row may change in a sky result.
    const sky = { width: 4, height: 4, data: new Uint8Array([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0]) };
    expect(checkStructure(source, result, { kind: "sky", skyMask: sky }).pass).toBe(true);
  });
});
