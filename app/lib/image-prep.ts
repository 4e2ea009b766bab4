// Runs in the browser before an upload (docs/decisions/0041 and 0131): checks
// the file's bytes, downscales the photo to a 2560 px long edge (the EXIF
// orientation applied while drawing) and re-encodes it at the best JPEG
// quality that fits 1.4 MiB, and draws the grid's thumbnail. Every photo is
// re-encoded from the canvas, which carries no metadata: EXIF, GPS positions
// and PNG text chunks never leave the phone. A phone's 12 MP JPEG of 4-10 MB
// leaves as at most about 1.4 MB; the thumbnail is a 400 px JPEG of 20-40 KB.
import { IMAGE_HEAD_BYTES, type ImageType, readImageInfo, sniffImageType } from "~/shared/image-format";
import {
  fitWithin,
  JPEG_QUALITIES,
  LONG_EDGE_LIMIT,
  MAX_UPLOAD_BYTES,
  PHOTO_BYTE_TARGET,
  THUMB_LONG_EDGE,
  THUMB_MAX_BYTES,
  THUMB_QUALITY,
  UPLOAD_MESSAGES,
} from "~/shared/upload-rules";

export class PrepareError extends Error {}

export interface PreparedPhoto {
  photo: Blob;
  thumb: Blob;
  type: ImageType;
  width: number;
  height: number;
}

type AnyCanvas = OffscreenCanvas | HTMLCanvasElement;

function canvas(width: number, height: number): AnyCanvas {
  if (typeof OffscreenCanvas !== "undefined") return new OffscreenCanvas(width, height);
  const c = document.createElement("canvas");
  c.width = width;
  c.height = height;
  return c;
}

function draw(source: ImageBitmap, width: number, height: number, background: string | null): AnyCanvas {
  const c = canvas(width, height);
  const ctx = c.getContext("2d") as CanvasRenderingContext2D | OffscreenCanvasRenderingContext2D | null;
  if (!ctx) throw new PrepareError(UPLOAD_MESSAGES.unreadable);
  if (background) {
    ctx.fillStyle = background;
    ctx.fillRect(0, 0, width, height);
  }
  ctx.imageSmoothingEnabled = true;
  ctx.imageSmoothingQuality = "high";
  ctx.drawImage(source, 0, 0, width, height);
  return c;
}

async function encode(c: AnyCanvas, type: ImageType, quality?: number): Promise<Blob> {
  if ("convertToBlob" in c) return c.convertToBlob({ type, quality });
  return new Promise((resolve, reject) =>
    c.toBlob((b) => (b ? resolve(b) : reject(new PrepareError(UPLOAD_MESSAGES.unreadable))), type, quality),
  );
}

/** The best quality whose JPEG fits PHOTO_BYTE_TARGET, or the lowest one tried. */
async function bestJpeg(c: AnyCanvas): Promise<Blob> {
  let out: Blob | null = null;
  for (const q of JPEG_QUALITIES) {
    out = await encode(c, "image/jpeg", q);
    if (out.size <= PHOTO_BYTE_TARGET) break;
  }
  return out as Blob;
}

/** What a browser is asked to decode before shrinking: a 200 MP phone camera frame at most. */
const BROWSER_MAX_EDGE = 16_384;
const BROWSER_MAX_PIXELS = 200_000_000;

/** Reads, checks and shrinks a chosen file; throws PrepareError with a message for the person. */
export async function preparePhoto(file: Blob): Promise<PreparedPhoto> {
  const head = new Uint8Array(await file.slice(0, IMAGE_HEAD_BYTES).arrayBuffer());
  const type = sniffImageType(head);
  if (!type) throw new PrepareError(UPLOAD_MESSAGES.notAnImage);
  // A header can claim any size: refuse what no phone can decode before trying (the server checks again).
  const info = readImageInfo(head);
  if (info && (Math.max(info.width, info.height) > BROWSER_MAX_EDGE || info.width * info.height > BROWSER_MAX_PIXELS)) {
    throw new PrepareError(UPLOAD_MESSAGES.tooManyPixels);
  }

  let bitmap: ImageBitmap;
  try {
    // Applies the EXIF orientation, so the re-encoded photo stands the right way up.
    bitmap = await createImageBitmap(file, { imageOrientation: "from-image" });
  } catch {
    throw new PrepareError(UPLOAD_MESSAGES.unreadable);
  }
  try {
    const size = fitWithin(bitmap.width, bitmap.height, LONG_EDGE_LIMIT);

    let photo: Blob;
    let outType: ImageType = type;
    if (type === "image/png") {
      // Re-encoded even when small enough: the canvas's PNG is lossless and carries none of the
      // file's eXIf/tEXt chunks (a GPS position must not ride along).
      photo = await encode(draw(bitmap, size.width, size.height, null), "image/png");
      if (photo.size > MAX_UPLOAD_BYTES) {
        // A huge PNG photograph: JPEG keeps it within the limit.
        outType = "image/jpeg";
        photo = await bestJpeg(draw(bitmap, size.width, size.height, "#fff"));
      }
    } else {
      // JPEGs are always re-encoded: that also drops EXIF metadata such as the GPS position.
      photo = await bestJpeg(draw(bitmap, size.width, size.height, "#fff"));
    }
    if (photo.size > MAX_UPLOAD_BYTES) throw new PrepareError(UPLOAD_MESSAGES.tooLarge);

    const t = fitWithin(bitmap.width, bitmap.height, THUMB_LONG_EDGE);
    const thumbCanvas = draw(bitmap, t.width, t.height, "#fff");
    let thumb = await encode(thumbCanvas, "image/jpeg", THUMB_QUALITY);
    if (thumb.size > THUMB_MAX_BYTES) thumb = await encode(thumbCanvas, "image/jpeg", 0.5);
    return { photo, thumb, type: outType, width: size.width, height: size.height };
  } finally {
    bitmap.close();
  }
}
