import { DESIGN_STYLES, findPlan, type Plan, ROOM_TYPES } from "./catalog";

// The provider's optional staging fields, named as the provider names them
// (shared spec provider-api.md, from the provider's http/README.md): colour
// palettes COLOR_SCHEME_0-20, seasonal decor SPECIALITY_DECOR_0-7, how far a
// result may depart from the photo (design_creativity), and a generation
// directive (prompt). They are "advanced customization", sold on the plans that
// list it (planAllowsAdvanced) and enforced on the server.
// docs/decisions/0151-provider-as-documented.md

export interface NamedOption {
  code: string;
  name: string;
}

/** The provider's 21 palettes with its own names; `colors` are the named colours, shown as a swatch. */
export const COLOR_SCHEMES: readonly (NamedOption & { colors: readonly string[] })[] = (
  [
    ["Default", []],
    ["Moss Green, Tan, White", ["#8a9a5b", "#d2b48c", "#ffffff"]],
    ["Gray, Sand, Blue", ["#8e8e8e", "#d8c7a0", "#4f7ea8"]],
    ["Hunter Green, Red", ["#355e3b", "#b22222"]],
    ["White, Pops of Color", ["#ffffff", "#ff6f61", "#ffd166", "#06d6a0"]],
    ["Blue, Neon", ["#1f4e9c", "#39ff14"]],
    ["Light Blue, Emerald", ["#add8e6", "#50c878"]],
    ["Blue, Grass Green", ["#2e5fa3", "#7cb342"]],
    ["Blue, Beige", ["#3b6ea5", "#e8dcc4"]],
    ["Gray, Brown", ["#8e8e8e", "#7b5b3a"]],
    ["Black, Red", ["#111111", "#c0392b"]],
    ["Gray-Green, White, Black", ["#8a9a8a", "#ffffff", "#111111"]],
    ["Blue, Gray, Taupe", ["#4f6d8f", "#9e9e9e", "#8b7d6b"]],
    ["Black, Navy", ["#111111", "#1f2a44"]],
    ["Emerald, Tan", ["#50c878", "#d2b48c"]],
    ["Forest Green, Light Gray", ["#228b22", "#d3d3d3"]],
    ["Yellow, Gray", ["#f2c94c", "#8e8e8e"]],
    ["Pink, Green", ["#f4a6c0", "#5a9e5a"]],
    ["Blush Pink, Black", ["#e8b4b8", "#111111"]],
    ["Black, White", ["#111111", "#ffffff"]],
    ["Blue, White", ["#2e5fa3", "#ffffff"]],
  ] as const
).map(([name, colors], i) => ({ code: `COLOR_SCHEME_${i}`, name, colors }));

/** The provider's seasonal decor, with its own names (0 is none). */
export const SPECIALITY_DECORS: readonly NamedOption[] = [
  "None",
  "Halloween",
  "Christmas",
  "Thanksgiving",
  "Fall",
  "Spring",
  "Summer",
  "Winter",
].map((name, i) => ({ code: `SPECIALITY_DECOR_${i}`, name }));

/**
 * "Keep the room as it is <-> more creative": the provider's design_creativity (0-1, its default 0.39). The
 * default step sends nothing. A lower value keeps walls, windows and floors closer to the photo.
 */
export const CREATIVITY_LEVELS: readonly { value: number; name: string }[] = [
  { value: 0.15, name: "Keep the room as it is" },
  { value: 0.27, name: "Close to the photo" },
  { value: 0.39, name: "Balanced (default)" },
  { value: 0.55, name: "More creative" },
  { value: 0.7, name: "Most creative" },
];
export const DEFAULT_CREATIVITY = 0.39;
export const CREATIVITY_VALUES: ReadonlySet<number> = new Set(CREATIVITY_LEVELS.map((l) => l.value));

export const PROMPT_MAX = 300;
export const ADVANCED_OPTIONS_MESSAGE = "Available on Starter and above";
export const ADVANCED_REFUSED_MESSAGE =
  "Advanced options (colour palette, seasonal decor, creativity, instructions) are available on the Starter, Standard and Professional plans.";
/** What the instruction field tells the person it does. */
export const INSTRUCTION_HELP =
  "Your instruction becomes the whole direction the AI follows; we add the room type and style you chose to it.";

export const COLOR_SCHEME_CODES: ReadonlySet<string> = new Set(COLOR_SCHEMES.map((c) => c.code));
export const SPECIALITY_DECOR_CODES: ReadonlySet<string> = new Set(SPECIALITY_DECORS.map((d) => d.code));

/**
 * The provider's prompt for an instruction: a whole directive (given alone it would replace the room type and
 * style), so it names the chosen room and style before the person's words.
 */
export function stagingDirective(roomCode: string, styleCode: string, instruction: string): string {
  const room = ROOM_TYPES.find((r) => r.code === roomCode)?.name ?? roomCode;
  const style = DESIGN_STYLES.find((s) => s.code === styleCode)?.label ?? styleCode;
  return `A ${room.toLowerCase()} furnished in ${style} style, real estate listing photo, walls, windows, doors and floor unchanged. ${instruction.trim()}`;
}

/** Whether a plan (by id or display name) includes advanced customization. */
export function planAllowsAdvanced(plan: Plan | string | null | undefined): boolean {
  const p = typeof plan === "string" || plan == null ? findPlan(plan) : plan;
  return p?.advancedCustomization === true;
}

/** A job request without the choices its kind needs (a staging's room and style, a sky's type). */
export const MISSING_OPTIONS = "Please select all required options";
/** A sky job whose type is not one of SKY_TYPES. */
export const INVALID_SKY_TYPE = "Invalid sky type";
