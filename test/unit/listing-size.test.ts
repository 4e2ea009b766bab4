import { atListingSize, STAGE_SCALE_FACTOR, upscaleFactorFor } from "@workers/objects/user/jobs/listing-size";
import { describe, expect, it, vi } from "vitest";

// Results at listing resolution (docs/decisions/0151-provider-as-documented.md): which results are enlarged by the
// provider's /upscale_image, by what factor, and that a failed enlargement still delivers the result.

/** The start of a JPEG up to its frame header: enough for its size to be read (describeImage reads no pixels). */
function jpegOfSize(width: number, height: number): Uint8Array {
  return new Uint8Array([0xff, 0xd8, 0xff, 0xc0, 0, 17, 8, height >> 8, height & 255, width >> 8, width & 255, 3]);
}

function upscaler(answer: (input: { bytes: Uint8Array; scaleFactor: number }) => Promise<Uint8Array>) {
  const calls: { scaleFactor: number; contentType: string }[] = [];
  return {
    calls,
    client: {
      upscale: async (input: { bytes: Uint8Array; contentType: string; scaleFactor: number }) => {
        calls.push({ scaleFactor: input.scaleFactor, contentType: input.contentType });
        return answer(input);
      },
    },
  };
}

const later = () => Date.now() + 60_000;

describe("results at listing size", () => {
  it("staging asks the provider for 3x its 768 px results: 2304 px, no extra call", () => {
    expect(STAGE_SCALE_FACTOR).toBe(3);
    expect(768 * STAGE_SCALE_FACTOR).toBeGreaterThanOrEqual(2048);
  });

  it("chooses the smallest factor that reaches 2048 px, at most 4, only for results the provider can enlarge", () => {
    expect(upscaleFactorFor(768)).toBe(3);
    expect(upscaleFactorFor(1024)).toBe(2);
    expect(upscaleFactorFor(300)).toBe(4);
    expect(upscaleFactorFor(1025)).toBeNull();
    expect(upscaleFactorFor(2048)).toBeNull();
    expect(upscaleFactorFor(2304)).toBeNull();
  });

  it("enlarges a 768x576 emptied room to 2304x1728 with one call", async () => {
    const { client, calls } = upscaler(async () => jpegOfSize(2304, 1728));
    const out = await atListingSize(client, jpegOfSize(768, 576), later());
    expect(out).toEqual(jpegOfSize(2304, 1728));
    expect(calls).toEqual([{ scaleFactor: 3, contentType: "image/jpeg" }]);
  });

  it("leaves a result at listing size, or too large for the provider to enlarge, as it is, without a call", async () => {
    const { client, calls } = upscaler(async () => jpegOfSize(9999, 9999));
    for (const [w, h] of [
      [2304, 1536],
      [1536, 1024],
    ] as const) {
      expect(await atListingSize(client, jpegOfSize(w, h), later())).toEqual(jpegOfSize(w, h));
    }
    expect(calls).toEqual([]);
  });

  it("delivers the result at its own size when the enlargement fails, answers no larger, or has no time left", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const small = jpegOfSize(768, 512);
    const failing = upscaler(async () => {
      throw new Error("provider down");
    });
    expect(await atListingSize(failing.client, small, later())).toEqual(small);
    expect(warn.mock.calls[0]?.[0]).toMatch(/768x512/);
    const same = upscaler(async () => jpegOfSize(768, 512));
    expect(await atListingSize(same.client, small, later())).toEqual(small);
    const notAnImage = upscaler(async () => new Uint8Array([1, 2, 3, 4]));
    expect(await atListingSize(notAnImage.client, small, later())).toEqual(small);
    const late = upscaler(async () => jpegOfSize(2304, 1536));
    expect(await atListingSize(late.client, small, Date.now() + 5_000)).toEqual(small);
    expect(late.calls).toEqual([]);
  });
});
