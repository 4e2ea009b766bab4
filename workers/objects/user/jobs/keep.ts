import { reachablePhoto } from "@db/access";
import type { Database } from "@db/client";
import { folders, photos, photoVersions } from "@db/schema";
import { log } from "@workers/lib/log";
import { teamObject } from "@workers/objects/team-stub";
import type { Changed } from "@workers/objects/user/credits/changes";
import * as credits from "@workers/objects/user/credits/changes";
import { type LedgerResult, refusal } from "@workers/objects/user/credits/ledger-rows";
import { commitStatements, reserve } from "@workers/objects/user/credits/reservations";
import { cachedBalance } from "@workers/objects/user/credits/view";
import { and, eq } from "drizzle-orm";
import { VERSION_NOT_FOUND } from "~/shared/version-view";
import { chosenVersionValues } from "./job-rows";
import { paidPhotoRefusal } from "./paid-photos";

// "Keep it anyway" (issue 33, docs/decisions/0162-results-true-to-the-room.md): a result the structure check refused
// twice was not charged; its owner may keep it for one credit. It is then the photo's shown version, labelled as
// kept, and never exported as staging (it changed the room). On a team listing's photo any active member may keep it,
// for one credit of the team's pool, written by the team's object (docs/decisions/0297-team-keep-and-re-roll.md).

export const KEEP_REASON = "Kept a result the structure check refused";
export const ONLY_REFUSED = "Only a result the structure check refused can be kept this way.";
export const TEAM_KEEP_UNREACHABLE = "The team's credit pool could not be reached, so nothing was kept yet. Try again.";

export async function keepRefused(
  env: Pick<Env, "TEAM_OBJECT">,
  db: Database,
  userId: string,
  photoId: string,
  versionId: string,
  now: number,
): Promise<Changed<LedgerResult<{ versionId: string }>>> {
  // The version with its photo, in one read: paid work only on a photo out of the trash (paid-photos.ts).
  const row = await db
    .select({
      version: photoVersions,
      photo: { id: photos.id, name: photos.name, trashedAt: photos.trashedAt, teamId: folders.teamId },
    })
    .from(photoVersions)
    // The user's own photo, or a team listing's photo they are an active member of (db/access.ts); the version is
    // its photo's owner's (ADR 0280).
    .innerJoin(photos, and(eq(photos.id, photoVersions.photoId), reachablePhoto(userId)))
    .leftJoin(folders, eq(folders.id, photos.folderId))
    .where(
      and(eq(photoVersions.id, versionId), eq(photoVersions.photoId, photoId), eq(photoVersions.userId, photos.userId)),
    )
    .get();
  if (!row) return credits.untouched(refusal("not_found", VERSION_NOT_FOUND, 0));
  const teamId = row.photo.teamId ?? null;
  const trashed = paidPhotoRefusal([row.photo], [photoId], 0, () => teamId);
  if (trashed) return credits.untouched(trashed);
  const { version } = row;
  if (version.structureVerdict !== "refused") return credits.untouched(refusal("conflict", ONLY_REFUSED, 0));
  if (teamId !== null) return credits.untouched(await keepForTeam(env, db, userId, teamId, photoId, version));
  // One credit, reserved and spent in one batch: a keep is never left holding a credit that a later recovery would
  // return while the result stays refused, unkeepable under its key.
  const key = `keep:${versionId}`;
  const kept = await reserve(db, userId, key, 1, KEEP_REASON, now, {
    writes: [
      ...commitStatements(db, userId, key, now),
      db.update(photoVersions).set({ storedVerdict: "kept" }).where(eq(photoVersions.id, versionId)),
      db
        .update(photos)
        .set(chosenVersionValues(version, now))
        .where(and(eq(photos.id, photoId), eq(photos.userId, userId))),
    ],
  });
  if (!kept.ok) return credits.untouched(kept);
  // Written before (the batch commits what it reserves): the result is kept already.
  if (kept.status !== "held") return credits.untouched(refusal("conflict", ONLY_REFUSED, kept.balance));
  return credits.moved({ ok: true, balance: kept.balance, versionId });
}

/**
 * A team listing's refused result kept for one credit of the pool: the team's object takes and commits it in one
 * batch with the version's mark and the photo's shown image, in its turn, while this user's turn waits. The user's
 * own credits do not move. A call that fails on the way is answered from D1: the pool's `keep:` reservation exists
 * only with the version kept.
 */
async function keepForTeam(
  env: Pick<Env, "TEAM_OBJECT">,
  db: Database,
  userId: string,
  teamId: string,
  photoId: string,
  version: typeof photoVersions.$inferSelect,
): Promise<LedgerResult<{ versionId: string }>> {
  let answer: Awaited<ReturnType<ReturnType<typeof teamObject>["keepVersion"]>> | null = null;
  try {
    answer = await teamObject(env, teamId).keepVersion(teamId, {
      memberId: userId,
      versionId: version.id,
      photoId,
      reason: KEEP_REASON,
      shown: { key: version.key, contentType: version.contentType },
    });
  } catch (err) {
    log.warn("team pool's keep call failed; reading whether it was written", { err: String(err), teamId });
  }
  const balance = (await cachedBalance(db, userId)) ?? 0;
  if (answer?.ok) return { ok: true, balance, versionId: version.id };
  if (answer === null) {
    const kept = await db
      .select({ verdict: photoVersions.storedVerdict })
      .from(photoVersions)
      .where(eq(photoVersions.id, version.id))
      .get();
    if (kept?.verdict === "kept") return { ok: true, balance, versionId: version.id };
    return refusal("unavailable", TEAM_KEEP_UNREACHABLE, balance);
  }
  // Removed from the team since the route's check: the version is not theirs to keep any more.
  if (answer.code === "not_found") return refusal("not_found", VERSION_NOT_FOUND, balance);
  return refusal(answer.code, answer.error, balance);
}
