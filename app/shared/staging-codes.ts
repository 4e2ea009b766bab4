import { DESIGN_STYLES, providerStyleCode, QUICK_FURNITURE_STYLES, QUICK_ROOM_TYPES, ROOM_TYPES } from "./catalog";

// The one place a person's staging choice becomes what the provider is sent (issue 48). A room or style given by
// name or code (the page, the quick dialog, a batch, the public API) becomes our code, stored in the job; at the
// provider call our codes become the provider's, with the one set of defaults below; and a staging job's seed is
// drawn here, whether it is a first try, a variation, a re-roll or the structure check's second try.

export const FALLBACK_ROOM_CODE = "livingroom";
export const FALLBACK_STYLE_CODE = "modern";

const ROOM_CODES = new Set([...ROOM_TYPES, ...QUICK_ROOM_TYPES].map((r) => r.code));
const ROOM_NAMES = new Map([...ROOM_TYPES, ...QUICK_ROOM_TYPES].map((r) => [r.name.toLowerCase(), r.code]));

/** Our code for a room given by name or code, or undefined when we do not know it (the request is refused). */
export function roomCode(value: string): string | undefined {
  const v = value.trim().toLowerCase();
  return ROOM_CODES.has(v) ? v : ROOM_NAMES.get(v);
}

/** Our code for a style given by name or code (a quick style first); an unknown style is the fallback. */
export function styleCode(value: string): string {
  const v = value.trim().toLowerCase();
  const quick = QUICK_FURNITURE_STYLES.find((s) => s.name.toLowerCase() === v);
  if (quick) return quick.code;
  return DESIGN_STYLES.find((s) => s.code === v || s.name.toLowerCase() === v)?.code ?? FALLBACK_STYLE_CODE;
}

/** What a job's stored choice is sent as: our room and style (for the directive) and the provider's style code. */
export function providerStaging(params: { roomType?: string; designStyle?: string }): {
  roomType: string;
  designStyle: string;
  providerStyle: string;
} {
  const roomType = params.roomType ?? FALLBACK_ROOM_CODE;
  const designStyle = params.designStyle ?? FALLBACK_STYLE_CODE;
  return { roomType, designStyle, providerStyle: providerStyleCode(designStyle) };
}

/** A new provider seed (the provider takes 0 to 2^31 - 2): each staging job draws its own. */
export function newSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0]! % 2_147_483_647;
}
