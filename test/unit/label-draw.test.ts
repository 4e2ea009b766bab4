import { env } from "cloudflare:workers";
import { makeJpeg } from "@test/fixtures/images";
import { images } from "@workers/lib/images";
import { type LabelSpec, labelOverlay } from "@workers/lib/label/render";
import { labelledBytes, labelsPrefix } from "@workers/services/mls/labels";
import { decode as decodePng } from "fast-png";
import { describe, expect, it } from "vitest";

// The production road of the disclosure label (docs/decisions/0250-labels-drawn-by-images.md): the Worker never
// decodes the photo; it lays the label out for the photo's size (read from its header), draws it as a small PNG and
// hands photo and PNG to the Images binding's draw(). Locally the binding is miniflare's stand-in, which ignores
// draw(), so this runs against a stub binding that records each call and answers with bytes of its own: what the
// Worker asked for is checked here; what Cloudflare's draw() makes of it is checked once on staging
// (README.md, "Labels on staging").

interface Recorded {
  input: Uint8Array;
  draws: { overlay: Uint8Array; options: ImageDrawOptions | undefined }[];
  transforms: ImageTransform[];
  output: ImageOutputOptions | null;
}

const DRAWN = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4]);

async function bytesOfStream(s: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(s).arrayBuffer());
}

/** An Images binding that records what it is asked and answers `answer` (or fails with `fail`). */
function stubBinding(opts: { answer?: Uint8Array; fail?: string } = {}): { binding: ImagesBinding; calls: Recorded[] } {
  const calls: Recorded[] = [];
  const binding = {
    async info() {
      throw new Error("info is not called on the label's road");
    },
    input(stream: ReadableStream<Uint8Array>) {
      const call: Recorded = { input: new Uint8Array(), draws: [], transforms: [], output: null };
      calls.push(call);
      const pending: Promise<void>[] = [
        bytesOfStream(stream).then((b) => {
          call.input = b;
        }),
      ];
      const transformer = {
        transform(t: ImageTransform) {
          call.transforms.push(t);
          return transformer;
        },
        draw(overlay: ReadableStream<Uint8Array>, options?: ImageDrawOptions) {
          const draw: Recorded["draws"][number] = { overlay: new Uint8Array(), options };
          call.draws.push(draw);
          pending.push(
            bytesOfStream(overlay).then((b) => {
              draw.overlay = b;
            }),
          );
          return transformer;
        },
        async output(o: ImageOutputOptions) {
          call.output = o;
          await Promise.all(pending);
          if (opts.fail) throw new Error(opts.fail);
          const bytes = opts.answer ?? DRAWN;
          return {
            response: () => new Response(bytes as Uint8Array<ArrayBuffer>),
            contentType: () => o.format,
            image: () => new Blob([bytes as Uint8Array<ArrayBuffer>]).stream(),
          };
        },
      };
      return transformer;
    },
  };
  return { binding: binding as unknown as ImagesBinding, calls };
}

const SPEC: LabelSpec = {
  lines: ["Virtually staged photo", "Unaltered original: stagewise.example.com/o/abc"],
  corner: "bottom-right",
  size: "medium",
  tone: "light",
  qrUrl: "https://stagewise.example.com/o/abc",
};

let n = 0;
async function storedVersion(bytes: Uint8Array, contentType = "image/jpeg") {
  n++;
  const version = {
    id: `v-draw-${n}-${Date.now()}`,
    userId: `u-draw-${n}`,
    photoId: `p-draw-${n}`,
    key: `users/u-draw-${n}/photos/p-draw-${n}/v${n}.jpg`,
    thumbKey: `users/u-draw-${n}/photos/p-draw-${n}/v${n}-thumb.jpg`,
    structureVerdict: null,
  };
  await env.PHOTOS.put(version.key, bytes, { httpMetadata: { contentType } });
  return version;
}

describe("the disclosure label through the Images binding's draw() (production's road, a recording stub)", () => {
  it("burnOverlay hands the photo and the overlay to draw() at its position, JPEG at quality 90 or PNG as asked", async () => {
    const { binding, calls } = stubBinding();
    const pix = images(binding, { local: false });
    const photo = makeJpeg(64, 48);
    const overlay = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 9, 9, 9]);
    expect(await pix.burnOverlay(photo, overlay, { left: 5, top: 7 })).toEqual(DRAWN);
    await pix.burnOverlay(photo, overlay, { bottom: 1, right: 2 }, "image/png");
    expect(calls).toHaveLength(2);
    expect(calls[0]!.input).toEqual(photo);
    expect(calls[0]!.transforms).toEqual([]);
    expect(calls[0]!.draws).toEqual([{ overlay, options: { left: 5, top: 7 } }]);
    expect(calls[0]!.output).toEqual({ format: "image/jpeg", quality: 90 });
    expect(calls[1]!.draws[0]!.options).toEqual({ bottom: 1, right: 2 });
    expect(calls[1]!.output).toEqual({ format: "image/png", quality: 90 });
  });

  it("labelledBytes draws the label's PNG at its corner onto the stored photo as it is, and keeps the answer", async () => {
    const W = 2304;
    const H = 1536;
    const photo = makeJpeg(W, H, 85, 24, 3);
    const version = await storedVersion(photo);
    const { binding, calls } = stubBinding();
    const pix = images(binding, { local: false });

    const first = await labelledBytes(env.PHOTOS, pix, version, SPEC);
    expect(first).toEqual({ ok: true, bytes: DRAWN, contentType: "image/jpeg" });
    expect(calls).toHaveLength(1);
    const [call] = calls;
    // The photo goes to the binding byte for byte: the Worker did not decode or re-encode it.
    expect(call!.input).toEqual(photo);
    expect(call!.draws).toHaveLength(1);
    const { overlay, options } = call!.draws[0]!;
    // The overlay is the label laid out for a 2304 x 1536 photo, at its place in the bottom-right corner.
    const want = labelOverlay(W, H, SPEC);
    expect(options).toEqual({ left: want.left, top: want.top });
    const margin = Math.round(H * 0.02);
    expect(want.left + want.image.width).toBe(W - margin);
    expect(want.top + want.image.height).toBe(H - margin);
    const png = decodePng(overlay);
    expect([png.width, png.height, png.channels, png.depth]).toEqual([want.image.width, want.image.height, 4, 8]);
    expect(new Uint8Array(png.data)).toEqual(want.image.data);
    // A light box (85 % white), the QR's white quiet zone opaque, a dark module opaque black.
    const alphaAt = (x: number, y: number) => png.data[(y * png.width + x) * 4 + 3];
    expect(alphaAt(1, 1)).toBe(217);
    expect(call!.output).toEqual({ format: "image/jpeg", quality: 90 });
    const stored = await env.PHOTOS.list({ prefix: labelsPrefix(version) });
    expect(stored.objects).toHaveLength(1);

    // Asked again: the kept bytes, no second call to the binding.
    expect(await labelledBytes(env.PHOTOS, pix, version, SPEC)).toEqual(first);
    expect(calls).toHaveLength(1);
  });

  it("on a photo narrower than the label, the overlay is the part on the photo: whole offsets, inside its edges", async () => {
    for (const [w, h, corner] of [
      [320, 240, "bottom-right"],
      [320, 240, "top-left"],
      [120, 90, "bottom-left"],
    ] as const) {
      const { image, left, top } = labelOverlay(w, h, { ...SPEC, corner, size: "large" });
      expect(Number.isInteger(left) && Number.isInteger(top) && left >= 0 && top >= 0).toBe(true);
      expect(left + image.width).toBeLessThanOrEqual(w);
      expect(top + image.height).toBeLessThanOrEqual(h);
      expect(image.data.length).toBe(image.width * image.height * 4);
      const { binding, calls } = stubBinding();
      const version = await storedVersion(makeJpeg(w, h));
      expect((await labelledBytes(env.PHOTOS, images(binding, { local: false }), version, SPEC)).ok).toBe(true);
      const want = labelOverlay(w, h, SPEC);
      expect(calls[0]!.draws[0]!.options).toEqual({ left: want.left, top: want.top });
    }
  });

  it("a PNG result is drawn as a PNG; a file that is neither is refused before any call", async () => {
    const { binding, calls } = stubBinding();
    const pix = images(binding, { local: false });
    const header = new Uint8Array(33);
    header.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
    new DataView(header.buffer).setUint32(16, 1200);
    new DataView(header.buffer).setUint32(20, 800);
    const png = await storedVersion(header, "image/png");
    const res = await labelledBytes(env.PHOTOS, pix, png, SPEC);
    expect(res.ok && res.contentType).toBe("image/png");
    expect(calls[0]!.output?.format).toBe("image/png");

    const junk = await storedVersion(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]));
    const refused = await labelledBytes(env.PHOTOS, pix, junk, SPEC);
    expect(refused).toMatchObject({ ok: false, code: "unprocessable" });
    expect(calls).toHaveLength(1);
  });

  it("when the image service fails there is no download: 'unavailable', nothing kept, never the photo unlabelled", async () => {
    const version = await storedVersion(makeJpeg(640, 480));
    const { binding } = stubBinding({ fail: "9422: quota" });
    const res = await labelledBytes(env.PHOTOS, images(binding, { local: false }), version, SPEC);
    expect(res).toMatchObject({ ok: false, code: "unavailable" });
    expect((await env.PHOTOS.list({ prefix: labelsPrefix(version) })).objects).toHaveLength(0);
  });
});
