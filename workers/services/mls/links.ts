import { photoFolder } from "@db/access";
import type { Database } from "@db/client";
import {
  type Folder,
  folders,
  type OriginalLink,
  originalLinks,
  type PhotoVersion,
  photos,
  photoVersions,
} from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { recordRows, teamListingOf } from "@workers/services/teams/record";
import { and, desc, eq, isNull } from "drizzle-orm";
import { ADVERTISING_WARNING, advertises, isDisclosedKind } from "~/shared/mls-profiles";
import { fail, NOT_FOUND, ok, type Result } from "~/shared/result";
import { captionFor, type Disclosure, disclosureFor, exportable } from "./disclosure";

// Public pages of an original next to its altered versions, /o/<token>
// (docs/decisions/0110-mls-disclosure-and-original-pages.md, 0170-mls-profiles.md). The token is 128 random bits
// (26 base32 characters) and is the only key: no user id in the address. A page is made only by an explicit
// request that is not a GET: "Publish the original page", or the first "Download for MLS" that says it publishes
// (a POST). A download never publishes again what its owner withdrew. While the page's listing still advertises
// (active or pending), withdrawing it asks first and says why; once the listing is marked sold it closes by itself.

export const LINK_TOKEN = /^[a-z2-7]{26}$/;

export function originalPageUrl(origin: string, token: string): string {
  return `${origin}/o/${token}`;
}

export type LinkState =
  | { state: "live"; token: string; createdAt: number }
  | { state: "withdrawn"; at: number; reason: OriginalLink["revokedReason"] }
  | { state: "none" };

/**
 * A version's page from its links, newest first: live, withdrawn (the newest was closed), or never made. A live link
 * of a listing whose pages have closed (marked sold, its moment passed) is closed already, though the daily cron has
 * not marked it yet: its page answers 410, so no export may give its address.
 */
export function stateOf(
  links: Pick<OriginalLink, "token" | "createdAt" | "revokedAt" | "revokedReason">[],
  folder: Pick<Folder, "originalsCloseAt"> | null = null,
  now = Date.now(),
): LinkState {
  const live = links.find((l) => l.revokedAt === null);
  const closeAt = folder?.originalsCloseAt ?? null;
  if (live && closeAt !== null && closeAt <= now) return { state: "withdrawn", at: closeAt, reason: "listing_closed" };
  if (live) return { state: "live", token: live.token, createdAt: live.createdAt };
  const last = links[0];
  if (last) return { state: "withdrawn", at: last.revokedAt ?? last.createdAt, reason: last.revokedReason };
  return { state: "none" };
}

export async function linkState(
  db: Database,
  userId: string,
  versionId: string,
  folder: Pick<Folder, "originalsCloseAt"> | null,
  now = Date.now(),
): Promise<LinkState> {
  const rows = await db
    .select()
    .from(originalLinks)
    .where(and(eq(originalLinks.versionId, versionId), eq(originalLinks.userId, userId)))
    .orderBy(desc(originalLinks.createdAt))
    .all();
  return stateOf(rows, folder, now);
}

/** The live page's address, or null. */
export function liveUrl(origin: string, s: LinkState): string | null {
  return s.state === "live" ? originalPageUrl(origin, s.token) : null;
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** What a download says when the page it needs was closed: who closed it, when, and what to do. */
export function withdrawnMessage(s: Extract<LinkState, { state: "withdrawn" }>): string {
  if (s.reason === "listing_closed")
    return `This photo's original page closed on ${day(s.at)}, after its listing was marked sold. Nothing was published: mark the listing active and publish the page again if it still advertises.`;
  return `You withdrew this photo's original page on ${day(s.at)}. Nothing was published again: publish the original page again to download it for MLS.`;
}

export const NOT_PUBLISHED =
  "This photo has no public original page yet, and this listing's MLS profile gives its address. Publish the original page first (or use Download for MLS, which asks to publish it).";

interface VersionRow {
  id: string;
  userId: string;
  photoId: string;
  kind: string;
  structureVerdict: PhotoVersion["structureVerdict"];
  structureConfirmedAt: PhotoVersion["structureConfirmedAt"];
  structureReturnedAt: PhotoVersion["structureReturnedAt"];
}

/** The owner's version with its photo's listing folder (null for a photo in no folder). */
async function versionWithListing(db: Database, userId: string, photoId: string, versionId: string) {
  return db
    .select({
      version: {
        id: photoVersions.id,
        userId: photoVersions.userId,
        photoId: photoVersions.photoId,
        kind: photoVersions.kind,
        structureVerdict: photoVersions.structureVerdict,
        structureConfirmedAt: photoVersions.structureConfirmedAt,
        structureReturnedAt: photoVersions.structureReturnedAt,
      },
      folder: folders,
      trashedAt: photos.trashedAt,
    })
    .from(photoVersions)
    .innerJoin(photos, eq(photos.id, photoVersions.photoId))
    .leftJoin(folders, photoFolder(userId))
    .where(and(eq(photoVersions.id, versionId), eq(photoVersions.photoId, photoId), eq(photoVersions.userId, userId)))
    .get();
}

/** Refused when the listing is marked sold and its pages have closed (they would close again at once). */
function closedListing(folder: Folder | null, now: number) {
  if (folder?.originalsCloseAt != null && folder.originalsCloseAt <= now)
    return fail(
      "conflict",
      `This listing is marked sold and its original pages closed on ${day(folder.originalsCloseAt)}. Mark it active again to publish a page.`,
    );
  return null;
}

/** The broker's record of a team listing's page published or withdrawn, for the batch that does it (ADR 0285). */
async function pageRecord(
  db: Database,
  who: { userId: string; keyId: string | null },
  v: Pick<VersionRow, "id" | "photoId" | "kind">,
  disclosure: Disclosure,
  via: "page_published" | "page_withdrawn",
  token: string | null,
  now: number,
) {
  const listing = await teamListingOf(db, v.photoId);
  if (!listing) return [];
  const caption = token && isDisclosedKind(v.kind) ? captionFor(disclosure, v.kind, `/o/${token}`) : null;
  return recordRows(
    db,
    who,
    [
      {
        listing,
        via,
        versionId: v.id,
        versionKind: v.kind,
        profile: disclosure.profile.id,
        labelText: null,
        caption,
        recordKey: token ? `/o/${token}` : null,
      },
    ],
    now,
  );
}

async function insertLink(
  db: Database,
  v: VersionRow,
  now: number,
  record?: { who: { userId: string; keyId: string | null }; disclosure: Disclosure },
): Promise<string> {
  const token = randomToken(16);
  const insert = db
    .insert(originalLinks)
    .values({ token, userId: v.userId, photoId: v.photoId, versionId: v.id, createdAt: now });
  const rows = record ? await pageRecord(db, record.who, v, record.disclosure, "page_published", token, now) : [];
  await db.batch([insert, ...rows]);
  return token;
}

/**
 * Publishes a version's original page (an explicit request, never a GET). `mode` "again" also publishes a page its
 * owner withdrew; "first" (a download that says it publishes) makes one only when there never was one, and otherwise
 * says the page was withdrawn. A live page is returned as it is.
 */
export async function publishOriginal(
  db: Database,
  userId: string,
  photoId: string,
  versionId: string,
  mode: "again" | "first",
  now: number,
  /** The team key that asks (ADR 0295), for the broker's record. */
  keyId: string | null = null,
  /** Who asks, for the broker's record, when not the owner (a teammate's download of a team listing's photo). */
  actor: string = userId,
): Promise<Result<{ token: string; made: boolean }>> {
  const row = await versionWithListing(db, userId, photoId, versionId);
  if (!row || row.trashedAt !== null) return NOT_FOUND;
  // Before a live page is handed back: a version that may not go out (a returned one, ADR 0263) is not published
  // by handing back the page it had, which shows the original and says the altered photo was withdrawn.
  const disclosure = await disclosureFor(db, userId, row.folder);
  const allowed = exportable(disclosure, row.version);
  if (!allowed.ok)
    return fail(allowed.code, allowed.code === "conflict" ? allowed.reason : `Not published. ${allowed.reason}`);
  const current = await linkState(db, userId, versionId, row.folder, now);
  if (current.state === "live") return ok({ token: current.token, made: false });
  if (current.state === "withdrawn" && mode === "first") return fail("conflict", withdrawnMessage(current));
  const closed = closedListing(row.folder, now);
  if (closed) return closed;
  return ok({
    token: await insertLink(db, row.version, now, { who: { userId: actor, keyId }, disclosure }),
    made: true,
  });
}

/**
 * Publishes, for a listing's pack, the pages of versions that never had one (withdrawn ones stay withdrawn: each
 * is published again only on its own). Returns how many were made.
 */
export async function publishNew(
  db: Database,
  folder: Folder,
  versions: VersionRow[],
  states: Map<string, LinkState>,
  now: number,
  /** A team listing's pack: each page it publishes goes into the broker's record in the batch that makes it. */
  record?: { who: { userId: string; keyId: string | null }; disclosure: Disclosure },
): Promise<number> {
  if (closedListing(folder, now)) return 0;
  let made = 0;
  for (const v of versions) {
    if ((states.get(v.id) ?? { state: "none" }).state !== "none") continue;
    const token = await insertLink(db, v, now, record);
    states.set(v.id, { state: "live", token, createdAt: now });
    made++;
  }
  return made;
}

/**
 * Withdraws the owner's live page of a version. While its listing advertises (active or pending) the first request
 * is refused with the law's warning; `confirmed` closes it anyway. A stranger's or an unknown one is not found.
 */
export async function withdrawOriginal(
  db: Database,
  userId: string,
  photoId: string,
  versionId: string,
  confirmed: boolean,
  now: number,
): Promise<Result> {
  const row = await versionWithListing(db, userId, photoId, versionId);
  if (!row) return NOT_FOUND;
  const current = await linkState(db, userId, versionId, row.folder, now);
  if (current.state !== "live") return fail("not_found", "This version has no live link.");
  if (row.folder && advertises(row.folder.listingStatus) && !confirmed) return fail("conflict", ADVERTISING_WARNING);
  const disclosure = await disclosureFor(db, userId, row.folder);
  const rows = await pageRecord(
    db,
    { userId, keyId: null },
    row.version,
    disclosure,
    "page_withdrawn",
    current.token,
    now,
  );
  await db.batch([
    db
      .update(originalLinks)
      .set({ revokedAt: now, revokedReason: "owner" })
      .where(
        and(eq(originalLinks.versionId, versionId), eq(originalLinks.userId, userId), isNull(originalLinks.revokedAt)),
      ),
    ...rows,
  ]);
  return ok({});
}
