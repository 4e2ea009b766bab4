import { MASK_MESSAGES, MAX_MASK_BYTES } from "~/shared/masks";
import { api } from "./api";
import { startJob } from "./use-job";

// The brush's strokes as a removal mask (docs/decisions/0195-removal-brush-masks.md): a PNG at the pixel size of the
// image they were painted on, white where something should go and black elsewhere, sent to
// POST /api/photos/:id/masks; the removal's job request then names the stored mask.

/** One stroke, in the image's own pixels: its width and its points as [x0, y0, x1, y1, ...]. */
export interface Stroke {
  size: number;
  points: number[];
}

export interface PixelSize {
  width: number;
  height: number;
}

/** Draws strokes with the context's current colours, `scale` canvas pixels to one image pixel. */
export function paintStrokes(ctx: CanvasRenderingContext2D, strokes: readonly Stroke[], scale: number): void {
  ctx.lineCap = "round";
  ctx.lineJoin = "round";
  for (const s of strokes) {
    const [x = 0, y = 0] = s.points;
    ctx.lineWidth = s.size * scale;
    ctx.beginPath();
    if (s.points.length <= 2) {
      // A tap: a round dot of the brush's size.
      ctx.arc(x * scale, y * scale, (s.size * scale) / 2, 0, Math.PI * 2);
      ctx.fill();
      continue;
    }
    ctx.moveTo(x * scale, y * scale);
    for (let i = 2; i + 1 < s.points.length; i += 2) ctx.lineTo(s.points[i]! * scale, s.points[i + 1]! * scale);
    ctx.stroke();
  }
}

/**
 * The mask PNG: black, the strokes in white, then every pixel made pure black or white (the brush's soft edges
 * included), so it reads as a 1-bit image and compresses to a few KB for a mostly untouched photo.
 */
export async function maskPng(strokes: readonly Stroke[], size: PixelSize): Promise<Blob> {
  const canvas = document.createElement("canvas");
  canvas.width = size.width;
  canvas.height = size.height;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  if (!ctx) throw new Error(MASK_MESSAGES.noScript);
  ctx.fillStyle = "#000";
  ctx.fillRect(0, 0, size.width, size.height);
  ctx.fillStyle = "#fff";
  ctx.strokeStyle = "#fff";
  paintStrokes(ctx, strokes, 1);
  const image = ctx.getImageData(0, 0, size.width, size.height);
  const d = image.data;
  for (let i = 0; i < d.length; i += 4) {
    const v = d[i]! > 127 ? 255 : 0;
    d[i] = v;
    d[i + 1] = v;
    d[i + 2] = v;
    d[i + 3] = 255;
  }
  ctx.putImageData(image, 0, 0);
  return new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("The mask could not be made."))), "image/png"),
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const NOT_SENT = "What you painted could not be sent. Check your connection and try again.";

/** Stores the mask (the same bytes store once, so a lost answer is simply asked again); its id. */
async function sendMask(photoId: string, source: string, png: Blob): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    // Null: lost on the way or on the way back.
    const answer = await api.storeMask(photoId, source, png);
    if (answer && !answer.ok) throw new Error(answer.body.error ?? NOT_SENT);
    if (answer?.body.mask) return answer.body.mask.id;
    if (attempt >= 3) throw new Error(NOT_SENT);
    await sleep(1500 * attempt);
  }
}

/** Makes and stores the mask, then starts the removal that uses it (one credit); the job's id. */
export async function removeWhatIsPainted(
  photoId: string,
  source: string,
  strokes: readonly Stroke[],
  size: PixelSize,
): Promise<string> {
  if (strokes.length === 0) throw new Error(MASK_MESSAGES.empty);
  const png = await maskPng(strokes, size);
  if (png.size > MAX_MASK_BYTES) throw new Error(MASK_MESSAGES.tooLarge);
  const maskId = await sendMask(photoId, source, png);
  return startJob({ photoId, body: { kind: "removal", sourceVersionId: source, maskId } });
}
