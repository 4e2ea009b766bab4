import { claimJpeg, claimPng } from "@test/fixtures/images";
import { describe, expect, it } from "vitest";
import { PrepareError, preparePhoto } from "~/lib/image-prep";
import { UPLOAD_MESSAGES } from "~/shared/upload-rules";

// The browser's downscaler reads the header before asking the browser to
// decode anything (docs/decisions/0103-pixel-limits.md): a header that claims
// more than a phone can decode is refused with the size message, so it is
// neither decoded nor uploaded.
describe("the browser refuses absurd dimensions before decoding", () => {
  for (const [name, bytes] of [
    ["60000x60000 PNG", claimPng(60000, 60000)],
    ["4294967295x1 PNG", claimPng(4294967295, 1)],
    ["65535x65535 JPEG", claimJpeg(65535, 65535)],
    ["20000x100 PNG", claimPng(20000, 100)],
  ] as const) {
    it(name, async () => {
      const type = name.includes("JPEG") ? "image/jpeg" : "image/png";
      const err = await preparePhoto(new Blob([bytes], { type })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PrepareError);
      expect((err as Error).message).toBe(UPLOAD_MESSAGES.tooManyPixels);
    });
  }
});
