import { encodeQR } from "qr";
import { FONT_CODES, FONT_DATA, FONT_HEIGHT, FONT_WIDTHS } from "./font-data";
import { encodeRgbaPng } from "./png-encode";

// The disclosure label (docs/decisions/0110-mls-disclosure-and-original-pages.md, 0250-labels-drawn-by-images.md): a
// box with the text (our bitmap font, scaled) and optionally a QR code of the original page, laid out for the
// photo's size and drawn as a small transparent PNG. The photo is never decoded here: the Images binding draws the
// PNG onto it (workers/lib/images.ts, burnOverlay). No JPEG codec in this file or anything it imports
// (scripts/check-label-codec.ts).

export type Corner = "top-left" | "top-right" | "bottom-left" | "bottom-right";
export type LabelSize = "small" | "medium" | "large";
export type Tone = "light" | "dark";

export interface LabelSpec {
  /** One to three lines, drawn top to bottom: the statement, then where the original is. */
  lines: readonly string[];
  corner: Corner;
  size: LabelSize;
  tone: Tone;
  /** The original page's address, drawn as a QR code beside the text; null for none. */
  qrUrl: string | null;
}

/** The line height as a share of the image's width. */
const SIZE_SHARE: Record<LabelSize, number> = { small: 0.022, medium: 0.032, large: 0.045 };

// ---- font ----

const glyphIndex = new Map<number, { offset: number; width: number }>();
{
  let offset = 0;
  FONT_CODES.forEach((code, i) => {
    const width = FONT_WIDTHS[i] ?? 1;
    glyphIndex.set(code, { offset, width });
    offset += width * FONT_HEIGHT;
  });
}
let fontBytes: Uint8Array | null = null;
function font(): Uint8Array {
  if (!fontBytes) {
    const bin = atob(FONT_DATA);
    fontBytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) fontBytes[i] = bin.charCodeAt(i);
  }
  return fontBytes;
}

/** Whether every character of `text` has a glyph (printable ASCII and Latin-1). */
export function drawable(text: string): boolean {
  for (const ch of text) if (!glyphIndex.has(ch.codePointAt(0) ?? -1)) return false;
  return true;
}

/** Coverage 0..15 of glyph pixel (x, y) in font units. */
function coverage(offset: number, width: number, x: number, y: number): number {
  if (x < 0 || y < 0 || x >= width || y >= FONT_HEIGHT) return 0;
  const n = offset + y * width + x;
  const b = font()[n >> 1] ?? 0;
  return n & 1 ? b & 15 : b >> 4;
}

function textWidthUnits(text: string): number {
  let w = 0;
  for (const ch of text) w += glyphIndex.get(ch.codePointAt(0) ?? 32)?.width ?? 0;
  return w;
}

// ---- pixels ----

/**
 * The overlay's pixels: RGBA, not premultiplied, transparent where nothing is drawn. Each draw goes over what is
 * there ("source over"), so the overlay drawn onto a photo gives the photo what drawing each part onto it would.
 */
export interface Rgba {
  width: number;
  height: number;
  /** 4 bytes per pixel. */
  data: Uint8Array;
}

function blend(img: Rgba, x: number, y: number, rgb: readonly [number, number, number], a: number): void {
  if (a <= 0 || x < 0 || y < 0 || x >= img.width || y >= img.height) return;
  const i = (y * img.width + x) * 4;
  const d = img.data;
  const da = (d[i + 3] ?? 0) / 255;
  const sa = Math.min(1, a);
  const oa = sa + da * (1 - sa);
  const keep = (da * (1 - sa)) / oa;
  const take = sa / oa;
  d[i] = Math.round(rgb[0] * take + (d[i] ?? 0) * keep);
  d[i + 1] = Math.round(rgb[1] * take + (d[i + 1] ?? 0) * keep);
  d[i + 2] = Math.round(rgb[2] * take + (d[i + 2] ?? 0) * keep);
  d[i + 3] = Math.round(oa * 255);
}

/**
 * Sets a rectangle to one colour, without blending: what blend() gives over transparent pixels, or for an opaque
 * colour over anything. One pixel is written, then doubled along the row and the row copied: the label's box is
 * about 600,000 pixels on a 2304 px photo, and blending each cost most of a label's CPU (ADR 0250).
 */
function paintRect(
  img: Rgba,
  x0: number,
  y0: number,
  w: number,
  h: number,
  rgb: readonly [number, number, number],
  alpha: number,
) {
  const left = Math.max(0, x0);
  const top = Math.max(0, y0);
  const right = Math.min(img.width, x0 + w);
  const bottom = Math.min(img.height, y0 + h);
  if (right <= left || bottom <= top) return;
  const d = img.data;
  const stride = img.width * 4;
  const start = top * stride + left * 4;
  const span = (right - left) * 4;
  d[start] = rgb[0];
  d[start + 1] = rgb[1];
  d[start + 2] = rgb[2];
  d[start + 3] = Math.round(Math.min(1, alpha) * 255);
  for (let filled = 4; filled < span; filled *= 2)
    d.copyWithin(start + filled, start, start + Math.min(filled, span - filled));
  for (let y = top + 1; y < bottom; y++) d.copyWithin(y * stride + left * 4, start, start + span);
}

function fillRect(
  img: Rgba,
  x0: number,
  y0: number,
  w: number,
  h: number,
  rgb: readonly [number, number, number],
  a: number,
) {
  if (a >= 1) return paintRect(img, x0, y0, w, h, rgb, 1);
  for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) blend(img, x, y, rgb, a);
}

/** A glyph scaled to `lineHeight` px (bilinear scaling of the font): its opacity per pixel, 0..1, row by row. */
function scaledGlyph(g: { offset: number; width: number }, lineHeight: number): { width: number; alpha: Float64Array } {
  const scale = lineHeight / FONT_HEIGHT;
  const gw = Math.ceil(g.width * scale);
  const alpha = new Float64Array(gw * lineHeight);
  for (let dy = 0; dy < lineHeight; dy++) {
    const fy = (dy + 0.5) / scale - 0.5;
    const yA = Math.floor(fy);
    const ty = fy - yA;
    for (let dx = 0; dx < gw; dx++) {
      const fx = (dx + 0.5) / scale - 0.5;
      const xA = Math.floor(fx);
      const tx = fx - xA;
      const c =
        (coverage(g.offset, g.width, xA, yA) * (1 - tx) + coverage(g.offset, g.width, xA + 1, yA) * tx) * (1 - ty) +
        (coverage(g.offset, g.width, xA, yA + 1) * (1 - tx) + coverage(g.offset, g.width, xA + 1, yA + 1) * tx) * ty;
      alpha[dy * gw + dx] = c / 15;
    }
  }
  return { width: gw, alpha };
}

/**
 * Draws `text` with its top-left at (x0, y0), `lineHeight` px high. Each distinct character is scaled once per line
 * (`glyphs`), not once per occurrence.
 */
function drawText(
  img: Rgba,
  text: string,
  x0: number,
  y0: number,
  lineHeight: number,
  rgb: readonly [number, number, number],
  glyphs: Map<number, { width: number; alpha: Float64Array }>,
) {
  const scale = lineHeight / FONT_HEIGHT;
  let pen = 0;
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 32;
    const g = glyphIndex.get(code);
    if (!g) continue;
    let scaled = glyphs.get(code);
    if (!scaled) {
      scaled = scaledGlyph(g, lineHeight);
      glyphs.set(code, scaled);
    }
    const left = x0 + Math.round(pen * scale);
    const { width: gw, alpha } = scaled;
    for (let dy = 0; dy < lineHeight; dy++) {
      for (let dx = 0; dx < gw; dx++) {
        const a = alpha[dy * gw + dx]!;
        if (a > 0) blend(img, left + dx, y0 + dy, rgb, a);
      }
    }
    pen += g.width;
  }
}

/** The QR modules of `url` (a 2-module quiet zone included). */
export function qrMatrix(url: string): boolean[][] {
  return encodeQR(url, "raw", { ecc: "medium", border: 2 });
}

/** Where the label goes on a photo of the given size, and its pixels: the box, the QR code and the text. */
export interface LabelOverlay {
  /** The box, as a transparent-where-empty image of its own size. */
  image: Rgba;
  /** Its top-left corner on the photo, in pixels. */
  left: number;
  top: number;
}

/** The label laid out for a photo of `width` x `height` pixels (the photo itself is never read). */
export function labelOverlay(width: number, height: number, spec: LabelSpec): LabelOverlay {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new Error("The photo's size is not known.");
  }
  const lines = spec.lines.filter((l) => l.length > 0);
  const shortEdge = Math.min(width, height);
  let line = Math.max(12, Math.round(width * SIZE_SHARE[spec.size]));
  const qr = spec.qrUrl ? qrMatrix(spec.qrUrl) : null;
  const widest = Math.max(0, ...lines.map(textWidthUnits));
  const gap = () => Math.round(line * 0.3);
  const textHeight = () => lines.length * line + Math.max(0, lines.length - 1) * gap();
  // A module of at least 3 px, so a phone (and a decoder) reads it off a JPEG.
  const modulePx = () => (qr ? Math.max(3, Math.round(Math.max(line * 3.2, textHeight()) / qr.length)) : 0);
  const qrSide = () => (qr ? qr.length * modulePx() : 0);
  const pad = () => Math.max(4, Math.round(line * 0.45));
  const boxWidth = () =>
    pad() * 2 + Math.round((widest * line) / FONT_HEIGHT) + (qr ? qrSide() + (lines.length ? pad() : 0) : 0);
  // Long text on a narrow image: smaller letters, never past 92% of the width.
  while (line > 10 && boxWidth() > width * 0.92) line--;
  const p = pad();
  const w = Math.min(width, boxWidth());
  const h = Math.min(height, Math.max(textHeight() + p * 2, qr ? qrSide() + p * 2 : 0));
  const margin = Math.round(shortEdge * 0.02);
  const x = spec.corner.endsWith("left") ? margin : width - margin - w;
  const y = spec.corner.startsWith("top") ? margin : height - margin - h;
  const img: Rgba = { width: w, height: h, data: new Uint8Array(w * h * 4) };
  const dark = spec.tone === "dark";
  // The box over nothing yet: blending onto transparent pixels gives the colour at the box's opacity.
  paintRect(img, 0, 0, w, h, dark ? [15, 23, 42] : [255, 255, 255], dark ? 0.78 : 0.85);
  let textX = p;
  if (qr) {
    // Dark modules on white, whatever the tone: that is what scanners expect.
    const m = modulePx();
    const side = qrSide();
    const qx = p;
    const qy = Math.round((h - side) / 2);
    fillRect(img, qx, qy, side, side, [255, 255, 255], 1);
    qr.forEach((row, my) => {
      row.forEach((on, mx) => {
        if (on) fillRect(img, qx + mx * m, qy + my * m, m, m, [0, 0, 0], 1);
      });
    });
    textX = qx + side + p;
  }
  let ty = Math.round((h - textHeight()) / 2);
  const glyphs = new Map<number, { width: number; alpha: Float64Array }>();
  for (const text of lines) {
    drawText(img, text, textX, ty, line, dark ? [255, 255, 255] : [15, 23, 42], glyphs);
    ty += line + gap();
  }
  return cropToPhoto(img, x, y, width, height);
}

/** The part of the box at (x, y) that lies on the photo (a box as wide as a small photo sticks out by its margin). */
function cropToPhoto(box: Rgba, x: number, y: number, width: number, height: number): LabelOverlay {
  const left = Math.max(0, x);
  const top = Math.max(0, y);
  const w = Math.min(width, x + box.width) - left;
  const h = Math.min(height, y + box.height) - top;
  if (left === x && top === y && w === box.width && h === box.height) return { image: box, left, top };
  const data = new Uint8Array(w * h * 4);
  for (let row = 0; row < h; row++) {
    const from = ((top - y + row) * box.width + (left - x)) * 4;
    data.set(box.data.subarray(from, from + w * 4), row * w * 4);
  }
  return { image: { width: w, height: h, data }, left, top };
}

/** The label as a PNG overlay and where it goes: what the Images binding's draw() burns into the photo. */
export async function labelOverlayPng(
  width: number,
  height: number,
  spec: LabelSpec,
): Promise<{ png: Uint8Array; left: number; top: number }> {
  const { image, left, top } = labelOverlay(width, height, spec);
  return { png: await encodeRgbaPng(image.width, image.height, image.data), left, top };
}
