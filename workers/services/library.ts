import { inTeamListing, reachableFolder, reachablePhoto } from "@db/access";
import type { Database } from "@db/client";
import { type Folder, folders, type Photo, photos, photoVersions } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { deletePrefix, photoPrefix } from "@workers/lib/photo-storage";
import { folderAccess, photoAccess } from "@workers/services/teams/access";
import { and, asc, desc, eq, isNotNull, isNull, lt, lte, not, or, type Placeholder, type SQL, sql } from "drizzle-orm";
import type { LibraryView, PhotoCard } from "~/shared/library-view";
import { displayName } from "~/shared/text";
import { DEFAULT_FOLDER_NAME, PAGE_SIZE } from "~/shared/upload-rules";
import type { UserRef } from "./sessions";

// The photo library: folders, the grid's pages, moves, trash and purge. Every
// function takes the owner's id and filters by it, so another user's photo or
// folder is simply not found.

export type { LibraryView };

export const TRASH_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

export type { Photo, PhotoCard };

export function toCard(p: Photo): PhotoCard {
  return {
    id: p.id,
    name: p.name,
    createdAt: p.createdAt,
    trashedAt: p.trashedAt,
    folderId: p.folderId,
    processed: p.processedKey !== null,
    // The version in the address lets the browser cache each thumbnail for good.
    thumbUrl: `/api/photos/${p.id}/thumb?v=${p.processedAt ?? 0}`,
    thumbWidth: p.thumbWidth,
    thumbHeight: p.thumbHeight,
  };
}

export function encodeCursor(p: { createdAt: number; id: string }): string {
  return `${p.createdAt}-${p.id}`;
}

export function decodeCursor(value: string | null | undefined): { createdAt: number; id: string } | null {
  const m = value ? /^(\d{1,15})-([a-z0-9]{1,64})$/.exec(value) : null;
  return m ? { createdAt: Number(m[1]), id: m[2]! } : null;
}

/**
 * A view as a query's filter: a folder's id may be a placeholder, bound when a prepared statement runs
 * (docs/decisions/0144-dashboard-reads-with-the-session.md).
 */
export type ViewFilter = Exclude<LibraryView, { kind: "folder" }> | { kind: "folder"; folderId: string | Placeholder };

/** Where a page of the grid starts: after this photo (values, or placeholders of a prepared statement). */
export interface PageAfter {
  createdAt: number | Placeholder;
  id: string | Placeholder;
}

export function viewFilter(userId: UserRef, view: ViewFilter): SQL {
  // A team listing's photos are every active member's (ADR 0280); the user's own, once they may no longer reach one
  // (removed from its team), leave their grid too.
  const reachable = reachablePhoto(userId);
  const own = and(eq(photos.userId, userId), reachable)!;
  switch (view.kind) {
    case "all":
      return and(own, isNull(photos.trashedAt))!;
    case "unassigned":
      return and(own, isNull(photos.trashedAt), isNull(photos.folderId))!;
    case "trash":
      // A photo whose deletion for good has begun is no longer offered back (ADR 0346).
      return and(own, isNotNull(photos.trashedAt), isNull(photos.purgingAt))!;
    case "folder":
      return and(reachable, isNull(photos.trashedAt), eq(photos.folderId, view.folderId))!;
  }
}

/** The query for one page of the grid (one row more than the page, to know whether another follows). */
export function photoPageQuery(
  db: Database,
  userId: UserRef,
  view: ViewFilter,
  opts: { limit?: number; after?: PageAfter | null } = {},
) {
  const { after } = opts;
  const where = after
    ? and(
        viewFilter(userId, view),
        or(lt(photos.createdAt, after.createdAt), and(eq(photos.createdAt, after.createdAt), lt(photos.id, after.id))),
      )
    : viewFilter(userId, view);
  return db
    .select()
    .from(photos)
    .where(where)
    .orderBy(desc(photos.createdAt), desc(photos.id))
    .limit(pageLimit(opts.limit) + 1);
}

function pageLimit(limit: number | undefined): number {
  return Math.min(Math.max(limit ?? PAGE_SIZE, 1), 200);
}

/** The rows of photoPageQuery as the grid's page. */
export function photoPage(rows: Photo[], limit?: number): { photos: PhotoCard[]; nextCursor: string | null } {
  const size = pageLimit(limit);
  const page = rows.slice(0, size);
  const last = page[page.length - 1];
  return { photos: page.map(toCard), nextCursor: rows.length > size && last ? encodeCursor(last) : null };
}

/** One page of the grid, newest first; `nextCursor` continues after its last photo. */
export async function listPhotos(
  db: Database,
  userId: string,
  view: LibraryView,
  opts: { cursor?: string | null; limit?: number } = {},
): Promise<{ photos: PhotoCard[]; nextCursor: string | null }> {
  const after = decodeCursor(opts.cursor);
  return photoPage(await photoPageQuery(db, userId, view, { limit: opts.limit, after }).all(), opts.limit);
}

export async function getPhoto(db: Database, userId: string, photoId: string): Promise<Photo | undefined> {
  return db
    .select()
    .from(photos)
    .where(and(eq(photos.id, photoId), eq(photos.userId, userId)))
    .get();
}

/** Newest first: a new folder appears at the top. The user's folders and their teams' listings (with the team's name). */
export function foldersQuery(db: Database, userId: UserRef) {
  return db
    .select({
      id: folders.id,
      name: folders.name,
      createdAt: folders.createdAt,
      teamName: sql<string | null>`(SELECT t.name FROM teams t WHERE t.id = ${folders.teamId})`.as("team_name"),
    })
    .from(folders)
    .where(reachableFolder(userId))
    .orderBy(desc(folders.createdAt), desc(folders.id));
}

export async function listFolders(db: Database, userId: string): Promise<Pick<Folder, "id" | "name">[]> {
  return (await foldersQuery(db, userId).all()).map(({ id, name }) => ({ id, name }));
}

/** One folder the user may reach, theirs or a team listing's (a list of at most one row): the library's view of it. */
export function folderQuery(db: Database, userId: UserRef, folderId: string | Placeholder) {
  return db
    .select()
    .from(folders)
    .where(and(eq(folders.id, folderId), reachableFolder(userId)))
    .limit(1);
}

/** One of the user's own folders: what the owner's actions (rename, delete, listing details) act on. */
export async function getFolder(db: Database, userId: string, folderId: string): Promise<Folder | undefined> {
  return db
    .select()
    .from(folders)
    .where(and(eq(folders.id, folderId), eq(folders.userId, userId), reachableFolder(userId)))
    .get();
}

export function cleanFolderName(name: string | null | undefined): string {
  return displayName(name ?? "", DEFAULT_FOLDER_NAME);
}

export async function createFolder(
  db: Database,
  userId: string,
  name: string,
  now = Date.now(),
  /** A team's listing (the caller checked the membership); null: the user's personal folder. */
  teamId: string | null = null,
): Promise<Folder> {
  const folder = folderRow(userId, name, now, teamId);
  await db.insert(folders).values(folder);
  return folder;
}

/** A new folder's row, not yet written. */
export function folderRow(userId: string, name: string, now: number, teamId: string | null): Folder {
  return {
    id: randomToken(),
    userId,
    name: cleanFolderName(name),
    createdAt: now,
    listingAddress: null,
    mlsNumber: null,
    lookVersionId: null,
    lookStrength: null,
    mlsProfile: null,
    listingStatus: "active",
    soldAt: null,
    originalsCloseDays: null,
    originalsCloseAt: null,
    teamId,
  };
}

/**
 * Deletes one of the user's own folders; its photos go to Unassigned Photos. A team's listing is refused ("team"): its
 * photos are the team's, and deleting it would hand each back to its uploader (ADR 0280: nothing moves a listing out).
 */
export async function deleteFolder(
  db: Database,
  userId: string,
  folderId: string,
): Promise<"deleted" | "not-found" | "team"> {
  const folder = await getFolder(db, userId, folderId);
  if (!folder) return "not-found";
  if (folder.teamId !== null) return "team";
  await db.batch([
    db
      .update(photos)
      .set({ folderId: null })
      .where(and(eq(photos.userId, userId), eq(photos.folderId, folderId))),
    db.delete(folders).where(and(eq(folders.id, folderId), eq(folders.userId, userId), isNull(folders.teamId))),
  ]);
  return "deleted";
}

/** Moves a live photo into one of the owner's folders, or out of any (folderId null). */
export async function movePhoto(
  db: Database,
  userId: string,
  photoId: string,
  folderId: string | null,
): Promise<"moved" | "not-found"> {
  // Into their own folder or a team listing they are a member of; a team listing's photo stays the team's.
  if (folderId !== null && !(await folderAccess(db, userId, folderId))) return "not-found";
  const res = await db
    .update(photos)
    .set({ folderId })
    .where(
      and(
        eq(photos.id, photoId),
        eq(photos.userId, userId),
        isNull(photos.trashedAt),
        not(inTeamListing()),
        // Still there: a folder deleted since it was checked is "not found", not a failed foreign key (a 500).
        folderId === null ? undefined : sql`EXISTS (SELECT 1 FROM folders f WHERE f.id = ${folderId})`,
      ),
    )
    .run();
  return res.meta.changes === 1 ? "moved" : "not-found";
}

export async function trashPhoto(db: Database, userId: string, photoId: string, now = Date.now()): Promise<boolean> {
  const res = await db
    .update(photos)
    .set({ trashedAt: now })
    .where(and(eq(photos.id, photoId), eq(photos.userId, userId), reachablePhoto(userId), isNull(photos.trashedAt)))
    .run();
  return res.meta.changes === 1;
}

export async function restorePhoto(db: Database, userId: string, photoId: string): Promise<boolean> {
  const res = await db
    .update(photos)
    .set({ trashedAt: null })
    .where(
      and(
        eq(photos.id, photoId),
        eq(photos.userId, userId),
        reachablePhoto(userId),
        isNotNull(photos.trashedAt),
        // Its deletion for good has begun: its bytes may be gone already.
        isNull(photos.purgingAt),
      ),
    )
    .run();
  return res.meta.changes === 1;
}

/** A claim older than this was left by a deletion cut short; the daily purge finishes it. */
export const STALE_PURGE_MS = 60 * 60 * 1000;

/**
 * Deletes trashed photos for good (ADR 0346): each row is claimed first, then its bytes go, then the row, so a
 * restore that lands meanwhile is refused instead of bringing back a photo without bytes, a photo restored before
 * its claim keeps everything, and a failure half-way leaves a claimed row to finish rather than bytes nobody can
 * find.
 */
async function destroy(
  db: Database,
  bucket: R2Bucket,
  rows: Pick<Photo, "id" | "userId">[],
  now = Date.now(),
): Promise<number> {
  let deleted = 0;
  for (const row of rows) {
    const claimed = await db
      .update(photos)
      .set({ purgingAt: sql`coalesce(${photos.purgingAt}, ${now})` })
      .where(and(eq(photos.id, row.id), eq(photos.userId, row.userId), isNotNull(photos.trashedAt)))
      .run();
    // Restored (or already gone) since it was chosen: nothing of it is touched.
    if (claimed.meta.changes !== 1) continue;
    const prefix = photoPrefix(row.userId, row.id);
    await deletePrefix(bucket, prefix);
    // A team job's results sit under the team's prefix (ADR 0280): they go with the photo too.
    const made = await db
      .select({ key: photoVersions.key, thumbKey: photoVersions.thumbKey, mapKey: photoVersions.structureMapKey })
      .from(photoVersions)
      .where(eq(photoVersions.photoId, row.id))
      .all();
    // Their change maps too (ADR 0260: deleted with the version).
    const elsewhere = made
      .flatMap((v) => [v.key, v.thumbKey, v.mapKey ?? ""])
      .filter((key) => key !== "" && !key.startsWith(prefix));
    if (elsewhere.length > 0) await bucket.delete(elsewhere);
    // Counted by the rows it returns: D1's `changes` also counts the versions and jobs that go with it (ON DELETE
    // CASCADE), which made a staged photo's deletion read as "not found".
    const gone = await db
      .delete(photos)
      .where(and(eq(photos.id, row.id), eq(photos.userId, row.userId), isNotNull(photos.trashedAt)))
      .returning({ id: photos.id })
      .all();
    deleted += gone.length;
  }
  return deleted;
}

export async function deletePhotoForever(
  db: Database,
  bucket: R2Bucket,
  userId: string,
  photoId: string,
): Promise<boolean> {
  const row = await getPhoto(db, userId, photoId);
  if (!row || row.trashedAt === null || !(await photoAccess(db, userId, photoId))) return false;
  return (await destroy(db, bucket, [row])) === 1;
}

export async function emptyTrash(db: Database, bucket: R2Bucket, userId: string): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await db
      .select({ id: photos.id, userId: photos.userId })
      .from(photos)
      // A removed member's trashed uploads in a team listing are the team's, left to the 30-day purge.
      .where(and(eq(photos.userId, userId), reachablePhoto(userId), isNotNull(photos.trashedAt)))
      .limit(100)
      .all();
    if (rows.length === 0) return total;
    total += await destroy(db, bucket, rows);
  }
}

/** Daily cron: deletes photos that have been in the trash for 30 days, and finishes deletions cut short. */
export async function purgeTrash(db: Database, bucket: R2Bucket, now = Date.now(), limit = 500): Promise<number> {
  const rows = await db
    .select({ id: photos.id, userId: photos.userId })
    .from(photos)
    .where(
      and(
        isNotNull(photos.trashedAt),
        or(lte(photos.trashedAt, now - TRASH_RETENTION_MS), lte(photos.purgingAt, now - STALE_PURGE_MS)),
      ),
    )
    .orderBy(asc(photos.trashedAt))
    .limit(limit)
    .all();
  return destroy(db, bucket, rows, now);
}
