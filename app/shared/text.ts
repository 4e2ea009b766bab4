import { z } from "zod";

// Free text typed by people (names, reasons, messages): trimmed, and refused
// when it carries control characters other than tab and newline.
// biome-ignore lint/suspicious/noControlCharactersInRegex: this pattern exists to find control characters
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

/** Removes control characters other than tab and newline (for text that is kept, not refused). */
export function stripControlCharacters(s: string): string {
  return s.replace(new RegExp(CONTROL.source, "g"), "");
}

export function hasControlCharacters(s: string): boolean {
  return CONTROL.test(s);
}

export function cleanText(label: string, min: number, max: number) {
  return z
    .string({ message: `${label} is required.` })
    .trim()
    .min(min, min <= 1 ? `${label} is required.` : `${label} must be at least ${min} characters.`)
    .max(max, `${label} must be at most ${max} characters.`)
    .refine((s) => !CONTROL.test(s), `${label} contains characters that are not allowed.`);
}
