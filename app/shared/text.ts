import { z } from "zod";

// Free text typed by people (names, reasons, messages): trimmed, and refused
// when it carries control characters other than tab and newline.
// biome-ignore lint/suspicious/noControlCharactersInRegex: this pattern exists to find control characters
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

/**
 * Bidirectional formatting characters (right-to-left override and friends):
 * invisible, and able to make "photo\u202Egpj.exe" read as "photoexe.jpg".
 */
const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

/**
 * The longest start of `value` that is at most `max` UTF-16 units (what `.length` and zod's `.max` count) and ends
 * on a character boundary: never half of a surrogate pair (which would be stored as U+FFFD), and never half of a
 * grapheme cluster (an emoji with its skin tone, a flag, a letter with its accent), so what is kept shows as typed.
 */
export function cutText(value: string, max: number): string {
  if (value.length <= max) return value;
  let out = "";
  if (typeof Intl !== "undefined" && "Segmenter" in Intl) {
    for (const { segment } of new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(value)) {
      if (out.length + segment.length > max) break;
      out += segment;
    }
    return out;
  }
  for (const ch of value) {
    if (out.length + ch.length > max) break;
    out += ch;
  }
  return out;
}

/** A name shown in lists (photos, folders): no control or bidi characters, one space between words, at most `max`. */
export function displayName(value: string, fallback: string, max = 100): string {
  const clean = value
    .replace(/\s+/g, " ")
    .replace(/\p{Cc}/gu, "")
    .replace(new RegExp(BIDI.source, "g"), "")
    .replace(/ {2,}/g, " ")
    .trim();
  return cutText(clean, max).trim() || fallback;
}

/** Removes control characters other than tab and newline (for text that is kept, not refused). */
export function stripControlCharacters(s: string): string {
  return s.replace(new RegExp(CONTROL.source, "g"), "");
}

export function hasControlCharacters(s: string): boolean {
  return CONTROL.test(s) || BIDI.test(s);
}

export function cleanText(label: string, min: number, max: number) {
  return z
    .string({ message: `${label} is required.` })
    .trim()
    .min(min, min <= 1 ? `${label} is required.` : `${label} must be at least ${min} characters.`)
    .max(max, `${label} must be at most ${max} characters.`)
    .refine((s) => !hasControlCharacters(s), `${label} contains characters that are not allowed.`);
}
