import { type Photo, photos, photoVersions, users } from "@db/schema";
import { chosenVersionValues, getVersion, userObject } from "@workers/objects/client";
import type { Deps } from "@workers/services/request-deps";
import { and, eq, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import { fail, ok, type Result } from "~/shared/result";
import type { StoredBytes } from "~/shared/version-bytes";
import {
  CHECK_WALLS,
  REFUSED_NOT_DOWNLOADED,
  RETURNED_NOT_FOR_MLS,
  type ReturnedTo,
  VERSION_NOT_FOUND,
} from "~/shared/version-view";

// The version a photo shows (in the grid, the listing pack and the original page): any of its versions may be
// chosen; the others stay as versions.

type Db = Deps["db"];

/** A version of the user's photo, and all of a photo's versions, as the user's object wrote them. */
export { getVersion, listVersions } from "@workers/objects/client";

/** Makes one of the photo's versions the one it shows (the others stay as versions). */
export async function chooseVersion(
  db: Db,
  userId: string,
  photoId: string,
  versionId: string,
  now: number,
): Promise<Result<{ versionId: string }>> {
  const version = await getVersion(db, userId, photoId, versionId);
  if (!version) return fail("not_found", VERSION_NOT_FOUND);
  // A refused result was not charged: it is kept for a credit (keepRefusedVersion), never chosen for free.
  if (version.structureVerdict === "refused") return fail("conflict", REFUSED_NOT_DOWNLOADED);
  await db
    .update(photos)
    .set(chosenVersionValues(version, now))
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

/** Why a confirmation is refused: only a flagged result asks for one. */
export const ONLY_FLAGGED = `Only a result marked “${CHECK_WALLS}” asks for this confirmation.`;

/**
 * "I checked the walls and windows" (docs/decisions/0215-flag-when-unsure.md): the owner of a result the structure
 * check flagged says they compared it with the original, and from then on it may go into an MLS download, an original
 * page and a listing pack. Stored with the version: when, and by whom. Said again, it keeps the first confirmation.
 * Another user's version, or one of another photo, is not found.
 */
export async function confirmStructure(
  db: Db,
  userId: string,
  photoId: string,
  versionId: string,
  now: number,
): Promise<Result<{ versionId: string; confirmedAt: number }>> {
  const version = await getVersion(db, userId, photoId, versionId);
  if (!version) return fail("not_found", VERSION_NOT_FOUND);
  // Returned ("This result changed the room"): its owner said the walls and windows are not the room's (ADR 0263).
  if (version.structureReturnedAt !== null) return fail("conflict", RETURNED_NOT_FOR_MLS);
  if (version.structureVerdict !== "flagged") return fail("conflict", ONLY_FLAGGED);
  if (version.structureConfirmedAt !== null) return ok({ versionId, confirmedAt: version.structureConfirmedAt });
  const [set] = await db
    .update(photoVersions)
    .set({ structureConfirmedAt: now, structureConfirmedBy: userId })
    .where(
      and(
        eq(photoVersions.id, versionId),
        eq(photoVersions.photoId, photoId),
        eq(photoVersions.userId, userId),
        isNull(photoVersions.structureConfirmedAt),
        isNull(photoVersions.structureReturnedAt),
      ),
    )
    .returning({ at: photoVersions.structureConfirmedAt });
  if (set?.at != null) return ok({ versionId, confirmedAt: set.at });
  // Another confirmation got there first, or a return (or the version went meanwhile): answer with what is stored.
  const again = await getVersion(db, userId, photoId, versionId);
  if (!again) return fail("not_found", VERSION_NOT_FOUND);
  if (again.structureReturnedAt !== null) return fail("conflict", RETURNED_NOT_FOR_MLS);
  return ok({ versionId, confirmedAt: again.structureConfirmedAt ?? now });
}

/** Why a version has no change map to give: the check did not run on it, or it predates maps (ADR 0260). */
export const NO_CHANGE_MAP = "This result has no change map: the structure check did not run on it.";

/**
 * The R2 key of a version's change map (docs/decisions/0260-change-map-with-the-version.md), for its owner only:
 * another user's version, or one of another photo, is not found, as one that does not exist. Reads only.
 */
export async function changeMapKey(
  db: Db,
  userId: string,
  photoId: string,
  versionId: string,
): Promise<Result<{ key: string }>> {
  const version = await getVersion(db, userId, photoId, versionId);
  if (!version) return fail("not_found", VERSION_NOT_FOUND);
  if (!version.structureMapKey) return fail("not_found", NO_CHANGE_MAP);
  return ok({ key: version.structureMapKey });
}

/** The body of "This result changed the room": the owner's consent to keep the pair (a checkbox; false when left out). */
export const ChangedRoomBody = z.object({ keepPair: z.boolean().optional() });

/**
 * "This result changed the room" (docs/decisions/0261-this-result-changed-the-room.md): a result the check passed or
 * marked gives its credit back, through the user's object; `keepPair` is the owner's consent to keep the pair as a
 * candidate for the check's labelled set. A team job's credit goes back to the team's pool (`returnedTo: "team"`,
 * `pool` its balance after); `credits` is always the user's own balance.
 */
export async function returnChangedRoom(
  deps: Pick<Deps, "env">,
  userId: string,
  photoId: string,
  versionId: string,
  keepPair: boolean,
): Promise<Result<{ versionId: string; credits: number; kept: boolean; returnedTo: ReturnedTo; pool: number | null }>> {
  const r = await userObject(deps.env, userId).returnChangedRoom(userId, photoId, versionId, keepPair);
  if (!r.ok) return fail(r.code, r.error, r.retryAfterSeconds ? { retryAfterSeconds: r.retryAfterSeconds } : {});
  return ok({ versionId: r.versionId, credits: r.balance, kept: r.kept, returnedTo: r.returnedTo, pool: r.pool });
}

/**
 * The names of the users who made these versions (a team listing's versions say who made each, ADR 0280), read as one
 * JSON array so the statement binds one value however many there are.
 */
export async function makerNames(db: Db, userIds: readonly string[]): Promise<Map<string, string>> {
  const ids = [...new Set(userIds)];
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: users.id, name: users.name })
    .from(users)
    .where(sql`${users.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`)
    .all();
  return new Map(rows.map((r) => [r.id, r.name ?? ""]));
}
