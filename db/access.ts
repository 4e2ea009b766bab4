import { type Placeholder, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import { folders, photos } from "./schema";

// Who may reach a folder or a photo (issue 47 item 4, docs/decisions/0280-shared-team-listings.md), as SQL, so every
// query that scopes a library read, and the user's object checking paid work in its own turn, ask the same rule:
// - a personal folder (no team) and the photos in it, or in no folder: only the user whose rows they are;
// - a team's listing and every photo in it, whoever uploaded it: every active member of that team, and nobody else
//   (its uploader too loses it once removed; an owner who was never a member, a team's runner, keeps its own).
// workers/services/teams/access.ts answers it for one folder or photo, with the owner scope to read it under.

type UserRef = string | Placeholder | SQLWrapper;

/** The user is an active member of the team in `teamId` (a column or a value). */
export function activeMember(teamId: SQL | string, userId: UserRef): SQL {
  return sql`EXISTS (SELECT 1 FROM team_members tm WHERE tm.team_id = ${teamId} AND tm.user_id = ${userId} AND tm.removed_at IS NULL)`;
}

/** The user was removed from the team of the folder in `folderId` (a column): their own rows there are no longer theirs. */
function removedFrom(folderId: SQL, userId: UserRef): SQL {
  return sql`EXISTS (SELECT 1 FROM folders rf JOIN team_members rm ON rm.team_id = rf.team_id WHERE rf.id = ${folderId} AND rm.user_id = ${userId} AND rm.removed_at IS NOT NULL)`;
}

/**
 * A row of `folders` the user may reach: their own (unless removed from its team), or a listing of a team they are an
 * active member of. An owner of rows in a team listing who was never a member (a team's own runner account) keeps them.
 */
export function reachableFolder(userId: UserRef): SQL {
  return sql`((${folders.userId} = ${userId} AND NOT ${removedFrom(sql`${folders.id}`, userId)}) OR (${folders.teamId} IS NOT NULL AND ${activeMember(sql`${folders.teamId}`, userId)}))`;
}

/** A row of `photos` the user may reach, by the same rule as its folder's (needs no join: the folder is read by id). */
export function reachablePhoto(userId: UserRef): SQL {
  return sql`((${photos.userId} = ${userId} AND NOT ${removedFrom(sql`${photos.folderId}`, userId)}) OR EXISTS (SELECT 1 FROM folders tf JOIN team_members tm ON tm.team_id = tf.team_id WHERE tf.id = ${photos.folderId} AND tm.user_id = ${userId} AND tm.removed_at IS NULL))`;
}

/**
 * The folder a photo of the user's scope sits in: their own folder, or a team's listing whoever made it (a team
 * listing's photo sits in a folder another member may have made; ADR 0280). Join condition on `folders`.
 */
export function photoFolder(userId: UserRef): SQL {
  return sql`(${folders.id} = ${photos.folderId} AND (${folders.userId} = ${userId} OR ${folders.teamId} IS NOT NULL))`;
}

/** A row of `photos` that sits in a team's listing: it belongs to the team, not to the user who uploaded it. */
export function inTeamListing(): SQL {
  return sql`EXISTS (SELECT 1 FROM folders tf WHERE tf.id = ${photos.folderId} AND tf.team_id IS NOT NULL)`;
}
