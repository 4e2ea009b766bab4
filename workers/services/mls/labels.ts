import type { Database } from "@db/client";
import { labelSettings, type PhotoVersion } from "@db/schema";
import { sha256Hex } from "@workers/lib/crypto";
import { type LabelSpec, renderLabelled } from "@workers/lib/label/render";
import { photoPrefix } from "@workers/lib/photo-storage";
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
} from "~/shared/label-options";
import { type Failure, fail, NOT_FOUND, ok, type Result } from "~/shared/result";
import { hasControlCharacters } from "~/shared/text";

// The disclosure label: per-user defaults, a download's overrides, and the
// rendered bytes, kept in R2 beside the version so every path that asks for
// the same label gets the same bytes (docs/decisions/0110-mls-disclosure-and-original-pages.md).

const labelText = z
  .string({ message: "The label text is required." })
  .trim()
  .min(1, "The label text is required.")
  .max(LABEL_TEXT_MAX, `The label text must be at most ${LABEL_TEXT_MAX} characters.`)
  .refine(
    (s) => !hasControlCharacters(s) && !/[\t\n\r]/.test(s),
    "The label text contains characters that are not allowed.",
  )
  .refine(labelTextDrawable, "The label text can use letters, digits and punctuation of Western European languages.");

export const labelDefaultsInput = z.object({
  enabled: z.boolean(),
  text: labelText,
  corner: z.enum(LABEL_CORNERS, { message: "Pick a corner for the label." }),
  size: z.enum(LABEL_SIZES, { message: "Pick a size for the label." }),
  tone: z.enum(LABEL_TONES, { message: "Pick light or dark for the label." }),
  qr: z.boolean(),
});

export async function getLabelDefaults(db: Database, userId: string): Promise<LabelDefaults> {
  const row = await db.select().from(labelSettings).where(eq(labelSettings.userId, userId)).get();
  if (!row) return { ...DEFAULT_LABEL };
  return { enabled: row.enabled, text: row.text, corner: row.corner, size: row.size, tone: row.tone, qr: row.qr };
}

export async function saveLabelDefaults(db: Database, userId: string, input: LabelDefaults, now = Date.now()) {
  await db
    .insert(labelSettings)
    .values({ userId, ...input, updatedAt: now })
    .onConflictDoUpdate({ target: labelSettings.userId, set: { ...input, updatedAt: now } });
}

export type LabelChoice =
  | { label: false }
  | {
      label: true;
      text: string;
      corner: LabelDefaults["corner"];
      size: LabelDefaults["size"];
      tone: LabelDefaults["tone"];
      qr: boolean;
    };

const QUERY_KEYS = new Set(["label", "text", "corner", "size", "tone", "qr"]);

/**
 * What a download asks for: `label=none` for no label, otherwise the user's
 * defaults with any of text, corner, size, tone, qr (0/1) overridden.
 */
export function labelChoiceFrom(query: URLSearchParams, defaults: LabelDefaults): Result<{ choice: LabelChoice }> {
  for (const k of query.keys()) if (!QUERY_KEYS.has(k)) return fail("invalid", `Unknown option "${k.slice(0, 20)}".`);
  const label = query.get("label");
  if (label !== null && label !== "none" && label !== "default" && label !== "on")
    return fail("invalid", 'The label option is "none", "on" or "default".');
  if (label === "none") return ok({ choice: { label: false } as LabelChoice });
  const qr = query.get("qr");
  if (qr !== null && qr !== "0" && qr !== "1") return fail("invalid", 'The qr option is "0" or "1".');
  const merged = labelDefaultsInput.safeParse({
    enabled: true,
    text: query.get("text") ?? defaults.text,
    corner: query.get("corner") ?? defaults.corner,
    size: query.get("size") ?? defaults.size,
    tone: query.get("tone") ?? defaults.tone,
    qr: qr === null ? defaults.qr : qr === "1",
  });
  if (!merged.success) return fail("invalid", merged.error.issues[0]?.message ?? "Invalid label options.");
  // No explicit ask and defaults switched off: no label.
  if (label === null && !defaults.enabled && ![...query.keys()].length)
    return ok({ choice: { label: false } as LabelChoice });
  const { enabled: _e, ...spec } = merged.data;
  return ok({ choice: { label: true, ...spec } as LabelChoice });
}

export function choiceFromDefaults(defaults: LabelDefaults): LabelChoice {
  if (!defaults.enabled) return { label: false };
  const { enabled: _e, ...spec } = defaults;
  return { label: true, ...spec };
}

export interface RenderedImage {
  bytes: Uint8Array;
  contentType: string;
}

async function readAll(bucket: R2Bucket, key: string): Promise<R2ObjectBody | null> {
  return bucket.get(key);
}

/**
 * The version's bytes with the label drawn in (`qrUrl` null: no QR). Rendered
 * once from the stored full-size version and kept under the photo's prefix.
 */
export async function labelledBytes(
  bucket: R2Bucket,
  version: Pick<PhotoVersion, "id" | "userId" | "photoId" | "key">,
  spec: LabelSpec,
): Promise<Result<RenderedImage> | Failure> {
  const hash = sha256Hex(JSON.stringify([spec.text, spec.corner, spec.size, spec.tone, spec.qrUrl])).slice(0, 24);
  const key = `${photoPrefix(version.userId, version.photoId)}labels/${version.id}-${hash}`;
  const cached = await readAll(bucket, key);
  if (cached) {
    return ok({
      bytes: new Uint8Array(await cached.arrayBuffer()),
      contentType: cached.httpMetadata?.contentType ?? "image/jpeg",
    });
  }
  const source = await readAll(bucket, version.key);
  if (!source) return NOT_FOUND;
  let rendered: { bytes: Uint8Array; type: string };
  try {
    rendered = renderLabelled(new Uint8Array(await source.arrayBuffer()), spec);
  } catch {
    return fail("unprocessable", "This version cannot be labelled (its image could not be read).");
  }
  await bucket.put(key, rendered.bytes, { httpMetadata: { contentType: rendered.type } });
  return ok({ bytes: rendered.bytes, contentType: rendered.type });
}
