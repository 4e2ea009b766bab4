import { env } from "cloudflare:workers";
import { makeJpeg, makePng } from "@test/fixtures/images";
import { grayFromPng, grayFromPngNative, images, imagesFor } from "@workers/lib/images";
import { describeImage } from "@workers/lib/thumbnail";
import { encode as encodePng } from "fast-png";
import jpeg from "jpeg-js";
import { beforeAll, describe, expect, it } from "vitest";

// The Images adapter against the binding as the workerd tests have it: miniflare's offline stand-in (sharp in
// vitest's Node process), no network. docs/decisions/0161-pixel-work-off-the-object.md.

const W = 2304;
const H = 1536;
let result: Uint8Array;

/** An RGBA PNG of one colour; `alpha` 0-255. */
function solidPng(width: number, height: number, rgb: [number, number, number], alpha = 255): Uint8Array {
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) data.set([...rgb, alpha], i * 4);
  return encodePng({ width, height, data, channels: 4, depth: 8 });
}

function pixel(img: { width: number; data: Uint8Array }, x: number, y: number): number[] {
  const i = (y * img.width + x) * 4;
  return [img.data[i]!, img.data[i + 1]!, img.data[i + 2]!];
}

const decode = (b: Uint8Array) => jpeg.decode(b, { useTArray: true, formatAsRGBA: true });

beforeAll(() => {
  // A result at listing size, as the provider's upscale returns it (2304 x 1536).
  result = makeJpeg(W, H, 85, 24, 7);
});

describe("workers/lib/images (Images binding, local stand-in)", () => {
  const pix = imagesFor(env);

  it("is the stand-in here: APP_ENV is test", () => {
    expect(env.APP_ENV).toBe("test");
  });

  it("reads format and size", async () => {
    await expect(pix.info(result)).resolves.toEqual({
      contentType: "image/jpeg",
      width: W,
      height: H,
      fileSize: result.byteLength,
    });
    const png = makePng(17, 9);
    await expect(pix.info(png)).resolves.toMatchObject({ contentType: "image/png", width: 17, height: 9 });
  });

  it("makes a 400 px JPEG thumbnail and never enlarges", async () => {
    const thumb = await pix.thumbnail(result);
    expect(describeImage(thumb)).toEqual({ contentType: "image/jpeg", width: 400, height: 267 });
    expect(thumb.byteLength).toBeLessThan(100_000);
    // The picture survives: the fixture's gradient (red grows left to right) is still there.
    const t = decode(thumb);
    expect(pixel(t, 390, 130)[0]! - pixel(t, 10, 130)[0]!).toBeGreaterThan(120);
    const small = await pix.thumbnail(makeJpeg(300, 200, 85));
    expect(describeImage(small)).toEqual({ contentType: "image/jpeg", width: 300, height: 200 });
    // A PNG result gets a JPEG thumbnail too.
    expect(describeImage(await pix.thumbnail(makePng(800, 600)))).toEqual({
      contentType: "image/jpeg",
      width: 400,
      height: 300,
    });
  });

  it("reduces to a grayscale analysis image of the asked long edge", async () => {
    const gray = await pix.analysisGray(result, 384);
    expect([gray.width, gray.height, gray.data.length]).toEqual([384, 256, 384 * 256]);
    // The fixture: R = 30 + 200 x/W, G = 40 + 180 y/H, B = 150 (+ noise). Luma at the corners, within JPEG error.
    const at = (x: number, y: number) => gray.data[y * gray.width + x]!;
    const luma = (r: number, g: number, b: number) => 0.299 * r + 0.587 * g + 0.114 * b;
    expect(Math.abs(at(2, 2) - luma(31, 41, 150))).toBeLessThan(8);
    expect(Math.abs(at(381, 253) - luma(229, 219, 150))).toBeLessThan(8);
    // The source photo (4:3, 2560 px) at the same long edge.
    const src = await pix.analysisGray(makeJpeg(2560, 1920, 85), 384);
    expect([src.width, src.height]).toEqual([384, 288]);
    await expect(pix.analysisGray(result, 4000)).rejects.toThrow(/analysis size/);
  });

  it("takes the luma of a PNG with the runtime's inflate exactly as fast-png's decode does", async () => {
    // The stand-in's PNG (sharp: adaptive filters, so every PNG filter type is met) and each colour type and depth.
    const png = await env.IMAGES.input(new Blob([result as Uint8Array<ArrayBuffer>]).stream())
      .transform({ width: 384, height: 384, fit: "scale-down" })
      .output({ format: "image/png" });
    const fromService = new Uint8Array(await new Response(png.image()).arrayBuffer());
    const samples: Uint8Array[] = [fromService];
    for (const [channels, depth] of [
      [1, 8],
      [2, 8],
      [3, 8],
      [4, 8],
      [3, 16],
      [4, 16],
    ] as const) {
      const w = 37;
      const h = 23;
      const data = depth === 8 ? new Uint8Array(w * h * channels) : new Uint16Array(w * h * channels);
      for (let i = 0; i < data.length; i++) data[i] = ((i * 7919) % 251) * (depth === 8 ? 1 : 257);
      samples.push(encodePng({ width: w, height: h, data, channels, depth }));
    }
    for (const sample of samples) {
      const native = await grayFromPngNative(sample);
      expect(native).toEqual(grayFromPng(sample));
    }
    await expect(grayFromPngNative(makeJpeg(8, 8))).rejects.toThrow(/Not a PNG/);
  });

  it("burns an overlay in at its position (by the local images emulator, as the stand-in cannot draw)", async () => {
    const label = solidPng(120, 40, [255, 0, 0]);
    const half = solidPng(60, 20, [0, 0, 255], 128);
    let out = await pix.burnOverlay(result, label, { bottom: 10, right: 20 });
    expect(describeImage(out)).toEqual({ contentType: "image/jpeg", width: W, height: H });
    let img = decode(out);
    const [r, g, b] = pixel(img, W - 20 - 60, H - 10 - 20);
    expect(r).toBeGreaterThan(230);
    expect(Math.max(g!, b!)).toBeLessThan(30);
    // Outside the overlay the photo is unchanged (within JPEG error).
    const before = decode(result);
    const [r0] = pixel(before, W - 200, H - 30);
    expect(Math.abs(pixel(img, W - 200, H - 30)[0]! - r0!)).toBeLessThan(12);

    out = await pix.burnOverlay(result, half, { top: 0, left: 0 });
    img = decode(out);
    const [, , b2] = pixel(img, 30, 10);
    const [, , b1] = pixel(before, 30, 10);
    expect(b2! - b1!).toBeGreaterThan(40);
    expect(b2!).toBeLessThan(240);

    await expect(pix.burnOverlay(result, label, { left: 0, right: 0 })).rejects.toThrow(/not both/);
    // Two full decodes and encodes of a 2304 px JPEG in the emulator (vitest's Node process): slow on a loaded machine.
  }, 60_000);

  // What the stand-in does not do, pinned: when one of these fails, miniflare has caught up and
  // workers/lib/images.ts can drop its local path (burnOverlay) or use the raw output (analysisGray).
  describe("the stand-in's limits (miniflare 5.20261023, wrangler 4.155)", () => {
    it("leaves draw() out silently", async () => {
      const viaBinding = images(env.IMAGES, { local: false });
      const out = await viaBinding.burnOverlay(result, solidPng(120, 40, [255, 0, 0]), { bottom: 10, right: 20 });
      const img = decode(out);
      const [r, g] = pixel(img, W - 20 - 60, H - 10 - 20);
      expect(g! > 60 || r! < 200).toBe(true);
    });

    it("refuses the raw rgb output", async () => {
      const stream = new Blob([makeJpeg(64, 48) as Uint8Array<ArrayBuffer>]).stream();
      await expect(env.IMAGES.input(stream).output({ format: "rgb" })).rejects.toThrow(/not supported in local mode/);
    });
  });
});
