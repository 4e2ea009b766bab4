// The disclosure label's options, shared by the settings form and the server
// (docs/decisions/0110-mls-disclosure-and-original-pages.md).

export const LABEL_CORNERS = ["bottom-right", "bottom-left", "top-right", "top-left"] as const;
export const LABEL_SIZES = ["small", "medium", "large"] as const;
export const LABEL_TONES = ["dark", "light"] as const;
export const LABEL_TEXT_MAX = 40;

export type LabelCorner = (typeof LABEL_CORNERS)[number];
export type LabelSizeName = (typeof LABEL_SIZES)[number];
export type LabelTone = (typeof LABEL_TONES)[number];

export interface LabelDefaults {
  /** False: downloads carry no label unless asked for one. */
  enabled: boolean;
  text: string;
  corner: LabelCorner;
  size: LabelSizeName;
  tone: LabelTone;
  /** Carry a QR code of the original page. */
  qr: boolean;
}

export const DEFAULT_LABEL: LabelDefaults = {
  enabled: true,
  text: "Virtually Staged",
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

/** Printable ASCII and Latin-1 letters: what the label's font draws. */
export function labelTextDrawable(text: string): boolean {
  for (const ch of text) {
    const c = ch.codePointAt(0) ?? 0;
    if (!((c >= 32 && c <= 126) || (c >= 160 && c <= 255))) return false;
  }
  return true;
}
