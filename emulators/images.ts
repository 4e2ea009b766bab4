import { inflateSync } from "node:zlib";
import jpeg from "jpeg-js";

// Just enough image handling for the emulators: decode JPEG (jpeg-js) and
// 8-bit non-interlaced PNG, draw, encode JPEG. Node only; never bundled.

export interface Raster {
  width: number;
  height: number;
  /** RGBA, 4 bytes per pixel. */
  data: Uint8Array;
}

export function isJpeg(b: Uint8Array): boolean {
  return b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
}

export function isPng(b: Uint8Array): boolean {
  return [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((v, i) => b[i] === v);
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** The largest image the emulators decode: like the provider, they refuse bigger ones before allocating a pixel. */
export const MAX_DECODE_EDGE = 12_000;
export const MAX_DECODE_PIXELS = 50_000_000;

export class ImageTooLarge extends Error {}

function checkSize(width: number, height: number): void {
  if (width > MAX_DECODE_EDGE || height > MAX_DECODE_EDGE || width * height > MAX_DECODE_PIXELS) {
    throw new ImageTooLarge(`the image is ${width}x${height}; at most ${MAX_DECODE_EDGE} px a side and 50 MP`);
  }
}

export function decodePng(buf: Uint8Array): Raster {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let pos = 8;
  let width = 0;
  let height = 0;
  let colorType = 0;
  const idat: Uint8Array[] = [];
  while (pos < buf.length) {
    const len = view.getUint32(pos);
    const type = String.fromCharCode(...buf.subarray(pos + 4, pos + 8));
    const chunk = buf.subarray(pos + 8, pos + 8 + len);
    if (type === "IHDR") {
      width = view.getUint32(pos + 8);
      height = view.getUint32(pos + 12);
      checkSize(width, height);
      const bitDepth = chunk[8];
      colorType = chunk[9] ?? 0;
      if (bitDepth !== 8 || chunk[12] !== 0) throw new Error("only 8-bit non-interlaced PNG");
    } else if (type === "IDAT") idat.push(chunk);
    else if (type === "IEND") break;
    pos += 12 + len;
  }
  const channels = ({ 0: 1, 2: 3, 4: 2, 6: 4 } as Record<number, number>)[colorType];
  if (!channels) throw new Error(`unsupported PNG colour type ${colorType}`);
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = new Uint8Array(width * height * 4);
  let prev = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const cur = new Uint8Array(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? (cur[i - channels] ?? 0) : 0;
      const b = prev[i] ?? 0;
      const c = i >= channels ? (prev[i - channels] ?? 0) : 0;
      const x = line[i] ?? 0;
      cur[i] =
        (filter === 1
          ? x + a
          : filter === 2
            ? x + b
            : filter === 3
              ? x + ((a + b) >> 1)
              : filter === 4
                ? x + paeth(a, b, c)
                : x) & 0xff;
    }
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      const s = x * channels;
      const g = cur[s] ?? 0;
      if (channels === 1 || channels === 2) {
        out[o] = out[o + 1] = out[o + 2] = g;
        out[o + 3] = channels === 2 ? (cur[s + 1] ?? 255) : 255;
      } else {
        out[o] = g;
        out[o + 1] = cur[s + 1] ?? 0;
        out[o + 2] = cur[s + 2] ?? 0;
        out[o + 3] = channels === 4 ? (cur[s + 3] ?? 255) : 255;
      }
    }
    prev = cur;
  }
  return { width, height, data: out };
}

export function decodeImage(buf: Uint8Array): Raster {
  if (isJpeg(buf)) {
    const size = jpegSize(buf);
    if (size) checkSize(size.width, size.height);
    const img = jpeg.decode(buf, { useTArray: true, maxMemoryUsageInMB: 512, maxResolutionInMP: 50 });
    return { width: img.width, height: img.height, data: img.data };
  }
  if (isPng(buf)) return decodePng(buf);
  throw new Error("not a JPEG or PNG");
}

/** A JPEG's dimensions from its SOF marker, without decoding. */
function jpegSize(buf: Uint8Array): { width: number; height: number } | null {
  let i = 2;
  while (i + 9 < buf.length) {
    if (buf[i] !== 0xff) return null;
    const marker = buf[i + 1]!;
    const len = (buf[i + 2]! << 8) | buf[i + 3]!;
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: (buf[i + 5]! << 8) | buf[i + 6]!, width: (buf[i + 7]! << 8) | buf[i + 8]! };
    }
    i += 2 + len;
  }
  return null;
}

export function encodeJpeg(img: Raster, quality = 80): Uint8Array {
  return jpeg.encode({ width: img.width, height: img.height, data: img.data }, quality).data;
}

export function blank(width: number, height: number, rgb: [number, number, number]): Raster {
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < data.length; i += 4) {
    data[i] = rgb[0];
    data[i + 1] = rgb[1];
    data[i + 2] = rgb[2];
    data[i + 3] = 255;
  }
  return { width, height, data };
}

/** Shrinks so the long edge is at most `max` (nearest neighbour: the emulator needs speed, not beauty). */
export function shrinkToFit(img: Raster, max: number): Raster {
  const scale = Math.min(1, max / Math.max(img.width, img.height));
  if (scale === 1) return img;
  const width = Math.max(1, Math.round(img.width * scale));
  const height = Math.max(1, Math.round(img.height * scale));
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    const sy = Math.min(img.height - 1, Math.floor(y / scale));
    for (let x = 0; x < width; x++) {
      const sx = Math.min(img.width - 1, Math.floor(x / scale));
      data.set(img.data.subarray((sy * img.width + sx) * 4, (sy * img.width + sx) * 4 + 4), (y * width + x) * 4);
    }
  }
  return { width, height, data };
}

export function fillRect(
  img: Raster,
  x0: number,
  y0: number,
  w: number,
  h: number,
  rgb: [number, number, number],
  alpha = 1,
): void {
  const x1 = Math.min(img.width, Math.max(0, Math.round(x0 + w)));
  const y1 = Math.min(img.height, Math.max(0, Math.round(y0 + h)));
  for (let y = Math.max(0, Math.round(y0)); y < y1; y++) {
    for (let x = Math.max(0, Math.round(x0)); x < x1; x++) {
      const o = (y * img.width + x) * 4;
      for (let c = 0; c < 3; c++) img.data[o + c] = Math.round((img.data[o + c] ?? 0) * (1 - alpha) + rgb[c]! * alpha);
    }
  }
}

export function mapPixels(
  img: Raster,
  fn: (r: number, g: number, b: number, x: number, y: number) => [number, number, number],
): void {
  for (let y = 0; y < img.height; y++) {
    for (let x = 0; x < img.width; x++) {
      const o = (y * img.width + x) * 4;
      const [r, g, b] = fn(img.data[o] ?? 0, img.data[o + 1] ?? 0, img.data[o + 2] ?? 0, x, y);
      img.data[o] = Math.max(0, Math.min(255, r));
      img.data[o + 1] = Math.max(0, Math.min(255, g));
      img.data[o + 2] = Math.max(0, Math.min(255, b));
    }
  }
}

// 5x7 bitmap font: each glyph is 7 rows of 5 bits.
const FONT: Record<string, number[]> = {
  A: [14, 17, 17, 31, 17, 17, 17],
  B: [30, 17, 17, 30, 17, 17, 30],
  C: [14, 17, 16, 16, 16, 17, 14],
  D: [30, 17, 17, 17, 17, 17, 30],
  E: [31, 16, 16, 30, 16, 16, 31],
  F: [31, 16, 16, 30, 16, 16, 16],
  G: [14, 17, 16, 23, 17, 17, 15],
  H: [17, 17, 17, 31, 17, 17, 17],
  I: [14, 4, 4, 4, 4, 4, 14],
  J: [7, 2, 2, 2, 2, 18, 12],
  K: [17, 18, 20, 24, 20, 18, 17],
  L: [16, 16, 16, 16, 16, 16, 31],
  M: [17, 27, 21, 21, 17, 17, 17],
  N: [17, 17, 25, 21, 19, 17, 17],
  O: [14, 17, 17, 17, 17, 17, 14],
  P: [30, 17, 17, 30, 16, 16, 16],
  Q: [14, 17, 17, 17, 21, 18, 13],
  R: [30, 17, 17, 30, 20, 18, 17],
  S: [15, 16, 16, 14, 1, 1, 30],
  T: [31, 4, 4, 4, 4, 4, 4],
  U: [17, 17, 17, 17, 17, 17, 14],
  V: [17, 17, 17, 17, 17, 10, 4],
  W: [17, 17, 17, 21, 21, 21, 10],
  X: [17, 17, 10, 4, 10, 17, 17],
  Y: [17, 17, 10, 4, 4, 4, 4],
  Z: [31, 1, 2, 4, 8, 16, 31],
  "0": [14, 17, 19, 21, 25, 17, 14],
  "1": [4, 12, 4, 4, 4, 4, 14],
  "2": [14, 17, 1, 2, 4, 8, 31],
  "3": [31, 2, 4, 2, 1, 17, 14],
  "4": [2, 6, 10, 18, 31, 2, 2],
  "5": [31, 16, 30, 1, 1, 17, 14],
  "6": [6, 8, 16, 30, 17, 17, 14],
  "7": [31, 1, 2, 4, 8, 8, 8],
  "8": [14, 17, 17, 14, 17, 17, 14],
  "9": [14, 17, 17, 15, 1, 2, 12],
  " ": [0, 0, 0, 0, 0, 0, 0],
  "-": [0, 0, 0, 31, 0, 0, 0],
  ":": [0, 4, 0, 0, 0, 4, 0],
  ".": [0, 0, 0, 0, 0, 0, 4],
  "/": [1, 1, 2, 4, 8, 16, 16],
  _: [0, 0, 0, 0, 0, 0, 31],
};

/** Draws a white-on-dark text banner; returns its height. */
export function drawBanner(
  img: Raster,
  text: string,
  y: number,
  scale = Math.max(2, Math.floor(img.width / 260)),
): number {
  const upper = text.toUpperCase();
  const height = 11 * scale;
  fillRect(img, 0, y, img.width, height, [17, 24, 39], 0.85);
  let x = 3 * scale;
  for (const ch of upper) {
    const glyph = FONT[ch] ?? FONT[" "]!;
    for (let row = 0; row < 7; row++) {
      for (let col = 0; col < 5; col++) {
        if ((glyph[row]! >> (4 - col)) & 1)
          fillRect(img, x + col * scale, y + 2 * scale + row * scale, scale, scale, [255, 255, 255]);
      }
    }
    x += 6 * scale;
    if (x > img.width - 6 * scale) break;
  }
  return height;
}

/** A copy resized to exactly `width` x `height` (bilinear; the aspect may change, as the provider's answers do). */
export function resize(img: Raster, width: number, height: number): Raster {
  const data = new Uint8Array(width * height * 4);
  const sx = img.width / width;
  const sy = img.height / height;
  for (let y = 0; y < height; y++) {
    const fy = Math.max(0, (y + 0.5) * sy - 0.5);
    const y0 = Math.min(img.height - 1, Math.floor(fy));
    const y1 = Math.min(img.height - 1, y0 + 1);
    const wy = fy - y0;
    for (let x = 0; x < width; x++) {
      const fx = Math.max(0, (x + 0.5) * sx - 0.5);
      const x0 = Math.min(img.width - 1, Math.floor(fx));
      const x1 = Math.min(img.width - 1, x0 + 1);
      const wx = fx - x0;
      const o = (y * width + x) * 4;
      for (let c = 0; c < 4; c++) {
        const a = img.data[(y0 * img.width + x0) * 4 + c]! * (1 - wx) + img.data[(y0 * img.width + x1) * 4 + c]! * wx;
        const b = img.data[(y1 * img.width + x0) * 4 + c]! * (1 - wx) + img.data[(y1 * img.width + x1) * 4 + c]! * wx;
        data[o + c] = Math.round(a * (1 - wy) + b * wy);
      }
    }
  }
  return { width, height, data };
}

/** The mean colour of an image (a few thousand pixels sampled). */
export function meanColour(img: Raster): [number, number, number] {
  const step = Math.max(1, Math.floor((img.width * img.height) / 4096));
  const sum = [0, 0, 0];
  let n = 0;
  for (let p = 0; p < img.width * img.height; p += step) {
    for (let c = 0; c < 3; c++) sum[c]! += img.data[p * 4 + c]!;
    n++;
  }
  return [sum[0]! / n, sum[1]! / n, sum[2]! / n];
}
