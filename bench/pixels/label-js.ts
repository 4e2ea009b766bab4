import { decode as decodePng } from "fast-png";
import jpeg from "jpeg-js";
import { type LabelSpec, labelOverlay } from "../../workers/lib/label/render.ts";

// The disclosure label as the Worker burned it in before ADR 0250, kept for bench:pixels' "before" rows: the whole
// photo decoded with jpeg-js, the label drawn over it, encoded again (about 700 ms for a 2304 x 1536 result). The
// Worker no longer does this on any path (scripts/check-label-codec.ts); only this bench does.

interface Position {
  top?: number;
  bottom?: number;
  left?: number;
  right?: number;
}

/** `overlay` (RGBA, not premultiplied) drawn over the decoded photo at `position`, then encoded at quality 90. */
export function compositeJs(photoBytes: Uint8Array, overlayPng: Uint8Array, position: Position): Uint8Array {
  const photo = jpeg.decode(photoBytes, { useTArray: true, formatAsRGBA: true, maxMemoryUsageInMB: 256 });
  const o = decodePng(overlayPng);
  const W = photo.width;
  const H = photo.height;
  const x0 = position.left ?? (position.right !== undefined ? W - position.right - o.width : (W - o.width) >> 1);
  const y0 = position.top ?? (position.bottom !== undefined ? H - position.bottom - o.height : (H - o.height) >> 1);
  const ch = o.channels;
  for (let y = 0; y < o.height; y++) {
    for (let x = 0; x < o.width; x++) {
      const tx = x0 + x;
      const ty = y0 + y;
      if (tx < 0 || ty < 0 || tx >= W || ty >= H) continue;
      const s = (y * o.width + x) * ch;
      const a = ch === 4 ? (o.data[s + 3] ?? 0) / 255 : 1;
      const t = (ty * W + tx) * 4;
      for (let c = 0; c < 3; c++)
        photo.data[t + c] = photo.data[t + c]! + ((o.data[s + c] ?? 0) - photo.data[t + c]!) * a;
    }
  }
  return new Uint8Array(jpeg.encode({ width: W, height: H, data: photo.data }, 90).data);
}

/** The old label path whole: decode, draw the label, encode (JPEG results only). */
export function renderLabelledJs(bytes: Uint8Array, spec: LabelSpec): Uint8Array {
  const photo = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxMemoryUsageInMB: 256 });
  const { image, left, top } = labelOverlay(photo.width, photo.height, spec);
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      const s = (y * image.width + x) * 4;
      const a = image.data[s + 3]! / 255;
      const t = ((top + y) * photo.width + left + x) * 4;
      for (let c = 0; c < 3; c++)
        photo.data[t + c] = photo.data[t + c]! + (image.data[s + c]! - photo.data[t + c]!) * a;
    }
  }
  return new Uint8Array(jpeg.encode({ width: photo.width, height: photo.height, data: photo.data }, 90).data);
}
