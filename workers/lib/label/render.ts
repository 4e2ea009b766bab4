import { decode as decodePng, encode as encodePng } from "fast-png";
import jpeg from "jpeg-js";
import { encodeQR } from "qr";
import { FONT_CODES, FONT_DATA, FONT_HEIGHT, FONT_WIDTHS } from "./font-data";

// The disclosure label, burned into the pixels of a staged version on the
// server (docs/decisions/0110-mls-disclosure-and-original-pages.md): decode
// the stored full-size JPEG/PNG, draw a box with the text (our bitmap font,
// scaled) and optionally a QR code of the original page, encode again. Pure
// JavaScript: it runs the same in workerd, the tests and Node.

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

export interface Rgba {
  width: number;
  height: number;
  /** 4 bytes per pixel. */
  data: Uint8Array;
}

/** The line height as a share of the image's width. */
const SIZE_SHARE: Record<LabelSize, number> = { small: 0.022, medium: 0.032, large: 0.045 };
const JPEG_QUALITY = 90;

const isJpeg = (b: Uint8Array) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
const isPng = (b: Uint8Array) => b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47;

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

function blend(img: Rgba, x: number, y: number, rgb: readonly [number, number, number], a: number): void {
  if (a <= 0 || x < 0 || y < 0 || x >= img.width || y >= img.height) return;
  const i = (y * img.width + x) * 4;
  const d = img.data;
  d[i] = (d[i] ?? 0) + (rgb[0] - (d[i] ?? 0)) * a;
  d[i + 1] = (d[i + 1] ?? 0) + (rgb[1] - (d[i + 1] ?? 0)) * a;
  d[i + 2] = (d[i + 2] ?? 0) + (rgb[2] - (d[i + 2] ?? 0)) * a;
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
  for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) blend(img, x, y, rgb, a);
}

/** Draws `text` with its top-left at (x0, y0), `lineHeight` px high (bilinear scaling of the font). */
function drawText(
  img: Rgba,
  text: string,
  x0: number,
  y0: number,
  lineHeight: number,
  rgb: readonly [number, number, number],
) {
  const scale = lineHeight / FONT_HEIGHT;
  let pen = 0;
  for (const ch of text) {
    const g = glyphIndex.get(ch.codePointAt(0) ?? 32);
    if (!g) continue;
    const gw = Math.ceil(g.width * scale);
    const left = x0 + Math.round(pen * scale);
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
        blend(img, left + dx, y0 + dy, rgb, c / 15);
      }
    }
    pen += g.width;
  }
}

/** The QR modules of `url` (a 2-module quiet zone included). */
export function qrMatrix(url: string): boolean[][] {
  return encodeQR(url, "raw", { ecc: "medium", border: 2 });
}

/** Draws the label onto `img` in place. */
export function drawLabel(img: Rgba, spec: LabelSpec): void {
  const lines = spec.lines.filter((l) => l.length > 0);
  const shortEdge = Math.min(img.width, img.height);
  let line = Math.max(12, Math.round(img.width * SIZE_SHARE[spec.size]));
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
  while (line > 10 && boxWidth() > img.width * 0.92) line--;
  const p = pad();
  const w = Math.min(img.width, boxWidth());
  const h = Math.min(img.height, Math.max(textHeight() + p * 2, qr ? qrSide() + p * 2 : 0));
  const margin = Math.round(shortEdge * 0.02);
  const x = spec.corner.endsWith("left") ? margin : img.width - margin - w;
  const y = spec.corner.startsWith("top") ? margin : img.height - margin - h;
  const dark = spec.tone === "dark";
  fillRect(img, x, y, w, h, dark ? [15, 23, 42] : [255, 255, 255], dark ? 0.78 : 0.85);
  let textX = x + p;
  if (qr) {
    // Dark modules on white, whatever the tone: that is what scanners expect.
    const m = modulePx();
    const side = qrSide();
    const qx = x + p;
    const qy = y + Math.round((h - side) / 2);
    fillRect(img, qx, qy, side, side, [255, 255, 255], 1);
    qr.forEach((row, my) => {
      row.forEach((on, mx) => {
        if (on) fillRect(img, qx + mx * m, qy + my * m, m, m, [0, 0, 0], 1);
      });
    });
    textX = qx + side + p;
  }
  let ty = y + Math.round((h - textHeight()) / 2);
  for (const text of lines) {
    drawText(img, text, textX, ty, line, dark ? [255, 255, 255] : [15, 23, 42]);
    ty += line + gap();
  }
}

// ---- codecs ----

export type ImageType = "image/jpeg" | "image/png";

export function decodeImage(bytes: Uint8Array): { img: Rgba; type: ImageType } {
  if (isJpeg(bytes)) {
    const d = jpeg.decode(bytes, {
      useTArray: true,
      formatAsRGBA: true,
      maxMemoryUsageInMB: 256,
      maxResolutionInMP: 40,
    });
    return { img: { width: d.width, height: d.height, data: d.data }, type: "image/jpeg" };
  }
  if (isPng(bytes)) {
    const d = decodePng(bytes);
    if (d.depth < 8) throw new Error("PNGs under 8 bits per sample are not labelled.");
    const n = d.width * d.height;
    const out = new Uint8Array(n * 4);
    const src = d.data;
    const max = d.depth === 16 ? 257 : 1;
    const ch = d.channels;
    const palette = d.palette;
    for (let i = 0; i < n; i++) {
      if (palette) {
        const c = palette[src[i] ?? 0] ?? [0, 0, 0];
        out.set([c[0] ?? 0, c[1] ?? 0, c[2] ?? 0, c[3] ?? 255], i * 4);
        continue;
      }
      const s = i * ch;
      const grey = ch <= 2;
      out[i * 4] = (src[s] ?? 0) / max;
      out[i * 4 + 1] = (src[grey ? s : s + 1] ?? 0) / max;
      out[i * 4 + 2] = (src[grey ? s : s + 2] ?? 0) / max;
      out[i * 4 + 3] = ch === 2 || ch === 4 ? (src[s + ch - 1] ?? 0) / max : 255;
    }
    return { img: { width: d.width, height: d.height, data: out }, type: "image/png" };
  }
  throw new Error("Not a JPEG or PNG image.");
}

export function encodeImage(img: Rgba, type: ImageType): Uint8Array {
  if (type === "image/png")
    return encodePng({ width: img.width, height: img.height, data: img.data, channels: 4, depth: 8 });
  return new Uint8Array(jpeg.encode({ width: img.width, height: img.height, data: img.data }, JPEG_QUALITY).data);
}

/** The labelled bytes of a stored version: same input, same bytes. */
export function renderLabelled(bytes: Uint8Array, spec: LabelSpec): { bytes: Uint8Array; type: ImageType } {
  const { img, type } = decodeImage(bytes);
  drawLabel(img, spec);
  return { bytes: encodeImage(img, type), type };
}
