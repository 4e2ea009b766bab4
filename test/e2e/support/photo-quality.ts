import { fileURLToPath } from "node:url";
import jpeg from "jpeg-js";
import { type Browser, chromium } from "playwright-core";
import { ssim } from "ssim.js";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../chromium.ts";

// How good a downscaled photo still is (docs/decisions/0131-fewer-bytes-per-photo.md):
// SSIM (ssim.js) of the encoded photo against the full-size original scaled to
// the same size with an exact area average, so the score measures what the
// encoder lost, not the downscale itself. `sweepEncoders` encodes one file in
// Chromium exactly the way app/lib/image-prep.ts does (createImageBitmap with
// the EXIF orientation, a high-quality canvas draw, canvas JPEG) at several
// sizes and qualities: the figures the choice was made from.
// `node test/e2e/support/photo-quality.ts` prints the sweep for the bench's phone photo.

interface Pixels {
  data: Uint8ClampedArray;
  width: number;
  height: number;
}

function decode(bytes: Uint8Array): Pixels {
  const img = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxMemoryUsageInMB: 1024 });
  return {
    data: new Uint8ClampedArray(img.data.buffer, img.data.byteOffset, img.data.byteLength),
    width: img.width,
    height: img.height,
  };
}

/** Exact area-average downscale (each output pixel is the mean of the source area it covers). */
function areaDownscale(src: Pixels, width: number, height: number): Pixels {
  const sx = src.width / width;
  const sy = src.height / height;
  // Horizontal pass into a float buffer, then vertical.
  const tmp = new Float32Array(width * src.height * 3);
  for (let x = 0; x < width; x++) {
    const x0 = x * sx;
    const x1 = x0 + sx;
    for (let y = 0; y < src.height; y++) {
      let r = 0;
      let g = 0;
      let b = 0;
      for (let i = Math.floor(x0); i < Math.ceil(x1); i++) {
        const w = Math.min(i + 1, x1) - Math.max(i, x0);
        const o = (y * src.width + i) * 4;
        r += src.data[o]! * w;
        g += src.data[o + 1]! * w;
        b += src.data[o + 2]! * w;
      }
      const t = (y * width + x) * 3;
      tmp[t] = r / sx;
      tmp[t + 1] = g / sx;
      tmp[t + 2] = b / sx;
    }
  }
  const out = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    const y0 = y * sy;
    const y1 = y0 + sy;
    for (let x = 0; x < width; x++) {
      let r = 0;
      let g = 0;
      let b = 0;
      for (let j = Math.floor(y0); j < Math.ceil(y1); j++) {
        const w = Math.min(j + 1, y1) - Math.max(j, y0);
        const t = (j * width + x) * 3;
        r += tmp[t]! * w;
        g += tmp[t + 1]! * w;
        b += tmp[t + 2]! * w;
      }
      const o = (y * width + x) * 4;
      out[o] = r / sy;
      out[o + 1] = g / sy;
      out[o + 2] = b / sy;
      out[o + 3] = 255;
    }
  }
  return { data: out, width, height };
}

/** SSIM (0-1, 1 = identical) of `encoded` against `original` scaled to the encoded size. */
export function qualityScore(original: Uint8Array, encoded: Uint8Array, decodedOriginal?: Pixels): number {
  const full = decodedOriginal ?? decode(original);
  const got = decode(encoded);
  const ref = areaDownscale(full, got.width, got.height);
  // Full resolution: ssim.js's default first shrinks to about 256 px, which hides compression artefacts.
  return ssim(ref as ImageData, got as ImageData, { ssim: "weber", downsample: false }).mssim;
}

export interface EncoderResult {
  longEdge: number;
  quality: number;
  width: number;
  height: number;
  bytes: number;
  ssim: number;
}

/** Encodes `file` in Chromium as the browser's downscaler does, at each long edge and JPEG quality. */
export async function sweepEncoders(
  browser: Browser,
  file: Uint8Array,
  candidates: { longEdge: number; quality: number }[],
): Promise<EncoderResult[]> {
  const page = await browser.newPage();
  try {
    await page.setContent("<!doctype html><title>encode</title>");
    const full = decode(file);
    const base64 = Buffer.from(file).toString("base64");
    const out: EncoderResult[] = [];
    for (const c of candidates) {
      const encoded = await page.evaluate(
        async ({ base64, longEdge, quality }) => {
          const blob = await (await fetch(`data:image/jpeg;base64,${base64}`)).blob();
          const bitmap = await createImageBitmap(blob, { imageOrientation: "from-image" });
          const scale = Math.min(1, longEdge / Math.max(bitmap.width, bitmap.height));
          const w = Math.round(bitmap.width * scale);
          const h = Math.round(bitmap.height * scale);
          const canvas = new OffscreenCanvas(w, h);
          const ctx = canvas.getContext("2d")!;
          ctx.fillStyle = "#fff";
          ctx.fillRect(0, 0, w, h);
          ctx.imageSmoothingEnabled = true;
          ctx.imageSmoothingQuality = "high";
          ctx.drawImage(bitmap, 0, 0, w, h);
          const out = await canvas.convertToBlob({ type: "image/jpeg", quality });
          const reader = new FileReader();
          return new Promise<string>((resolve) => {
            reader.onload = () => resolve(String(reader.result).split(",")[1] ?? "");
            reader.readAsDataURL(out);
          });
        },
        { base64, longEdge: c.longEdge, quality: c.quality },
      );
      const bytes = new Uint8Array(Buffer.from(encoded, "base64"));
      const t = performance.now();
      const got = decode(bytes);
      out.push({
        ...c,
        width: got.width,
        height: got.height,
        bytes: bytes.byteLength,
        ssim: qualityScore(file, bytes, full),
      });
      if (process.env.BENCH_DEBUG) console.log(`scored in ${Math.round(performance.now() - t)} ms`);
    }
    return out;
  } finally {
    await page.close();
  }
}

/** Long edges and qualities the sweep tries: today's 3000 px / 0.85 and the 2560 px candidates. */
export const SWEEP = [
  { longEdge: 3000, quality: 0.85 },
  ...[0.78, 0.82, 0.86, 0.88, 0.9].map((quality) => ({ longEdge: 2560, quality })),
];

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { phoneSizedJpeg } = await import("./library-bytes.ts");
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  try {
    const file = phoneSizedJpeg();
    console.log(`phone photo: ${file.byteLength} bytes`);
    for (const r of await sweepEncoders(browser, file, SWEEP)) {
      console.log(
        `${r.longEdge} px q${r.quality}: ${r.width}x${r.height} ${(r.bytes / 1048576).toFixed(2)} MB, SSIM ${r.ssim.toFixed(4)}`,
      );
    }
  } finally {
    await browser.close();
  }
}
