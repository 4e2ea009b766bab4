import type { Database } from "@db/client";
import { labelSettings, type PhotoVersion } from "@db/schema";
import { sha256Hex } from "@workers/lib/crypto";
import { describeImage } from "@workers/lib/image-facts";
import type { Images } from "@workers/lib/images";
import { type LabelSpec, labelOverlayPng } from "@workers/lib/label/render";
import { photoPrefix } from "@workers/lib/photo-storage";
import { putRetrying } from "@workers/lib/stored-retry";
import { eq } from "drizzle-orm";
import { z } from "zod";
import {
  DEFAULT_LABEL,
  LABEL_CORNERS,
  LABEL_SIZES,
  LABEL_TEXT_MAX,
  LABEL_TONES,
  type LabelDefaults,
  labelTextDrawable,
  statesAlteration,
} from "~/shared/label-options";
import { profileById, profileOrDefault } from "~/shared/mls-profiles";
import { type Failure, fail, NOT_FOUND, ok, type Result } from "~/shared/result";
import { hasControlCharacters } from "~/shared/text";
import { versionBytes } from "~/shared/version-bytes";

// The account's disclosure settings (its MLS profile and the label's look), and
// the rendered bytes of a label, kept in R2 beside the version so every path
// that asks for the same label gets the same bytes
// (docs/decisions/0110-mls-disclosure-and-original-pages.md, 0170-mls-profiles.md).

const labelText = z
  .string({ message: "The label text must be text." })
  .trim()
  .max(LABEL_TEXT_MAX, `The label text must be at most ${LABEL_TEXT_MAX} characters.`)
  .refine(
    (s) => !hasControlCharacters(s) && !/[\t\n\r]/.test(s),
    "The label text contains characters that are not allowed.",
  )
  .refine(labelTextDrawable, "The label text can use letters, digits and punctuation of Western European languages.")
  .refine(
    (s) => s === "" || statesAlteration(s),
    'The label text must say the photo was altered, for example "Virtually staged" or "Digitally altered".',
  )
  // Empty: the profile's own wording.
  .transform((s) => (s === "" ? null : s));

export const UNKNOWN_PROFILE = "Pick one of the MLS profiles offered.";

export const profileId = z.string({ message: UNKNOWN_PROFILE }).refine((id) => profileById(id) !== undefined, {
  message: UNKNOWN_PROFILE,
});

export const labelDefaultsInput = z.object({
  profile: profileId,
  text: labelText,
  corner: z.enum(LABEL_CORNERS, { message: "Pick a corner for the label." }),
  size: z.enum(LABEL_SIZES, { message: "Pick a size for the label." }),
  tone: z.enum(LABEL_TONES, { message: "Pick light or dark for the label." }),
  qr: z.boolean(),
});

/** The account's disclosure settings (its profile and label), or the defaults of a new account (California). */
export async function getLabelDefaults(db: Database, userId: string): Promise<LabelDefaults> {
  const row = await db.select().from(labelSettings).where(eq(labelSettings.userId, userId)).get();
  if (!row) return { ...DEFAULT_LABEL };
  return {
    profile: profileOrDefault(row.profile).id,
    text: row.text,
    corner: row.corner,
    size: row.size,
    tone: row.tone,
    qr: row.qr,
  };
}

export async function saveLabelDefaults(db: Database, userId: string, input: LabelDefaults, now = Date.now()) {
  await db
    .insert(labelSettings)
    .values({ userId, ...input, updatedAt: now })
    .onConflictDoUpdate({ target: labelSettings.userId, set: { ...input, updatedAt: now } });
}

export interface RenderedImage {
  bytes: Uint8Array;
  contentType: string;
}

/**
 * The version's bytes with the label drawn in (`qrUrl` null: no QR). Rendered once from the stored full-size version
 * and kept under the photo's prefix. The photo is never decoded here: its size comes from its header, the label is
 * drawn as a small PNG laid out for that size, and the Images binding draws it onto the photo
 * (docs/decisions/0250-labels-drawn-by-images.md).
 */
export async function labelledBytes(
  bucket: R2Bucket,
  images: Images,
  version: Pick<PhotoVersion, "id" | "userId" | "photoId" | "key" | "thumbKey" | "structureVerdict">,
  spec: LabelSpec,
): Promise<Result<RenderedImage> | Failure> {
  // Drawn on the full image: only one the byte rule lets leave in full (ADR 0200), even from the cache.
  const full = versionBytes(version, "full");
  if (!full.ok) return full;
  const hash = sha256Hex(JSON.stringify([spec.lines, spec.corner, spec.size, spec.tone, spec.qrUrl])).slice(0, 24);
  const key = `${labelsPrefix(version)}${version.id}-${hash}`;
  const cached = await bucket.get(key);
  if (cached) {
    return ok({
      bytes: new Uint8Array(await cached.arrayBuffer()),
      contentType: cached.httpMetadata?.contentType ?? "image/jpeg",
    });
  }
  const source = await bucket.get(full.key);
  if (!source) return NOT_FOUND;
  const photo = new Uint8Array(await source.arrayBuffer());
  let facts: ReturnType<typeof describeImage>;
  try {
    facts = describeImage(photo);
  } catch {
    return fail("unprocessable", "This version cannot be labelled (its image could not be read).");
  }
  const type = facts.contentType === "image/png" ? "image/png" : "image/jpeg";
  const overlay = await labelOverlayPng(facts.width, facts.height, spec);
  let bytes: Uint8Array;
  try {
    bytes = await images.burnOverlay(photo, overlay.png, { left: overlay.left, top: overlay.top }, type);
  } catch (err) {
    // The image service failed (a quota, an outage): no label, so no download; never the photo without it.
    console.warn("label: the image service could not draw the label", err instanceof Error ? err.message : err);
    return fail("unavailable", "The label could not be drawn just now. Try again in a minute.");
  }
  await putRetrying(bucket, key, bytes, { httpMetadata: { contentType: type } });
  return ok({ bytes, contentType: type });
}

/** Where a photo's rendered labels are kept (each named by version and the label's hash). */
export function labelsPrefix(version: Pick<PhotoVersion, "userId" | "photoId">): string {
  return `${photoPrefix(version.userId, version.photoId)}labels/`;
}
