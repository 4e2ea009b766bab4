// A removal mask (issue 33, part 5): what the brush paints over a photo, white where something should go and black
// where the room stays. The browser makes it at the pixel size of the image the removal starts from; the server
// checks it again from its bytes and decides. docs/decisions/0195-removal-brush-masks.md
import { hasCompleteEnding, readImageInfo, sniffImageType } from "./image-format";

/** A mask is mostly black and compresses to a few tens of KB; 2 MB is far above any painted one. */
export const MAX_MASK_BYTES = 2 * 1024 * 1024;
/**
 * A mask is named by the SHA-256 of its bytes (lower-case hex). A photo keeps one mask, its newest: storing another
 * replaces it, and a removal naming the one replaced is refused (docs/decisions/0211-masks-decoded-once-per-photo.md).
 */
export const MASK_ID_PATTERN = /^[0-9a-f]{64}$/;

export const MASK_MESSAGES = {
  notPng: "The mask must be a PNG image (white where things should go, black elsewhere).",
  damaged: "The mask PNG is incomplete or damaged.",
  notGray:
    "The mask must be black and white: a grayscale PNG, or an RGB one whose every pixel is gray and fully opaque (no palette, not interlaced).",
  replaced: "A newer mask was painted on this photo since this removal was asked for. Paint what should go again.",
  tooLarge: "The mask is larger than 2 MB.",
  badId: "That is not a mask id.",
  notFound: "That mask was not found. Paint what should go again.",
  onlyRemoval: "A mask is for removing things only.",
  empty: "Paint over what should go first.",
  noScript: "The brush needs JavaScript: turn it on to paint what should go.",
} as const;

/** Why a mask of `mask` size cannot go with an image of `image` size, or null when they match exactly. */
export function maskSizeProblem(
  mask: { width: number; height: number },
  image: { width: number; height: number },
): string | null {
  if (mask.width === image.width && mask.height === image.height) return null;
  return `The mask is ${mask.width} x ${mask.height} px; it must be the size of the image it is painted on, ${image.width} x ${image.height} px.`;
}

/**
 * A mask's pixel size from its bytes, read from its PNG header: "not-png" when the bytes are not a PNG at all,
 * "damaged" when they start like one but have no readable header or no ending (a cut-off file).
 */
export function readMaskSize(bytes: Uint8Array): { width: number; height: number } | "not-png" | "damaged" {
  if (sniffImageType(bytes.subarray(0, 8)) !== "image/png") return "not-png";
  const info = readImageInfo(bytes.subarray(0, 64));
  if (!info || !hasCompleteEnding("image/png", bytes)) return "damaged";
  return { width: info.width, height: info.height };
}
