import type { Database } from "@db/client";
import { photos, photoVersions } from "@db/schema";
import type { Changed } from "@workers/objects/user/credits/changes";
import * as credits from "@workers/objects/user/credits/changes";
import { findHeld, reserve } from "@workers/objects/user/credits/reservations";
import { type LedgerResult, refusal } from "@workers/objects/user/credits/rows";
import { and, eq } from "drizzle-orm";
import { paidPhotoRefusal } from "./paid-photos";

// "Keep it anyway" (issue 33, docs/decisions/0162-results-true-to-the-room.md): a result the structure check refused
// twice was not charged; its owner may keep it for one credit. It is then the photo's shown version, labelled as
// kept, and never exported as staging (it changed the room).

export const KEEP_REASON = "Kept a result the structure check refused";
export const ONLY_REFUSED = "Only a result the structure check refused can be kept this way.";

export async function keepRefused(
  db: Database,
  userId: string,
  photoId: string,
  versionId: string,
  now: number,
): Promise<Changed<LedgerResult<{ versionId: string }>>> {
  // The version with its photo, in one read: paid work only on a photo out of the trash (paid-photos.ts).
  const row = await db
    .select({ version: photoVersions, photo: { id: photos.id, name: photos.name, trashedAt: photos.trashedAt } })
    .from(photoVersions)
    .innerJoin(photos, and(eq(photos.id, photoVersions.photoId), eq(photos.userId, userId)))
    .where(and(eq(photoVersions.id, versionId), eq(photoVersions.photoId, photoId), eq(photoVersions.userId, userId)))
    .get();
  if (!row) return credits.untouched(refusal("not_found", "That version of the photo was not found.", 0));
  const trashed = paidPhotoRefusal([row.photo], [photoId], 0);
  if (trashed) return credits.untouched(trashed);
  const { version } = row;
  if (version.structureVerdict !== "refused") return credits.untouched(refusal("conflict", ONLY_REFUSED, 0));
  // One credit, reserved and committed in this one change: the object runs nothing else for the user meanwhile.
  const key = `keep:${versionId}`;
  const reserved = await reserve(db, userId, key, 1, KEEP_REASON, now);
  if (!reserved.ok) return credits.untouched(reserved);
  const found = await findHeld(db, userId, key, "committed");
  if (!found.held) return credits.moved({ ok: true, balance: reserved.balance, versionId });
  const committed = await credits.commitHeld(db, userId, found.held, now, {
    writes: [
      db.update(photoVersions).set({ storedVerdict: "kept" }).where(eq(photoVersions.id, versionId)),
      db
        .update(photos)
        .set({
          processedKey: version.key,
          processedThumbKey: version.thumbKey,
          processedContentType: version.contentType,
          processedAt: now,
        })
        .where(and(eq(photos.id, photoId), eq(photos.userId, userId))),
    ],
  });
  const c = committed.answer;
  return credits.moved(c.ok ? { ok: true, balance: c.balance, versionId } : c);
}
