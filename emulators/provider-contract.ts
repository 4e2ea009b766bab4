import { createRequire } from "node:module";

// What the provider emulator accepts and answers, from the provider's own
// repository (immex-tech/decor8ai-sdk) and its npm package `decor8ai`, whose
// constants.js this reads, so the emulator refuses exactly the codes the
// provider does not list. test/contract/provider-answers.test.ts checks every
// answer built here against the provider's published samples.

const require = createRequire(import.meta.url);
const constants = require("decor8ai/constants.js") as {
  ROOM_TYPES: string[];
  DESIGN_STYLES: string[];
  COLOR_SCHEMES: string[];
  SPECIALITY_DECORS: string[];
  SKY_TYPES: string[];
};

const lower = (list: string[]) => new Set(list.map((s) => s.toLowerCase()));
export const PROVIDER_ROOM_TYPES = lower(constants.ROOM_TYPES);
export const PROVIDER_DESIGN_STYLES = lower(constants.DESIGN_STYLES);
export const PROVIDER_COLOR_SCHEMES = new Set(constants.COLOR_SCHEMES);
export const PROVIDER_SPECIALITY_DECORS = new Set(constants.SPECIALITY_DECORS);
export const PROVIDER_SKY_TYPES = lower(constants.SKY_TYPES);

/** The sizes of the provider's sample answers: staging 768x512 (http/README.md), removal 768x576. */
export const STAGE_SIZE = { width: 768, height: 512 } as const;
export const REMOVAL_SIZE = { width: 768, height: 576 } as const;
/**
 * The sky's size is not documented: the emulator answers with the input's aspect at 768 px on the long edge, the
 * width of the samples, so the product's enlargement path runs against it.
 */
export const SKY_LONG_EDGE = 768;
/** /upscale_image: "Original images of upto maximum 1024px width or height" (http/README.md); about 4 MB (SDK). */
export const UPSCALE_MAX_EDGE = 1024;
export const UPSCALE_MAX_BYTES = 4 * 1024 * 1024;

function inRange(v: unknown, min: number, max: number, integer: boolean): boolean {
  const n = typeof v === "string" && v.trim() !== "" ? Number(v) : v;
  return typeof n === "number" && Number.isFinite(n) && n >= min && n <= max && (!integer || Number.isInteger(n));
}

/** Why the provider would refuse a staging call's fields (200 with an error body), or null. */
export function invalidStaging(f: Record<string, unknown>): string | null {
  const str = (k: string) => (f[k] === undefined || f[k] === null ? undefined : String(f[k]));
  const room = str("room_type");
  const style = str("design_style");
  if (room !== undefined && !PROVIDER_ROOM_TYPES.has(room.toLowerCase())) return `Unknown room_type: ${room}`;
  if (style !== undefined && !PROVIDER_DESIGN_STYLES.has(style.toLowerCase())) return `Unknown design_style: ${style}`;
  if (str("prompt") === undefined && (room === undefined || style === undefined))
    return "room_type and design_style are required without a prompt";
  const colour = str("color_scheme");
  if (colour !== undefined && !PROVIDER_COLOR_SCHEMES.has(colour))
    return "color_scheme must be one of COLOR_SCHEME_0 ... COLOR_SCHEME_20";
  const decor = str("speciality_decor");
  if (decor !== undefined && !PROVIDER_SPECIALITY_DECORS.has(decor))
    return "speciality_decor must be one of SPECIALITY_DECOR_0 ... SPECIALITY_DECOR_7";
  if (f.num_images !== undefined && !inRange(f.num_images, 1, 4, true)) return "num_images must be between 1 and 4";
  if (f.scale_factor !== undefined && !inRange(f.scale_factor, 1, 8, true)) return "scale_factor must be 1 to 8";
  if (f.design_creativity !== undefined && !inRange(f.design_creativity, 0, 1, false))
    return "design_creativity must be between 0 and 1";
  if (f.design_style_image_strength !== undefined && !inRange(f.design_style_image_strength, 0, 1, false))
    return "design_style_image_strength must be between 0 and 1";
  if (f.seed !== undefined && !inRange(f.seed, 0, Number.MAX_SAFE_INTEGER, true)) return "seed must be >= 0";
  return null;
}

/** A success as the provider writes it: an empty `error`, a message, and `info`. */
export function success(message: string, info: Record<string, unknown>) {
  return { error: "", message, info };
}

/** A refusal as the provider writes it (HTTP 200). */
export function refusal(message: string) {
  return { error: "InvalidInput", message };
}

export const MESSAGES = {
  stage: "Successfully generated designs.",
  sky: "Successfully generated designs.",
  removal: "Successfully removed objects from room.",
  upscale: "Successfully upscaled image.",
} as const;
