import { readImageInfo } from "../../app/shared/image-format";

// What an image is, from its header alone: no decoding, no codec. Every path of the Worker that needs a result's type
// and size reads it here (a job recording its version, the structure check, the disclosure label's layout), through
// the one header parser the upload checks use too (app/shared/image-format.ts).

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

/**
 * The image's type and size from its header only (no decoding): what a job needs to record the version at once,
 * and what the disclosure label is laid out for.
 */
export function describeImage(bytes: Uint8Array): ImageInfo {
  const info = readImageInfo(bytes);
  if (!info) throw new Error("The provider's result is not a JPEG or PNG image.");
  return { contentType: info.type, width: info.width, height: info.height };
}
