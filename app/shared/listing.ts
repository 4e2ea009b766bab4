import { ROOM_TYPES } from "./catalog";

// Staging a whole listing (issue 15), the rules both the pages and the server
// read: how many photos a batch takes, variations, the free re-roll, the room a
// photo's name suggests, and how a price is said before anything starts.
// docs/decisions/0140-batches-variations-rerolls.md

export const MAX_BATCH_PHOTOS = 100;
export const MAX_VARIATIONS = 4;
export const FREE_REROLL_DAYS = 7;
export const FREE_REROLL_MS = FREE_REROLL_DAYS * 24 * 60 * 60 * 1000;
export const REROLL_PAID_MESSAGE =
  "This re-roll costs 1 credit: the free re-roll of this result is used or more than 7 days old.";
/** The long edge a listing photo should reach (MLS photo guidance: 2048 px and up). */
export const LISTING_LONG_EDGE = 2048;

/** What a version says of its size when it is below listing size, or null when it is not. */
export function belowListingSize(width: number, height: number): string | null {
  if (Math.max(width, height) >= LISTING_LONG_EDGE) return null;
  return `${width} × ${height} px: below the ${LISTING_LONG_EDGE} px listing photos usually need`;
}

export const VARIATIONS_MESSAGE = `Variations must be a whole number from 1 to ${MAX_VARIATIONS}.`;

/** "1 credit", "10 credits", "0 credits (free)". */
export function creditsLabel(n: number): string {
  if (n === 0) return "0 credits (free)";
  return `${n} ${n === 1 ? "credit" : "credits"}`;
}

const NAME_HINTS: [RegExp, string][] = [
  [/\b(living|lounge|sitting)\b/, "livingroom"],
  [/\bkitchen\b/, "kitchen"],
  [/\bdining\b/, "diningroom"],
  [/\b(bed ?room|master|guest ?room)\b/, "bedroom"],
  [/\b(bath ?room|ensuite|en-suite)\b/, "bathroom"],
  [/\b(kids?|nursery)\b/, "kidsroom"],
  [/\bfamily\b/, "familyroom"],
  [/\bsun ?room\b/, "sunroom"],
  [/\b(office|study)\b/, "office"],
  [/\b(foyer|entry|hall)\b/, "foyer"],
  [/\blaundry\b/, "laundryroom"],
  [/\bgym\b/, "gym"],
  [/\bbasement\b/, "basement"],
  [/\bgarage\b/, "garage"],
  [/\bcloset\b/, "walkincloset"],
];

/** The room type a photo's name suggests ("Kitchen 2.jpg" -> kitchen), or null. */
export function roomFromName(name: string): string | null {
  const n = name.toLowerCase().replace(/[_.-]+/g, " ");
  for (const [re, code] of NAME_HINTS) if (re.test(n)) return code;
  return null;
}

export const BATCH_ROOM_TYPES = ROOM_TYPES;

/** The batch form's field names: `pick:<photoId>` = "1" when chosen, `room:<photoId>` its room type. */
export const pickField = (photoId: string) => `pick:${photoId}`;
export const roomField = (photoId: string) => `room:${photoId}`;

/** What a batch's progress list shows for one photo. */
export type BatchItemStatus = "queued" | "processing" | "done" | "failed";

export function itemStatus(jobStatus: string): BatchItemStatus {
  if (jobStatus === "running") return "processing";
  if (jobStatus === "succeeded") return "done";
  if (jobStatus === "failed") return "failed";
  return "queued";
}
