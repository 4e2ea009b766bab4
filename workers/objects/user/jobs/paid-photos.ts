import { reachablePhoto } from "@db/access";
import type { Database } from "@db/client";
import { folders, type Photo, photos } from "@db/schema";
import { type Refusal, refusal } from "@workers/objects/user/credits/ledger-rows";
import { and, eq, sql } from "drizzle-orm";
import { inTrashMessage } from "~/shared/library-view";
import { NOT_FOUND } from "~/shared/result";
import { TEAM_LISTING_ELSEWHERE } from "~/shared/teams";
import { displayName } from "~/shared/text";

// Paid work starts on a photo only while it is its owner's and out of the trash (issue 45 part 3,
// docs/decisions/0202-paid-work-on-a-live-photo-only.md). Every entry of the user's object that reserves credits for
// work on a photo asks here, in its own serial turn, before anything is reserved or written: startMany (a page's job,
// variations, a re-roll, a batch, a batch's retry), the public API's job (api-jobs.ts) and "Keep it anyway"
// (keep.ts). The routes and services do not check the trash themselves, so each paid action gets the same answer:
// 409 with inTrashMessage, nothing written. A stranger's or a missing photo is the usual "Not found." (404).

/** What the check reads of each photo. */
export interface PaidPhoto {
  id: string;
  name: string;
  trashedAt: number | null;
  /** The team whose listing holds it (its jobs spend that team's pool, ADR 0270); null: a personal folder. */
  teamId: string | null;
}

/**
 * The user's photos among `photoIds` (a batch takes up to 100): the ids bound as one JSON array and read with
 * json_each, so the statement binds two values however many photos there are (D1 binds at most 100).
 */
export function paidPhotosQuery(db: Database, userId: string, photoIds: readonly string[]) {
  return db
    .select({ id: photos.id, name: photos.name, trashedAt: photos.trashedAt, teamId: folders.teamId })
    .from(photos)
    .leftJoin(folders, eq(folders.id, photos.folderId))
    .where(
      and(
        // The user's own photos outside team listings, and any photo of a team listing they are an active member of.
        reachablePhoto(userId),
        sql`${photos.id} IN (SELECT value FROM json_each(${JSON.stringify([...new Set(photoIds)])}))`,
      ),
    );
}

/**
 * The refusal of paid work on `photoIds`, or null when every one is the user's and out of the trash, and paid by the
 * right pool: `paidBy` says which team's pool holds each photo's credit (none: the user's own credits). A photo in a
 * team's listing is never charged to its member's own credits, nor a personal one to a team (ADR 0270).
 */
export function paidPhotoRefusal(
  found: PaidPhoto[],
  photoIds: readonly string[],
  balance: number,
  paidBy: (photoId: string) => string | null = () => null,
): Refusal | null {
  const byId = new Map(found.map((p) => [p.id, p]));
  if (photoIds.some((id) => !byId.has(id))) return refusal("not_found", NOT_FOUND.error, balance);
  const trashed = photoIds.map((id) => byId.get(id)!).find((p) => p.trashedAt !== null);
  if (trashed) return refusal("conflict", inTrashMessage(displayName(trashed.name, "This photo", 80)), balance);
  const elsewhere = photoIds.some((id) => (byId.get(id)!.teamId ?? null) !== paidBy(id));
  return elsewhere ? refusal("conflict", TEAM_LISTING_ELSEWHERE, balance) : null;
}

/** The check on its own (one read), for an entry that has no read of its own to add it to. */
export async function checkPaidPhotos(
  db: Database,
  userId: string,
  photoIds: readonly string[],
  balance: number,
): Promise<Refusal | null> {
  return paidPhotoRefusal(await paidPhotosQuery(db, userId, photoIds).all(), photoIds, balance);
}

/**
 * A queued job whose photo went to the trash, or out of the member's reach (removed from the team), before its turn:
 * it ends refunded with this message, before any provider call. Thrown inside a run, so its refund is the run's own.
 */
export class PaidPhotoGone extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PaidPhotoGone";
  }
}

/**
 * Why a job's photo may no longer be paid for when its run starts (startRunning read it, with whether the user still
 * reaches it), as the error its run throws; null while it still may be (the rule startMany asked).
 */
export function paidPhotoGone(photo: Pick<Photo, "name" | "trashedAt"> | undefined, reachable: boolean) {
  if (!photo || !reachable) return new PaidPhotoGone(NOT_FOUND.error);
  if (photo.trashedAt !== null) return new PaidPhotoGone(inTrashMessage(displayName(photo.name, "This photo", 80)));
  return null;
}
