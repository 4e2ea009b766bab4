import { findPlan, type Plan } from "./catalog";

// The provider's optional staging fields (its public SDK: color_scheme
// COLOR_SCHEME_0-20, speciality_decor SPECIALITY_DECOR_0-7, keep_original_floor,
// prompt). The provider names no palettes or themes: the names below are ours,
// shown as names only. They are "advanced customization", sold on the plans
// that list it (see planAllowsAdvanced) and enforced on the server.

export interface NamedOption {
  code: string;
  name: string;
}

/** Our names for the provider's 21 colour palettes; `swatch` is the colour shown beside the name. */
export const COLOR_SCHEMES: readonly (NamedOption & { swatch: string })[] = [
  ["Designer's choice", "#9ca3af"],
  ["Warm neutrals", "#d6c3a5"],
  ["Cool greys", "#9aa5b1"],
  ["Soft whites", "#f1efe9"],
  ["Earth tones", "#a0785a"],
  ["Sage and olive", "#9caf88"],
  ["Ocean blues", "#4f7ea8"],
  ["Navy and brass", "#23395b"],
  ["Terracotta", "#c8674a"],
  ["Blush pink", "#e8b4b8"],
  ["Charcoal and black", "#36454f"],
  ["Honey and oak", "#c99a5b"],
  ["Forest green", "#2f5d46"],
  ["Sunny yellow", "#f2c94c"],
  ["Lavender", "#b7a6d6"],
  ["Monochrome", "#777777"],
  ["Burgundy", "#7b2d3b"],
  ["Teal accents", "#2a9d8f"],
  ["Sand and stone", "#cbbd9f"],
  ["Coastal", "#8ec5d6"],
  ["Bold contrast", "#111827"],
].map(([name, swatch], i) => ({ code: `COLOR_SCHEME_${i}`, name: name!, swatch: swatch! }));

/** Our names for the provider's seasonal and thematic decor sets (0 is none). */
export const SPECIALITY_DECORS: readonly NamedOption[] = [
  "None",
  "Spring flowers",
  "Summer",
  "Autumn harvest",
  "Halloween",
  "Thanksgiving",
  "Christmas",
  "Winter",
].map((name, i) => ({ code: `SPECIALITY_DECOR_${i}`, name }));

export const PROMPT_MAX = 300;
export const ADVANCED_OPTIONS_MESSAGE = "Available on Starter and above";
export const ADVANCED_REFUSED_MESSAGE =
  "Advanced options (colour palette, decor, keep floor, instructions) are available on the Starter, Standard and Professional plans.";

export const COLOR_SCHEME_CODES: ReadonlySet<string> = new Set(COLOR_SCHEMES.map((c) => c.code));
export const SPECIALITY_DECOR_CODES: ReadonlySet<string> = new Set(SPECIALITY_DECORS.map((d) => d.code));

/** Whether a plan (by id or display name) includes advanced customization. */
export function planAllowsAdvanced(plan: Plan | string | null | undefined): boolean {
  const p = typeof plan === "string" || plan == null ? findPlan(plan) : plan;
  return p?.advancedCustomization === true;
}
