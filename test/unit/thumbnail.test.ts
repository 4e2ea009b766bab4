import { makeJpeg, makePng } from "@test/fixtures/images";
import { describeAndThumb, describeImage, makeResultThumb } from "@workers/lib/thumbnail";
import { describe, expect, it } from "vitest";

// A job records its result from the header alone and makes the thumbnail after the commit
// (workers/objects/user/jobs/produce.ts finishThumb): the header read must agree with a full decode.

describe("describeImage", () => {
  it("reads a JPEG's and a PNG's size from the header, as a full decode does", () => {
    for (const [w, h] of [
      [123, 45],
      [640, 480],
      [1, 1],
    ] as const) {
      const jpeg = makeJpeg(w, h, 80);
      expect(describeImage(jpeg)).toEqual({ contentType: "image/jpeg", width: w, height: h });
      expect(describeImage(jpeg)).toEqual(describeAndThumb(jpeg).info);
    }
    expect(describeImage(makePng(17, 9))).toEqual({ contentType: "image/png", width: 17, height: 9 });
  });

  it("refuses what is not an image, or a JPEG cut before its frame header", () => {
    expect(() => describeImage(new TextEncoder().encode("<html>not an image</html>"))).toThrow(/not a JPEG or PNG/);
    expect(() => describeImage(makeJpeg(64, 48).subarray(0, 20))).toThrow(/not a JPEG or PNG/);
  });

  it("makes a thumbnail no longer than 400 px on its long edge", () => {
    const thumb = makeResultThumb(makeJpeg(1200, 800, 80));
    expect(describeImage(thumb)).toEqual({ contentType: "image/jpeg", width: 400, height: 267 });
  });
});
