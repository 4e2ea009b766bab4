import { reachableFolder } from "@db/access";
import type { Database } from "@db/client";
import { inQuery } from "@db/lists";
import { folders, originalLinks, photos } from "@db/schema";
import { and, count, eq, isNotNull, isNull, lte, ne } from "drizzle-orm";
import { z } from "zod";
import {
  ADVERTISING_WARNING,
  CLOSE_DAYS_DEFAULT,
  CLOSE_DAYS_MAX,
  LISTING_STATUS_NAMES,
  LISTING_STATUSES,
} from "~/shared/mls-profiles";
import { fail, NOT_FOUND, ok, type Result } from "~/shared/result";
import { hasControlCharacters } from "~/shared/text";
import { profileId } from "./labels";

// A listing folder's details, MLS profile and status (docs/decisions/0170-mls-profiles.md). While a listing
// advertises (active or pending) its original pages stay up: withdrawing one, or trashing one of its photos, asks
// first and names the law. Marked sold (or off market), its pages close by themselves after the chosen number of
// days: the moment is stored (folders.originals_close_at), the original page answers 410 from then on, and the
// daily cron marks its links closed (closeSoldListings).

const DAY_MS = 24 * 60 * 60 * 1000;

const optionalText = (label: string, max: number) =>
  z
    .string({ message: `${label} must be text.` })
    .trim()
    .max(max, `${label} must be at most ${max} characters.`)
    .refine((s) => !hasControlCharacters(s), `${label} contains characters that are not allowed.`)
    .nullish()
    .transform((s) => (s ? s : null));

export const listingInput = z.object({
  address: optionalText("The listing address", 200),
  mlsNumber: optionalText("The MLS number", 40).refine(
    (s) => s === null || /^[A-Za-z0-9][A-Za-z0-9 ._#/-]*$/.test(s),
    "The MLS number can use letters, digits, spaces and . _ # / -.",
  ),
  /** "" or absent: the account's profile; undefined leaves the listing's choice as it is (the JSON API). */
  profile: z.union([z.literal(""), profileId]).optional(),
});

export async function saveListing(
  db: Database,
  userId: string,
  folderId: string,
  input: z.infer<typeof listingInput>,
): Promise<Result> {
  const res = await db
    .update(folders)
    .set({
      listingAddress: input.address,
      mlsNumber: input.mlsNumber,
      ...(input.profile === undefined ? {} : { mlsProfile: input.profile || null }),
    })
    .where(and(eq(folders.id, folderId), eq(folders.userId, userId), reachableFolder(userId)))
    .returning({ id: folders.id });
  return res.length ? ok({}) : NOT_FOUND;
}

export const statusInput = z.object({
  status: z.enum(LISTING_STATUSES, { message: "Pick active, pending or sold / off market." }),
  // A form sends text ("" for the default), the JSON API a number.
  closeAfterDays: z.preprocess(
    (v) =>
      v === undefined || v === "" ? CLOSE_DAYS_DEFAULT : typeof v === "string" && /^\d{1,4}$/.test(v) ? Number(v) : v,
    z
      .number({ message: "Say after how many days the original pages close, as a whole number." })
      .int("Say a whole number of days.")
      .min(0, "The days cannot be negative.")
      .max(CLOSE_DAYS_MAX, `At most ${CLOSE_DAYS_MAX} days.`),
  ),
});

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Sets a listing's status. Sold: its original pages close `closeAfterDays` later; back to active: they stay. */
export async function setListingStatus(
  db: Database,
  userId: string,
  folderId: string,
  input: z.infer<typeof statusInput>,
  now: number,
): Promise<Result<{ message: string }>> {
  const sold = input.status === "sold";
  const closeAt = sold ? now + input.closeAfterDays * DAY_MS : null;
  const res = await db
    .update(folders)
    .set({
      listingStatus: input.status,
      soldAt: sold ? now : null,
      originalsCloseDays: sold ? input.closeAfterDays : null,
      originalsCloseAt: closeAt,
    })
    .where(and(eq(folders.id, folderId), eq(folders.userId, userId), reachableFolder(userId)))
    .returning({ id: folders.id });
  if (res.length === 0) return NOT_FOUND;
  if (closeAt !== null)
    return ok({
      message: `Marked ${LISTING_STATUS_NAMES.sold.toLowerCase()}: its original pages close on ${day(closeAt)}${input.closeAfterDays === 0 ? " (today)" : ""}.`,
    });
  return ok({
    message: `Marked ${LISTING_STATUS_NAMES[input.status].toLowerCase()}: its original pages stay up while it advertises.`,
  });
}

/** Daily cron: closes the original pages of listings whose closing moment has come. Returns how many closed. */
export async function closeSoldListings(db: Database, now = Date.now()): Promise<number> {
  const due = db
    .select({ id: photos.id })
    .from(photos)
    // Whoever uploaded it: a team listing holds every member's photos (ADR 0280).
    .innerJoin(folders, eq(folders.id, photos.folderId))
    .where(and(isNotNull(folders.originalsCloseAt), lte(folders.originalsCloseAt, now)));
  const res = await db
    .update(originalLinks)
    .set({ revokedAt: now, revokedReason: "listing_closed" })
    .where(and(isNull(originalLinks.revokedAt), inQuery(originalLinks.photoId, due)))
    .run();
  return res.meta.changes ?? 0;
}

/** Live original pages of a photo whose listing still advertises (0 when it is in no listing, or a sold one). */
async function advertisedPagesOfPhoto(db: Database, userId: string, photoId: string): Promise<number> {
  const row = await db
    .select({ n: count() })
    .from(originalLinks)
    .innerJoin(photos, eq(photos.id, originalLinks.photoId))
    // Whoever made the listing: a team listing holds every member's photos and their pages (ADR 0280).
    .innerJoin(folders, eq(folders.id, photos.folderId))
    .where(
      and(
        eq(originalLinks.photoId, photoId),
        eq(originalLinks.userId, userId),
        isNull(originalLinks.revokedAt),
        ne(folders.listingStatus, "sold"),
      ),
    )
    .get();
  return row?.n ?? 0;
}

/** Refuses trashing a photo whose original page advertises an active listing, unless confirmed. */
export async function trashWarning(db: Database, userId: string, photoId: string): Promise<Result> {
  const n = await advertisedPagesOfPhoto(db, userId, photoId);
  if (n === 0) return ok({});
  return fail("conflict", `Trashing this photo closes its public original page. ${ADVERTISING_WARNING}`);
}

/** How many live original pages the account's advertising listings have (the account deletion warns of them). */
export async function advertisedPages(db: Database, userId: string): Promise<number> {
  const row = await db
    .select({ n: count() })
    .from(originalLinks)
    .innerJoin(photos, eq(photos.id, originalLinks.photoId))
    .innerJoin(folders, eq(folders.id, photos.folderId))
    .where(and(eq(originalLinks.userId, userId), isNull(originalLinks.revokedAt), ne(folders.listingStatus, "sold")))
    .get();
  return row?.n ?? 0;
}
