import { type Photo, photos, photoVersions } from "@db/schema";
import { getVersion, userObject } from "@workers/objects/client";
import type { Deps } from "@workers/services/deps";
import { and, eq } from "drizzle-orm";
import { fail, ok, type Result } from "~/shared/result";
import type { StoredBytes } from "~/shared/version-bytes";
import { REFUSED_NOT_DOWNLOADED } from "~/shared/version-view";

// The version a photo shows (in the grid, the listing pack and the original page): any of its versions may be
// chosen; the others stay as versions.

type Db = Deps["db"];

/** Makes one of the photo's versions the one it shows (the others stay as versions). */
export async function chooseVersion(
  db: Db,
  userId: string,
  photoId: string,
  versionId: string,
  now: number,
): Promise<Result<{ versionId: string }>> {
  const version = await getVersion(db, userId, photoId, versionId);
  if (!version) return fail("not_found", "That version of the photo was not found.");
  // A refused result was not charged: it is kept for a credit (keepRefusedVersion), never chosen for free.
  if (version.structureVerdict === "refused") return fail("conflict", REFUSED_NOT_DOWNLOADED);
  await db
    .update(photos)
    .set({
      processedKey: version.key,
      processedThumbKey: version.thumbKey,
      processedContentType: version.contentType,
      processedAt: now,
    })
    .where(and(eq(photos.id, photoId), eq(photos.userId, userId)));
  return ok({ versionId: version.id });
}

/**
 * The owner's photo with what the byte rule reads of the image it shows (app/shared/version-bytes.ts): its key, its
 * thumbnail and the verdict of the version behind it, in one read; null `shown` while it shows its original.
 */
export async function photoWithShown(
  db: Db,
  userId: string,
  photoId: string,
): Promise<{ photo: Photo; shown: StoredBytes | null } | undefined> {
  const row = await db
    .select({ photo: photos, verdict: photoVersions.structureVerdict })
    .from(photos)
    .leftJoin(photoVersions, and(eq(photoVersions.photoId, photos.id), eq(photoVersions.key, photos.processedKey)))
    .where(and(eq(photos.id, photoId), eq(photos.userId, userId)))
    .get();
  if (!row) return undefined;
  const { photo } = row;
  const shown = photo.processedKey
    ? { key: photo.processedKey, thumbKey: photo.processedThumbKey ?? photo.thumbKey, structureVerdict: row.verdict }
    : null;
  return { photo, shown };
}

/** The version the photo shows now (its processed image), if any. */
export async function shownVersionId(db: Db, userId: string, photoId: string): Promise<string | null> {
  const row = await db
    .select({ id: photoVersions.id })
    .from(photoVersions)
    .innerJoin(photos, eq(photos.id, photoVersions.photoId))
    .where(
      and(eq(photoVersions.photoId, photoId), eq(photos.userId, userId), eq(photos.processedKey, photoVersions.key)),
    )
    .get();
  return row?.id ?? null;
}

/**
 * "Keep it anyway": a result the structure check refused (it was not charged) becomes the photo's shown version for
 * one credit, through the user's object (docs/decisions/0162-results-true-to-the-room.md).
 */
export async function keepRefusedVersion(
  deps: Pick<Deps, "env">,
  userId: string,
  photoId: string,
  versionId: string,
): Promise<Result<{ versionId: string; credits: number }>> {
  const kept = await userObject(deps.env, userId).keepRefused(userId, photoId, versionId);
  if (!kept.ok)
    return {
      ...fail(kept.code, kept.error),
      ...(kept.code === "insufficient_credits" ? { credits: kept.balance } : {}),
    } as Result<{ versionId: string; credits: number }>;
  return ok({ versionId: kept.versionId, credits: kept.balance });
}
