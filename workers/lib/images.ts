import { decode as decodePng } from "fast-png";
import { RESULT_THUMB_EDGE } from "./image-facts";
import { inflateAll, pngParts, rowShape, unfilterRow } from "./png-rows";

// Pixel work through the platform's image service (the Images binding, `[images]` in wrangler.toml), so that no
// decode, resize or encode runs on the calling isolate's thread: the caller hands over bytes and awaits bytes
// (docs/decisions/0161-pixel-work-off-the-object.md). In production the binding is a separate Cloudflare service;
// under wrangler dev and the vitest plugin it is miniflare's offline stand-in, which runs sharp in wrangler's (or
// vitest's) Node process.
//
// The stand-in is "low fidelity": it applies width, height, fit, gravity, background and rotate and the output
// format, and nothing else. It ignores `quality` (sharp's default 80), every other transform, and `draw()` (the
// overlay is silently left out), and refuses the raw `rgb`/`rgba` outputs. So:
// - analysisGray asks for a PNG (works in both) and takes the luma here, on a small image;
// - burnOverlay draws through the binding in production; where the binding is the stand-in (`local`) it sends the
//   same draw to the local images emulator (emulators/images-draw.ts, a Node process at IMAGES_LOCAL_URL), never
//   decoding here: no JPEG codec runs in the Worker on either road (docs/decisions/0250-labels-drawn-by-images.md).

export const THUMB_QUALITY = 75;
export const OVERLAY_QUALITY = 90;
/** The analysis size's bounds: a structure check wants a few hundred pixels, never a full-size decode. */
export const ANALYSIS_EDGE_MIN = 16;
export const ANALYSIS_EDGE_MAX = 1024;

export interface ImageFacts {
  /** "image/jpeg", "image/png", "image/webp", "image/gif", "image/avif" or "image/svg+xml". */
  contentType: string;
  /** 0 for SVG, which has no pixel size. */
  width: number;
  height: number;
  /** The size in bytes the service reports (0 for SVG). */
  fileSize: number;
}

/** A grayscale image: one byte per pixel (BT.601 luma), rows top to bottom. */
export interface GrayImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/**
 * Where an overlay goes, as the binding's draw options: pixels from the named edges, at most one of left/right and
 * one of top/bottom. An axis with neither is centred.
 */
export interface OverlayPosition {
  top?: number;
  bottom?: number;
  left?: number;
  right?: number;
}

export interface Images {
  /** Format and size, from the service (no decode here). */
  info(bytes: Uint8Array): Promise<ImageFacts>;
  /** A JPEG no longer than 400 px on its long edge (never enlarged), for the grid. */
  thumbnail(bytes: Uint8Array): Promise<Uint8Array>;
  /** The image reduced to `longEdge` px on its long edge (never enlarged), as grayscale pixels. */
  analysisGray(bytes: Uint8Array, longEdge: number): Promise<GrayImage>;
  /**
   * `overlayPng` (transparency kept) drawn onto the photo at `position`: an image of the photo's size, in `format`
   * (JPEG at quality 90 unless said otherwise).
   */
  burnOverlay(
    photoBytes: Uint8Array,
    overlayPng: Uint8Array,
    position: OverlayPosition,
    format?: OverlayFormat,
  ): Promise<Uint8Array>;
}

export type OverlayFormat = "image/jpeg" | "image/png";

export interface ImagesOptions {
  /**
   * True where the binding is miniflare's offline stand-in (wrangler dev, `npm start`, the e2e stack and the workerd
   * tests: APP_ENV "development" or "test"): it cannot draw, so burnOverlay sends the draw to `localDrawUrl`.
   */
  local: boolean;
  /** The local images emulator's address (IMAGES_LOCAL_URL); only where `local`. */
  localDrawUrl?: string;
  /** The fetch that reaches it (the runtime's). */
  fetch?: typeof fetch;
}

/** The adapter for a Worker's environment: the binding is the stand-in wherever APP_ENV is not "production". */
export function imagesFor(env: { IMAGES: ImagesBinding; APP_ENV: string; IMAGES_LOCAL_URL?: string }): Images {
  const local = env.APP_ENV !== "production";
  return images(env.IMAGES, { local, ...(local ? { localDrawUrl: env.IMAGES_LOCAL_URL } : {}) });
}

/**
 * The bytes as one chunk. The binding's client (workerd's streaming-forms) copies its input into the request chunk by
 * chunk in JavaScript, so a Blob's many-chunk stream cost this thread more per call than one chunk (bench/pixels.ts).
 * A copy, because the request may take the chunk over.
 */
function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  const chunk = bytes.slice();
  return new ReadableStream({
    start(controller) {
      controller.enqueue(chunk);
      controller.close();
    },
  });
}

async function bytesOf(result: ImageTransformationResult): Promise<Uint8Array> {
  return new Uint8Array(await new Response(result.image()).arrayBuffer());
}

function checkPosition(position: OverlayPosition): void {
  if (position.left !== undefined && position.right !== undefined)
    throw new Error("An overlay takes left or right, not both.");
  if (position.top !== undefined && position.bottom !== undefined)
    throw new Error("An overlay takes top or bottom, not both.");
  for (const v of Object.values(position)) {
    if (v !== undefined && !(Number.isInteger(v) && v >= 0)) throw new Error("Overlay offsets are whole pixels.");
  }
}

export function images(binding: ImagesBinding, options: ImagesOptions): Images {
  return {
    async info(bytes) {
      const r = await binding.info(streamOf(bytes));
      if (!("width" in r)) return { contentType: r.format, width: 0, height: 0, fileSize: 0 };
      return { contentType: r.format, width: r.width, height: r.height, fileSize: r.fileSize };
    },

    async thumbnail(bytes) {
      const out = await binding
        .input(streamOf(bytes))
        .transform({ width: RESULT_THUMB_EDGE, height: RESULT_THUMB_EDGE, fit: "scale-down" })
        .output({ format: "image/jpeg", quality: THUMB_QUALITY });
      return bytesOf(out);
    },

    async analysisGray(bytes, longEdge) {
      if (!Number.isInteger(longEdge) || longEdge < ANALYSIS_EDGE_MIN || longEdge > ANALYSIS_EDGE_MAX) {
        throw new Error(`The analysis size is ${ANALYSIS_EDGE_MIN}-${ANALYSIS_EDGE_MAX} px.`);
      }
      // PNG, not the raw "rgb" output: the stand-in refuses raw outputs, and a PNG of this size decodes in a few
      // milliseconds (docs/decisions/0161). No `saturation: 0`: the stand-in would ignore it; the luma is taken here.
      const out = await binding
        .input(streamOf(bytes))
        .transform({ width: longEdge, height: longEdge, fit: "scale-down" })
        .output({ format: "image/png" });
      return grayFromPngNative(await bytesOf(out));
    },

    async burnOverlay(photoBytes, overlayPng, position, format = "image/jpeg") {
      checkPosition(position);
      if (options.local) return drawLocally(options, photoBytes, overlayPng, position, format);
      const out = await binding
        .input(streamOf(photoBytes))
        .draw(streamOf(overlayPng), position)
        .output({ format, quality: OVERLAY_QUALITY });
      return bytesOf(out);
    },
  };
}

/** BT.601 luma of a decoded PNG (gray, gray+alpha, RGB, RGBA or palette; 8 or 16 bits), alpha ignored. */
export function grayFromPng(png: Uint8Array): GrayImage {
  const d = decodePng(png);
  if (d.depth !== 8 && d.depth !== 16) throw new Error("The analysis PNG is not 8 or 16 bits per sample.");
  const n = d.width * d.height;
  const out = new Uint8Array(n);
  const src = d.data;
  const shift = d.depth === 16 ? 8 : 0;
  const ch = d.channels;
  const palette = d.palette;
  for (let i = 0; i < n; i++) {
    let r: number;
    let g: number;
    let b: number;
    if (palette) {
      const c = palette[src[i] ?? 0] ?? [0, 0, 0];
      r = c[0] ?? 0;
      g = c[1] ?? 0;
      b = c[2] ?? 0;
    } else if (ch <= 2) {
      out[i] = (src[i * ch] ?? 0) >> shift;
      continue;
    } else {
      const s = i * ch;
      r = (src[s] ?? 0) >> shift;
      g = (src[s + 1] ?? 0) >> shift;
      b = (src[s + 2] ?? 0) >> shift;
    }
    out[i] = (r * 77 + g * 150 + b * 29 + 128) >> 8;
  }
  return { width: d.width, height: d.height, data: out };
}

/**
 * BT.601 luma of a PNG, inflated by the runtime's zlib (DecompressionStream) instead of JavaScript, whose inflate
 * was most of fast-png's time (bench/pixels.ts; the parts in png-rows.ts). Interlaced PNGs and bit depths under 8 go to fast-png (grayFromPng).
 */
export async function grayFromPngNative(png: Uint8Array): Promise<GrayImage> {
  const parts = pngParts(png);
  if (!parts) throw new Error("Not a PNG.");
  const { width, height, depth, channels, interlaced } = parts.header;
  if (interlaced || depth < 8) return grayFromPng(png);
  const { palette } = parts;
  const inflated = await inflateAll(parts);
  const { bpp, stride } = rowShape(parts.header);
  if (inflated.length < (stride + 1) * height) throw new Error("The PNG's image data is cut short.");
  const out = new Uint8Array(width * height);
  let prev = new Uint8Array(stride);
  let cur = new Uint8Array(stride);
  const hi = depth === 16 ? 2 : 1;
  for (let y = 0; y < height; y++) {
    const row = y * (stride + 1);
    const filter = inflated[row]!;
    if (!unfilterRow(filter, inflated, row + 1, cur, prev, bpp)) throw new Error(`Unknown PNG filter ${filter}.`);
    // The high byte of each sample (16-bit PNGs are big-endian); luma per pixel.
    for (let x = 0, o = y * width; x < width; x++, o++) {
      const s = x * bpp;
      if (palette) {
        const k = cur[s]! * 3;
        out[o] = (palette[k]! * 77 + palette[k + 1]! * 150 + palette[k + 2]! * 29 + 128) >> 8;
      } else if (channels <= 2) out[o] = cur[s]!;
      else out[o] = (cur[s]! * 77 + cur[s + hi]! * 150 + cur[s + 2 * hi]! * 29 + 128) >> 8;
    }
    [prev, cur] = [cur, prev];
  }
  return { width, height, data: out };
}

/**
 * The draw where the binding is the local stand-in, which leaves draws out: the same request (photo, overlay,
 * position, format, quality) to the local images emulator, a Node process beside the stack (emulators/images-draw.ts).
 * Never composited here: the Worker runs no JPEG codec, locally or in production. No emulator, no label: an error,
 * never the photo without its disclosure.
 */
async function drawLocally(
  options: ImagesOptions,
  photoBytes: Uint8Array,
  overlayPng: Uint8Array,
  position: OverlayPosition,
  format: OverlayFormat,
): Promise<Uint8Array> {
  if (!options.localDrawUrl) {
    throw new Error("The Images stand-in cannot draw and IMAGES_LOCAL_URL (the local images emulator) is not set.");
  }
  const form = new FormData();
  form.set("image", new Blob([photoBytes as Uint8Array<ArrayBuffer>]), "image");
  form.set("overlay", new Blob([overlayPng as Uint8Array<ArrayBuffer>], { type: "image/png" }), "overlay.png");
  form.set("position", JSON.stringify(position));
  form.set("format", format);
  form.set("quality", String(OVERLAY_QUALITY));
  const res = await (options.fetch ?? fetch)(`${options.localDrawUrl.replace(/\/$/, "")}/draw`, {
    method: "POST",
    body: form,
  });
  if (!res.ok) throw new Error(`The local images emulator answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  return new Uint8Array(await res.arrayBuffer());
}
