// Recognises the two image formats we accept from their bytes, never from a
// file name or a declared type. Shared by the browser (to refuse a renamed
// file before a byte is sent) and the server (which decides).

export type ImageType = "image/jpeg" | "image/png";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
// The IEND chunk: length 0, type "IEND", CRC.
const PNG_IEND = [0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82];

function startsWith(bytes: Uint8Array, prefix: number[], at = 0): boolean {
  if (bytes.length < at + prefix.length) return false;
  return prefix.every((b, i) => bytes[at + i] === b);
}

/** JPEG (FF D8 FF) or PNG (89 50 4E 47 0D 0A 1A 0A) from the first bytes, else null. */
export function sniffImageType(head: Uint8Array): ImageType | null {
  if (startsWith(head, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (startsWith(head, PNG_SIGNATURE)) return "image/png";
  return null;
}

/** Whether the file ends the way a whole file of its type ends (EOI for JPEG, IEND for PNG). */
export function hasCompleteEnding(type: ImageType, tail: Uint8Array): boolean {
  if (type === "image/png") return startsWith(tail, PNG_IEND, tail.length - PNG_IEND.length);
  return tail.length >= 2 && tail[tail.length - 2] === 0xff && tail[tail.length - 1] === 0xd9;
}

function u16(b: Uint8Array, at: number): number {
  return ((b[at] ?? 0) << 8) | (b[at + 1] ?? 0);
}

function u32(b: Uint8Array, at: number): number {
  return (((b[at] ?? 0) << 24) | ((b[at + 1] ?? 0) << 16) | ((b[at + 2] ?? 0) << 8) | (b[at + 3] ?? 0)) >>> 0;
}

// Start-of-frame markers carry the image size (C4 = DHT, C8 = JPG, CC = DAC are not frames).
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

function jpegSize(b: Uint8Array): { width: number; height: number } | null {
  let at = 2;
  while (at + 4 <= b.length) {
    if (b[at] !== 0xff) return null;
    let marker = b[at + 1] ?? 0;
    while (marker === 0xff && at + 2 < b.length) {
      at++;
      marker = b[at + 1] ?? 0;
    }
    at += 2;
    // Markers without a length: TEM and RSTn.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue;
    // Start of scan or end of image before any frame header: not a usable image.
    if (marker === 0xda || marker === 0xd9) return null;
    const length = u16(b, at);
    if (length < 2) return null;
    if (isStartOfFrame(marker)) {
      if (at + 7 > b.length) return null;
      return { height: u16(b, at + 3), width: u16(b, at + 5) };
    }
    at += length;
  }
  return null;
}

export interface ImageInfo {
  type: ImageType;
  width: number;
  height: number;
}

/**
 * Type and pixel size from a file's head (the first 64 KiB is plenty for the
 * files browsers encode); null when the head is not a JPEG or PNG we can read.
 */
export function readImageInfo(head: Uint8Array): ImageInfo | null {
  const type = sniffImageType(head);
  if (type === "image/png") {
    if (!startsWith(head, [0x49, 0x48, 0x44, 0x52], 12)) return null;
    const width = u32(head, 16);
    const height = u32(head, 20);
    return width > 0 && height > 0 ? { type, width, height } : null;
  }
  if (type === "image/jpeg") {
    const size = jpegSize(head);
    return size && size.width > 0 && size.height > 0 ? { type, ...size } : null;
  }
  return null;
}

/** How many bytes from the start readImageInfo needs at most. */
export const IMAGE_HEAD_BYTES = 64 * 1024;
