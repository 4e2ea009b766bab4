import { insertUnderCaps } from "@db/capped";
import type { Database } from "@db/client";
import { type Folder, folders } from "@db/schema";
import { folderRow } from "@workers/services/library";
import type { Deps } from "@workers/services/request-deps";
import { and, count, eq, isNull } from "drizzle-orm";
import { fail, NOT_FOUND, ok, type Result } from "~/shared/result";
import { managesTeam } from "~/shared/teams";
import { teamRole } from "./access";

// Shared listings (issue 47 item 4, docs/decisions/0280-shared-team-listings.md): any active member makes one for
// their team; only the team's owner or a team admin moves a personal folder (with its photos) into the team. Moving
// one back out is not offered: a team's listing and its photos stay the team's.

/** Most folders a person keeps, and most listings a team keeps: the dashboard reads them all in one statement. */
export const MAX_FOLDERS = 1000;
export const TOO_MANY_FOLDERS = `You have ${MAX_FOLDERS} folders, the most there can be. Delete one you no longer need first.`;
export const TOO_MANY_TEAM_LISTINGS = `This team has ${MAX_FOLDERS} listings, the most there can be.`;

/**
 * A folder (a team's listing when `teamId`), held to MAX_FOLDERS: counted in the batch that inserts, so folders made at once cannot all pass a
 * count read before any of them. The pages' and the team's ways to make a folder use this one.
 */
export async function createFolderWithin(
  db: Database,
  userId: string,
  name: string,
  teamId: string | null = null,
): Promise<Result<{ folder: Folder }>> {
  const folder = folderRow(userId, name, Date.now(), teamId);
  const scope = teamId === null ? and(eq(folders.userId, userId), isNull(folders.teamId)) : eq(folders.teamId, teamId);
  const over = await insertUnderCaps(
    db,
    db.insert(folders).values(folder),
    [{ count: db.select({ n: count() }).from(folders).where(scope), max: MAX_FOLDERS }],
    () => db.delete(folders).where(eq(folders.id, folder.id)),
  );
  if (over !== null) return fail("conflict", teamId === null ? TOO_MANY_FOLDERS : TOO_MANY_TEAM_LISTINGS);
  return ok({ folder });
}

export const TEAM_FOLDER_MOVE_ADMIN_ONLY = "Only the team's owner or a team admin can move a folder into the team.";

/** A new folder in the team's listings; a team the user is not an active member of is not found. */
export async function createTeamFolder(db: Deps["db"], userId: string, teamId: string, name: string) {
  if (!(await teamRole(db, userId, teamId))) return NOT_FOUND;
  return createFolderWithin(db, userId, name, teamId);
}

/** Moves one of the user's personal folders, with every photo in it, into the team's listings. */
export async function moveFolderToTeam(
  db: Deps["db"],
  userId: string,
  folderId: string,
  teamId: string,
): Promise<Result<{ name: string }>> {
  const role = await teamRole(db, userId, teamId);
  if (!role) return NOT_FOUND;
  const folder = await db
    .select({ name: folders.name })
    .from(folders)
    .where(and(eq(folders.id, folderId), eq(folders.userId, userId), isNull(folders.teamId)))
    .get();
  if (!folder) return NOT_FOUND;
  if (!managesTeam(role)) return fail("forbidden", TEAM_FOLDER_MOVE_ADMIN_ONLY);
  const res = await db
    .update(folders)
    .set({ teamId })
    .where(and(eq(folders.id, folderId), eq(folders.userId, userId), isNull(folders.teamId)))
    .run();
  return res.meta.changes === 1 ? ok({ name: folder.name }) : NOT_FOUND;
}
