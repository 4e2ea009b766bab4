import jpeg from "jpeg-js";
import { describeImage, type ImageInfo, isJpeg, isPng, RESULT_THUMB_EDGE } from "./image-facts";

// Thumbnails of AI results decoded in JavaScript (jpeg-js): no request path of the Worker uses them any more (the
// Images binding makes thumbnails, workers/lib/images.ts); kept as the bench's "before" (bench/pixels) and tested.
// A box filter keeps them readable; they stay well under 100 KB.

export { describeImage, type ImageInfo, isJpeg, isPng, RESULT_THUMB_EDGE } from "./image-facts";

/** A JPEG thumbnail of a result, decoded here (what that costs: bench/pixels.ts). */
export function makeResultThumb(bytes: Uint8Array): Uint8Array {
  return describeAndThumb(bytes).thumb;
}

/** The result's type and size, and a JPEG thumbnail (the result itself when it cannot be decoded here). */
export function describeAndThumb(bytes: Uint8Array): { info: ImageInfo; thumb: Uint8Array } {
  if (isPng(bytes)) return { info: describeImage(bytes), thumb: bytes };
  if (!isJpeg(bytes)) throw new Error("The provider's result is not a JPEG or PNG image.");
  const img = jpeg.decode(bytes, { useTArray: true, maxMemoryUsageInMB: 256, maxResolutionInMP: 40 });
  const { width, height } = img;
  const scale = Math.min(1, RESULT_THUMB_EDGE / Math.max(width, height));
  const tw = Math.max(1, Math.round(width * scale));
  const th = Math.max(1, Math.round(height * scale));
  const out = new Uint8Array(tw * th * 4);
  for (let y = 0; y < th; y++) {
    const y0 = Math.floor(y / scale);
    const y1 = Math.max(y0 + 1, Math.min(height, Math.floor((y + 1) / scale)));
    for (let x = 0; x < tw; x++) {
      const x0 = Math.floor(x / scale);
      const x1 = Math.max(x0 + 1, Math.min(width, Math.floor((x + 1) / scale)));
      let r = 0;
      let g = 0;
      let b = 0;
      let n = 0;
      for (let sy = y0; sy < y1; sy++) {
        for (let sx = x0; sx < x1; sx++) {
          const i = (sy * width + sx) * 4;
          r += img.data[i] ?? 0;
          g += img.data[i + 1] ?? 0;
          b += img.data[i + 2] ?? 0;
          n++;
        }
      }
      const o = (y * tw + x) * 4;
      out[o] = r / n;
      out[o + 1] = g / n;
      out[o + 2] = b / n;
      out[o + 3] = 255;
    }
  }
  const thumb = new Uint8Array(jpeg.encode({ width: tw, height: th, data: out }, 75).data);
  return { info: { contentType: "image/jpeg", width, height }, thumb };
}
