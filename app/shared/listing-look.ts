// One look across a listing (issue 33, part 4): a staged version made a folder's reference, sent to the provider as
// the style reference (design_style_image_url) of every later staging of the folder's photos, at a strength
// (design_style_image_strength, 0-1) chosen from a few named steps. Read by the pages and checked on the server.
// docs/decisions/0190-one-look-for-a-listing.md

export interface LookStrength {
  value: number;
  name: string;
  help: string;
}

/** The steps offered, loosest first; the server takes only these values. */
export const LOOK_STRENGTHS: readonly LookStrength[] = [
  { value: 0.5, name: "Loose", help: "the palette and mood, each room its own" },
  { value: 0.7, name: "Close", help: "the same furniture style and colours" },
  { value: 0.85, name: "Strict", help: "as near the reference as the provider goes" },
];

export const DEFAULT_LOOK_STRENGTH = 0.7;

export const LOOK_STRENGTH_MESSAGE = `Choose how closely to follow the look: ${LOOK_STRENGTHS.map((s) => `${s.name} (${s.value})`).join(", ")}.`;

/** A strength from a form field or a JSON number, when it is one of the steps; otherwise null. */
export function lookStrengthOf(value: unknown): number | null {
  const n = typeof value === "string" && /^\d(\.\d{1,3})?$/.test(value) ? Number(value) : value;
  return typeof n === "number" && LOOK_STRENGTHS.some((s) => s.value === n) ? n : null;
}

/** "Close (0.7)"; a stored value that is no longer a step is said as its number. */
export function lookStrengthLabel(value: number): string {
  const step = LOOK_STRENGTHS.find((s) => s.value === value);
  return step ? `${step.name} (${step.value})` : String(value);
}

export const LOOK_NOT_STAGED = "Only a staged version can be the listing's look.";
/** A result the structure check refused was not charged: it becomes a look only once kept (docs/decisions/0190). */
export const LOOK_NOT_REFUSED =
  "This result changed the room's walls, windows or doors, so it was not charged. Keep it (1 credit) to use its look for the listing.";
export const LOOK_NEEDS_FOLDER =
  "Put this photo in a folder first: a folder is a listing, and the look is kept with it.";
export const LOOK_NOT_SET = "This listing has no look. Open a staged photo and choose “Use this look for the listing”.";

/** A folder's look as the pages show it (null fields: none set). */
export interface LookView {
  folderId: string;
  versionId: string;
  photoId: string;
  strength: number;
  /** Its photo is in the trash: the look is not sent until the photo is restored. */
  trashed: boolean;
  thumbUrl: string;
}

/** A photo's listing as its versions list shows it: the folder, and which version (if any) is the folder's look. */
export interface PhotoListing {
  folderId: string;
  lookVersionId: string | null;
  strength: number | null;
}

/** How the new-batch form says whether this batch uses its photos' looks. */
export const BATCH_LOOK_CHOICES = ["listing", "none"] as const;
export type BatchLookChoice = (typeof BATCH_LOOK_CHOICES)[number];
