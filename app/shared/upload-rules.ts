// The upload rules shared by the browser (checks before a byte is sent) and the
// server (which checks again and decides). See docs/decisions/0040 and 0041.

import { displayName } from "./text";
import { ACCEPTED_UPLOAD_TYPES, MAX_UPLOAD_BYTES } from "./upload-limits";

export { ACCEPTED_UPLOAD_TYPES, MAX_UPLOAD_BYTES };

export const UPLOAD_HINT = "Drag & drop or click to browse • Max 10MB • JPG, PNG";

/**
 * Longest edge a photo keeps after the browser's downscale: the AI provider's useful resolution
 * (docs/decisions/0131-fewer-bytes-per-photo.md). Nothing above it reaches a staged result.
 */
export const LONG_EDGE_LIMIT = 2560;
/**
 * JPEG qualities tried in turn, best first: the first whose photo fits PHOTO_BYTE_TARGET is sent
 * (the last one whatever its size). Chosen by the SSIM sweep in test/e2e/support/photo-quality.ts (ADR 0131).
 */
export const JPEG_QUALITIES = [0.9, 0.86, 0.82, 0.78] as const;
export const JPEG_QUALITY = JPEG_QUALITIES[0];
/** What a prepared photo aims to stay within: 1.4 MiB, so photo, thumbnail and headers stay under 1.5 MiB. */
export const PHOTO_BYTE_TARGET = Math.round(1.4 * 1024 * 1024);

/**
 * The most pixels a stored photo may have, read from its header before any
 * decoding (docs/decisions/0103-pixel-limits.md): 24 megapixels and 10,000 px a
 * side. A 68-byte PNG can claim 60000x60000; nobody decodes that.
 */
export const MAX_PHOTO_PIXELS = 24_000_000;
export const MAX_PHOTO_EDGE = 10_000;

/** Why a photo of these dimensions is refused, or null when it is within the limits. */
export function pixelProblem(width: number, height: number): string | null {
  if (!(width >= 1 && height >= 1)) return UPLOAD_MESSAGES.notAnImage;
  if (Math.max(width, height) > MAX_PHOTO_EDGE || width * height > MAX_PHOTO_PIXELS)
    return UPLOAD_MESSAGES.tooManyPixels;
  return null;
}

/** The grid's thumbnail: long edge and the most bytes the server accepts for one. */
export const THUMB_LONG_EDGE = 400;
export const THUMB_QUALITY = 0.72;
export const THUMB_MAX_BYTES = 100 * 1024;

/** Each upload request carries one chunk this size (the last may be smaller). */
export const CHUNK_SIZE = 256 * 1024;

/**
 * Photos per grid page: the server renders this many cards, "Load more" appends the next page. 24 is four to six
 * rows on a desktop and twelve on a phone; 60 cards made the dashboard's HTML about 240 KB and cost its render
 * 3-4x the bare page under load (docs/decisions/0043-serving-photos-and-the-grid.md, update).
 */
export const PAGE_SIZE = 24;

export const DEFAULT_PHOTO_NAME = "New Image";
export const DEFAULT_FOLDER_NAME = "New Folder";

export const UPLOAD_MESSAGES = {
  wrongType: "Only JPG and PNG images can be uploaded. Please choose a .jpg or .png file.",
  tooLarge: "This file is larger than 10 MB. Please choose a photo of 10 MB or less.",
  empty: "This file is empty. Please choose a photo.",
  notAnImage: "This file is not a JPG or PNG image, even though its name says so. Please choose another photo.",
  unreadable: "This image could not be read. It may be damaged; please choose another photo.",
  damaged: "The photo arrived incomplete or damaged and was not saved. Please upload it again.",
  mismatch: "The photo's contents do not match its type and it was not saved. Please upload it again.",
  thumbTooLarge: "The thumbnail is too large.",
  incomplete: "Some parts of the photo have not arrived yet.",
  noThumb: "The thumbnail has not arrived yet.",
  tooManyPixels:
    "This photo is too large in pixels (at most 10,000 px a side and 24 megapixels). Please send a smaller one.",
  tooManyOpen: "Too many uploads are in progress. Please finish or cancel one first.",
  network: "The connection dropped. Retrying…",
  offline: "Paused - waiting for network. The upload carries on by itself when you are back online.",
  expired: "This upload was stopped or has expired on our side. Please choose the photo again.",
  gaveUp: "The upload could not reach our servers. Check your connection and press Try again.",
} as const;

const EXTENSIONS: Record<string, (typeof ACCEPTED_UPLOAD_TYPES)[number]> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
};

/** The accepted type a chosen file claims (its MIME type, or its extension when the browser gives none). */
export function claimedType(file: { name: string; type: string }): (typeof ACCEPTED_UPLOAD_TYPES)[number] | null {
  const type = file.type.toLowerCase();
  if (type === "image/jpeg" || type === "image/jpg" || type === "image/pjpeg") return "image/jpeg";
  if (type === "image/png") return "image/png";
  if (type !== "") return null;
  const ext = file.name.split(".").pop()?.toLowerCase() ?? "";
  return EXTENSIONS[ext] ?? null;
}

/** The message to show for a chosen file, or null when it may be uploaded. */
export function checkChosenFile(file: { name: string; type: string; size: number }): string | null {
  if (claimedType(file) === null) return UPLOAD_MESSAGES.wrongType;
  if (file.size > MAX_UPLOAD_BYTES) return UPLOAD_MESSAGES.tooLarge;
  if (file.size === 0) return UPLOAD_MESSAGES.empty;
  return null;
}

/** A photo's display name from a file name: no extension, no control characters, at most 100 characters. */
export function photoNameFromFileName(fileName: string): string {
  return displayName(fileName.trim().replace(/\.[A-Za-z0-9]{1,5}$/, ""), DEFAULT_PHOTO_NAME);
}

export function chunkCount(size: number, chunkSize = CHUNK_SIZE): number {
  return Math.max(1, Math.ceil(size / chunkSize));
}

/** The exact length chunk `index` must have. */
export function chunkLength(index: number, size: number, chunkSize = CHUNK_SIZE): number {
  const count = chunkCount(size, chunkSize);
  if (index < 0 || index >= count) return 0;
  return index === count - 1 ? size - chunkSize * (count - 1) : chunkSize;
}

/** The size a photo is downscaled to: long edge at most `limit`, never upscaled. */
export function fitWithin(width: number, height: number, limit: number): { width: number; height: number } {
  const scale = Math.min(1, limit / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}
