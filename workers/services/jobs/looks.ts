import type { Database } from "@db/client";
import { inList } from "@db/lists";
import { folders, photos, photoVersions, type StyleReference } from "@db/schema";
import { and, eq, isNull } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { DEFAULT_LOOK_STRENGTH } from "~/shared/listing-look";

// The look a staging job carries (docs/decisions/0190-one-look-for-a-listing.md): its folder's, read when the job is
// asked for. Setting and clearing a look is workers/services/listing-look.ts; this half is apart from it so that a
// job's way in does not load the library's writes (issue 48, the job files).

/** The photos behind looks: another name for the photos table in the same query. */
const lookPhotos = alias(photos, "look_photos");

/**
 * The look each of these photos of the user's is staged with now: its folder's, when the folder has one whose
 * version is a staged one and whose photo is out of the trash. A team listing's look is every member's: the folder
 * and the look's version may be another member's. Photos without one are not in the map.
 */
export async function looksOf(db: Database, userId: string, photoIds: string[]): Promise<Map<string, StyleReference>> {
  const looks = new Map<string, StyleReference>();
  // The ids as one parameter (db/lists.ts): D1 binds at most 100 values a statement.
  const rows = await db
    .select({
      photoId: photos.id,
      refPhotoId: photoVersions.photoId,
      refVersionId: photoVersions.id,
      strength: folders.lookStrength,
    })
    .from(photos)
    // The photo's folder, whoever made it: a team listing's look reaches every member's photos in it (ADR 0280).
    .innerJoin(folders, eq(folders.id, photos.folderId))
    .innerJoin(photoVersions, and(eq(photoVersions.id, folders.lookVersionId), eq(photoVersions.kind, "stage")))
    // The look is a staged version (its uploader's row, whoever that is) of a photo out of the trash.
    .innerJoin(
      lookPhotos,
      and(
        eq(lookPhotos.id, photoVersions.photoId),
        eq(lookPhotos.userId, photoVersions.userId),
        isNull(lookPhotos.trashedAt),
      ),
    )
    .where(and(eq(photos.userId, userId), inList(photos.id, photoIds)))
    .all();
  for (const r of rows) {
    looks.set(r.photoId, {
      photoId: r.refPhotoId,
      versionId: r.refVersionId,
      strength: r.strength ?? DEFAULT_LOOK_STRENGTH,
    });
  }
  return looks;
}
