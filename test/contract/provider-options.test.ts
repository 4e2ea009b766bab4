import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import {
  DESIGN_STYLES,
  providerStyleCode,
  QUICK_FURNITURE_STYLES,
  QUICK_ROOM_TYPES,
  ROOM_TYPES,
  SKY_TYPES,
  styleMenuLabel,
} from "../../app/shared/catalog.ts";
import { FALLBACK_ROOM_CODE, FALLBACK_STYLE_CODE } from "../../app/shared/staging-codes.ts";
import { COLOR_SCHEMES, SPECIALITY_DECORS } from "../../app/shared/staging-options.ts";

// Every option we can send is one the provider lists: read from the installed
// npm package decor8ai's constants.js (the provider's own), not from a copy.
// The palette and decor names are the provider's, transcribed from its
// http/README.md (immex-tech/decor8ai-sdk at 472383649596a2c75722ed1f38cf532f7222e0d2).

const require = createRequire(import.meta.url);
const sdk = require("decor8ai/constants.js") as Record<string, string[]>;
const lower = (key: string) => new Set(sdk[key]!.map((c) => c.toLowerCase()));

/** http/README.md, "Supported Color Schemes". */
const PROVIDER_PALETTES = [
  "Default",
  "Moss Green, Tan, White",
  "Gray, Sand, Blue",
  "Hunter Green, Red",
  "White, Pops of Color",
  "Blue, Neon",
  "Light Blue, Emerald",
  "Blue, Grass Green",
  "Blue, Beige",
  "Gray, Brown",
  "Black, Red",
  "Gray-Green, White, Black",
  "Blue, Gray, Taupe",
  "Black, Navy",
  "Emerald, Tan",
  "Forest Green, Light Gray",
  "Yellow, Gray",
  "Pink, Green",
  "Blush Pink, Black",
  "Black, White",
  "Blue, White",
];
/** http/README.md, "Supported Seasonal / Special Décor". */
const PROVIDER_DECOR = [
  "None",
  "Halloween Decor with Spooky Ambiance, Eerie Elements, Dark Colors, and Festive Accents",
  "Christmas Decor with Christmas Tree, Ornaments, and Lights",
  "Thanksgiving Decor, Fall Season Decor",
  "Fall Season Decor",
  "Spring Season Decor",
  "Summer Season Decor",
  "Winter Season Decor",
];

describe("every option we can send is in the provider's constants.js", () => {
  it("room types (the designer's 31, the quick dialog's and the fallback)", () => {
    const known = lower("ROOM_TYPES");
    const ours = [...ROOM_TYPES, ...QUICK_ROOM_TYPES].map((r) => r.code).concat(FALLBACK_ROOM_CODE);
    expect(ours.filter((c) => !known.has(c))).toEqual([]);
    expect(ROOM_TYPES).toHaveLength(31);
  });

  it("design styles as sent: the spec's 52, each mapped to one of the provider's 50", () => {
    const known = lower("DESIGN_STYLES");
    const sent = [...DESIGN_STYLES.map((s) => providerStyleCode(s.code)), FALLBACK_STYLE_CODE];
    sent.push(...QUICK_FURNITURE_STYLES.map((s) => providerStyleCode(s.code)));
    expect(sent.filter((c) => !known.has(c))).toEqual([]);
    expect(DESIGN_STYLES).toHaveLength(52);
    expect(known.size).toBe(50);
  });

  it("the two glam styles are sent as provider styles, and the menu says which", () => {
    const glam = DESIGN_STYLES.filter((s) => s.provider !== s.code);
    expect(glam.map((s) => [s.code, s.provider, styleMenuLabel(s)])).toEqual([
      ["modernglam", "luxemodern", "Modern Glam (as Luxe Modern)"],
      ["transitionalglam", "hollywoodregency", "Transitional Glam (as Hollywood Regency)"],
    ]);
  });

  it("palettes, seasonal decor and sky types, with the provider's names", () => {
    expect(COLOR_SCHEMES.map((c) => c.code)).toEqual(sdk.COLOR_SCHEMES);
    expect(SPECIALITY_DECORS.map((d) => d.code)).toEqual(sdk.SPECIALITY_DECORS);
    expect(SKY_TYPES.map((s) => s.toUpperCase())).toEqual(sdk.SKY_TYPES);
    expect(COLOR_SCHEMES.map((c) => c.name)).toEqual(PROVIDER_PALETTES);
    // Ours are the decor descriptions' first words: "Christmas" for SPECIALITY_DECOR_2, never another season.
    for (const [i, d] of SPECIALITY_DECORS.entries()) expect(PROVIDER_DECOR[i]!.startsWith(d.name), d.code).toBe(true);
    expect(SPECIALITY_DECORS.find((d) => d.name === "Christmas")?.code).toBe("SPECIALITY_DECOR_2");
  });
});
