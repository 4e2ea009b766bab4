import { activeMember, reachableFolder, reachablePhoto } from "@db/access";
import { type Folder, folders, type Photo, photos, teamMembers } from "@db/schema";
import type { Deps } from "@workers/services/request-deps";
import { and, eq, isNull } from "drizzle-orm";

// Who may read and stage in a folder or a photo (docs/decisions/0280-shared-team-listings.md; the rule itself, as
// SQL, is db/access.ts). Each answer is the owner scope to read the row under: `ownerId` is the user whose rows they
// are (the uploader of a team listing's photo), which every library, version and job read already filters by, so a
// route asks here once and passes `ownerId` on. null: not found, exactly like an id that does not exist (404).

export interface Scope {
  /** The user whose rows these are: pass it to the reads that filter by owner. */
  ownerId: string;
  /** The team whose listing it is, or null for a personal folder. */
  teamId: string | null;
}

/** The folder, when the user may reach it: their personal folder, or a listing of a team they are an active member of. */
export async function folderAccess(
  db: Deps["db"],
  userId: string,
  folderId: string,
): Promise<(Scope & { folder: Folder }) | null> {
  const folder = await db
    .select()
    .from(folders)
    .where(and(eq(folders.id, folderId), reachableFolder(userId)))
    .get();
  return folder ? { ownerId: folder.userId, teamId: folder.teamId, folder } : null;
}

/**
 * The photo, with its owner scope, when the user may reach it (see folderAccess); a removed member's is null. One
 * read: a caller that shows the photo needs no second one. `folderHasLook`: its folder names a listing look (the
 * look itself is looksOf in workers/services/jobs/looks.ts; a job asks for it only then).
 */
export async function photoAccess(
  db: Deps["db"],
  userId: string,
  photoId: string,
): Promise<(Scope & { photo: Photo; folderHasLook: boolean }) | null> {
  const row = await db
    .select({ photo: photos, teamId: folders.teamId, lookVersionId: folders.lookVersionId })
    .from(photos)
    .leftJoin(folders, eq(folders.id, photos.folderId))
    .where(and(eq(photos.id, photoId), reachablePhoto(userId)))
    .get();
  if (!row) return null;
  return {
    ownerId: row.photo.userId,
    teamId: row.teamId ?? null,
    photo: row.photo,
    folderHasLook: !!row.lookVersionId,
  };
}

/** A photo the user may reach, as photoAccess read it. */
export type PhotoAccess = NonNullable<Awaited<ReturnType<typeof photoAccess>>>;

/** The user's role in the team, when an active member; null otherwise. */
export async function teamRole(db: Deps["db"], userId: string, teamId: string) {
  const row = await db
    .select({ role: teamMembers.role })
    .from(teamMembers)
    .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, userId), isNull(teamMembers.removedAt)))
    .get();
  return row?.role ?? null;
}

export { activeMember, reachableFolder, reachablePhoto };
