// What an image is, from its header alone: no decoding, no codec. Every path of the Worker that needs a result's type
// and size reads it here (a job recording its version, the structure check, the disclosure label's layout).

export const RESULT_THUMB_EDGE = 400;

export interface ImageInfo {
  contentType: string;
  width: number;
  height: number;
}

export function isJpeg(b: Uint8Array): boolean {
  return b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
}

export function isPng(b: Uint8Array): boolean {
  return b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47;
}

export function pngSize(b: Uint8Array): { width: number; height: number } {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return { width: v.getUint32(16), height: v.getUint32(20) };
}

/** A JPEG's size from its frame header (SOF0-SOF15 but DHT, JPG and DAC), without decoding it; null if none. */
function jpegSize(b: Uint8Array): { width: number; height: number } | null {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++;
      continue;
    }
    const length = (b[i + 2]! << 8) | b[i + 3]!;
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      const height = (b[i + 5]! << 8) | b[i + 6]!;
      const width = (b[i + 7]! << 8) | b[i + 8]!;
      return width > 0 && height > 0 ? { width, height } : null;
    }
    i += 2 + length;
  }
  return null;
}

/**
 * The image's type and size from its header only (no decoding): what a job needs to record the version at once,
 * and what the disclosure label is laid out for.
 */
export function describeImage(bytes: Uint8Array): ImageInfo {
  if (isPng(bytes) && bytes.length > 24) return { contentType: "image/png", ...pngSize(bytes) };
  const size = isJpeg(bytes) ? jpegSize(bytes) : null;
  if (!size) throw new Error("The provider's result is not a JPEG or PNG image.");
  return { contentType: "image/jpeg", ...size };
}
