// The disclosure label's options, shared by the settings form and the server
// (docs/decisions/0110-mls-disclosure-and-original-pages.md).

export const LABEL_CORNERS = ["bottom-right", "bottom-left", "top-right", "top-left"] as const;
export const LABEL_SIZES = ["small", "medium", "large"] as const;
export const LABEL_TONES = ["dark", "light"] as const;
/** The label's first line, when the account rewords the profile's statement. */
export const LABEL_TEXT_MAX = 60;

export type LabelCorner = (typeof LABEL_CORNERS)[number];
export type LabelSizeName = (typeof LABEL_SIZES)[number];
export type LabelTone = (typeof LABEL_TONES)[number];

/**
 * The account's disclosure settings (docs/decisions/0170-mls-profiles.md): the MLS profile its listings follow
 * unless a listing names another, and how the label looks where that profile puts one on the photo.
 */
export interface LabelDefaults {
  /** An id of app/shared/mls-profiles.ts. */
  profile: string;
  /**
   * Replaces the first line of the profile's label (its statement) on staged results, when it says the photo was
   * altered (statesAlteration); null: the profile's wording.
   */
  text: string | null;
  corner: LabelCorner;
  size: LabelSizeName;
  tone: LabelTone;
  /** Carry a QR code of the original page. */
  qr: boolean;
}

export const DEFAULT_LABEL: LabelDefaults = {
  profile: "california",
  text: null,
  corner: "bottom-right",
  size: "medium",
  tone: "dark",
  qr: true,
};

export const CORNER_NAMES: Record<LabelCorner, string> = {
  "bottom-right": "Bottom right",
  "bottom-left": "Bottom left",
  "top-right": "Top right",
  "top-left": "Top left",
};

/**
 * Whether an account's own wording of the label still says the photo was altered, as every rule in
 * ../shared/spec/mls-rules.md asks ("Virtually staged", "Digitally altered", "Digitally staged"): wording that does not ("Welcome home")
 * would leave the photo with no statement at all.
 */
export function statesAlteration(text: string): boolean {
  return /\b(altered|modified|edited|virtual|virtually|digital|digitally)\b/i.test(text);
}

/** Printable ASCII and Latin-1 letters: what the label's font draws. */
export function labelTextDrawable(text: string): boolean {
  for (const ch of text) {
    const c = ch.codePointAt(0) ?? 0;
    if (!((c >= 32 && c <= 126) || (c >= 160 && c <= 255))) return false;
  }
  return true;
}
