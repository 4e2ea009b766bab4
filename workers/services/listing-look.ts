import { reachableFolder } from "@db/access";
import type { Database } from "@db/client";
import { folders, photos, photoVersions } from "@db/schema";
import { getVersion } from "@workers/objects/client";
import { and, eq, isNotNull, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { z } from "zod";
import {
  DEFAULT_LOOK_STRENGTH,
  LOOK_NEEDS_FOLDER,
  LOOK_NOT_REFUSED,
  LOOK_NOT_SET,
  LOOK_NOT_STAGED,
  LOOK_STRENGTH_MESSAGE,
  type LookView,
  lookStrengthOf,
  type PhotoListing,
} from "~/shared/listing-look";
import { fail, NOT_FOUND, ok, type Result } from "~/shared/result";
import { VERSION_NOT_FOUND } from "~/shared/version-view";
import { getFolder, getPhoto } from "./library";

// One look across a listing (issue 33, part 4; docs/decisions/0190-one-look-for-a-listing.md). A folder may name a
// staged version of the user's as its look: every staging of the folder's photos asked for while it is set (a
// single job, a batch, a re-roll, the public API) carries it in its parameters as the provider's style reference
// (read by looksOf, workers/services/jobs/looks.ts), and the user's object sends it
// (workers/objects/user/jobs/stage-call.ts). A look whose photo is in the trash is not used; one whose version is
// deleted for good is cleared by the database (migrations/0017, ON DELETE SET NULL).

type Db = Database;

/** The photos behind looks: another name for the photos table in the same query. */
const lookPhotos = alias(photos, "look_photos");

/** The JSON body of POST /api/photos/:id/versions/:versionId/look: the strength, one of the named steps. */
export const LookRequest = z.object({
  strength: z
    .number(LOOK_STRENGTH_MESSAGE)
    .refine((v) => lookStrengthOf(v) !== null, LOOK_STRENGTH_MESSAGE)
    .optional(),
});

function viewOf(row: {
  folderId: string;
  versionId: string;
  photoId: string;
  strength: number | null;
  trashedAt: number | null;
}): LookView {
  return {
    folderId: row.folderId,
    versionId: row.versionId,
    photoId: row.photoId,
    strength: row.strength ?? DEFAULT_LOOK_STRENGTH,
    trashed: row.trashedAt !== null,
    thumbUrl: `/api/photos/${row.photoId}/versions/${row.versionId}/thumb`,
  };
}

/** A folder's look as the pages show it, or null when it has none (or the folder is not the user's). */
export async function folderLook(db: Db, userId: string, folderId: string): Promise<LookView | null> {
  const row = await db
    .select({
      folderId: folders.id,
      versionId: photoVersions.id,
      photoId: photoVersions.photoId,
      strength: folders.lookStrength,
      trashedAt: lookPhotos.trashedAt,
    })
    .from(folders)
    .innerJoin(photoVersions, and(eq(photoVersions.id, folders.lookVersionId), eq(photoVersions.userId, userId)))
    .innerJoin(lookPhotos, eq(lookPhotos.id, photoVersions.photoId))
    .where(and(eq(folders.id, folderId), eq(folders.userId, userId)))
    .get();
  return row ? viewOf(row) : null;
}

/** The listing a photo is in (its folder) and the version the folder's look names, for its versions list. */
export async function photoListing(
  db: Db,
  userId: string,
  photo: { folderId: string | null },
): Promise<PhotoListing | null> {
  if (!photo.folderId) return null;
  const folder = await getFolder(db, userId, photo.folderId);
  if (!folder) return null;
  return { folderId: folder.id, lookVersionId: folder.lookVersionId, strength: folder.lookStrength };
}

/**
 * "Use this look for the listing": makes a staged version the look of its photo's folder. The photo must be the
 * user's, out of the trash and in a folder; the version one of its staged versions, not one the structure check
 * refused (unless it was kept). The strength is the one asked for, else the folder's current one, else Close.
 */
export async function useAsLook(
  db: Db,
  userId: string,
  photoId: string,
  versionId: string,
  strength?: number,
): Promise<Result<{ look: LookView }>> {
  const photo = await getPhoto(db, userId, photoId);
  if (!photo || photo.trashedAt !== null) return NOT_FOUND;
  const version = await getVersion(db, userId, photo.id, versionId);
  if (!version) return fail("not_found", VERSION_NOT_FOUND);
  if (version.kind !== "stage") return fail("invalid", LOOK_NOT_STAGED);
  // Refused by the structure check and not kept: not charged, so not sent with every later staging either.
  if (version.structureVerdict === "refused") return fail("conflict", LOOK_NOT_REFUSED);
  if (!photo.folderId) return fail("invalid", LOOK_NEEDS_FOLDER);
  if (strength !== undefined && lookStrengthOf(strength) === null) return fail("invalid", LOOK_STRENGTH_MESSAGE);
  // One statement: the version must still exist as it is written (a purge in between would break the reference).
  const res = await db
    .update(folders)
    .set({
      lookVersionId: version.id,
      lookStrength: strength ?? sql`coalesce(${folders.lookStrength}, ${DEFAULT_LOOK_STRENGTH})`,
    })
    .where(
      and(
        eq(folders.id, photo.folderId),
        eq(folders.userId, userId),
        reachableFolder(userId),
        sql`exists (select 1 from ${photoVersions} where ${photoVersions.id} = ${version.id})`,
      ),
    )
    .run();
  if (res.meta.changes !== 1) return NOT_FOUND;
  const look = await folderLook(db, userId, photo.folderId);
  return look ? ok({ look }) : NOT_FOUND;
}

/** Clears a folder's look: stagings asked for from now on are sent without it. */
export async function clearLook(db: Db, userId: string, folderId: string): Promise<boolean> {
  const res = await db
    .update(folders)
    .set({ lookVersionId: null, lookStrength: null })
    .where(and(eq(folders.id, folderId), eq(folders.userId, userId), reachableFolder(userId)))
    .run();
  return res.meta.changes === 1;
}

/** Changes how closely the folder's look is followed (one of the named steps). */
export async function setLookStrength(
  db: Db,
  userId: string,
  folderId: string,
  value: unknown,
): Promise<Result<{ strength: number }>> {
  const strength = lookStrengthOf(value);
  if (strength === null) return fail("invalid", LOOK_STRENGTH_MESSAGE);
  const res = await db
    .update(folders)
    .set({ lookStrength: strength })
    .where(
      and(
        eq(folders.id, folderId),
        eq(folders.userId, userId),
        reachableFolder(userId),
        isNotNull(folders.lookVersionId),
      ),
    )
    .run();
  if (res.meta.changes === 1) return ok({ strength });
  return (await getFolder(db, userId, folderId)) ? fail("conflict", LOOK_NOT_SET) : NOT_FOUND;
}
