import type { Database } from "@db/client";
import { inQuery } from "@db/lists";
import { type Folder, originalLinks, type Photo, type PhotoVersion, photos, photoVersions } from "@db/schema";
import { and, asc, desc, eq, isNull } from "drizzle-orm";
import {
  LISTING_STATUS_NAMES,
  MLS_PROFILES,
  needsOriginalPage,
  PLACEMENT_NAMES,
  sourceLine,
} from "~/shared/mls-profiles";
import { type Disclosure, disclosureFor, type Exportable, exportable } from "./disclosure";
import { type LinkState, stateOf } from "./links";

// A listing's photos as its exports see them (docs/decisions/0170-mls-profiles.md): per photo the version that
// goes out (the one the photo shows, else the newest), whether its profile lets it be published, and the state of
// its original page. The pack is made from this, and the folder's panel counts from it what the pack would leave
// out, before anyone downloads it.

export interface ListingPick {
  photo: Photo;
  version: PhotoVersion | null;
  allowed: Exportable | null;
}

/**
 * The version a listing uses: the photo's current one (photos.processed_key), else the newest. A result the
 * structure check refused was not charged and is not the owner's to use, so it is never chosen; one kept anyway is
 * chosen when the photo shows it, and the exports leave it out saying why (it changed the room).
 */
function chosen(photo: Photo, all: PhotoVersion[]): PhotoVersion | null {
  const versions = all.filter((v) => v.structureVerdict !== "refused");
  return versions.find((v) => v.key === photo.processedKey) ?? versions[0] ?? null;
}

export async function readListing(
  db: Database,
  userId: string,
  folder: Pick<Folder, "id" | "teamId" | "originalsCloseAt">,
  disclosure: Disclosure,
) {
  // A team listing's photos are every member's uploads (the caller checked the user reaches it, ADR 0280); each
  // photo's versions and pages are its uploader's rows. A personal folder's are the user's own.
  const team = folder.teamId !== null;
  const inFolder = and(
    team ? undefined : eq(photos.userId, userId),
    eq(photos.folderId, folder.id),
    isNull(photos.trashedAt),
  );
  const list = await db.select().from(photos).where(inFolder).orderBy(asc(photos.createdAt), asc(photos.id)).all();
  // By subquery, not a list of ids: D1 takes at most 100 bound parameters.
  const ids = db.select({ id: photos.id }).from(photos).where(inFolder);
  const [versions, links] = await Promise.all([
    db
      .select()
      .from(photoVersions)
      .where(and(team ? undefined : eq(photoVersions.userId, userId), inQuery(photoVersions.photoId, ids)))
      .orderBy(desc(photoVersions.createdAt), desc(photoVersions.id))
      .all(),
    db
      .select()
      .from(originalLinks)
      .where(and(team ? undefined : eq(originalLinks.userId, userId), inQuery(originalLinks.photoId, ids)))
      .orderBy(desc(originalLinks.createdAt))
      .all(),
  ]);
  const states = new Map<string, LinkState>();
  for (const v of versions)
    states.set(
      v.id,
      stateOf(
        links.filter((l) => l.versionId === v.id),
        folder,
      ),
    );
  const picks: ListingPick[] = list.map((photo) => {
    const version = chosen(
      photo,
      versions.filter((v) => v.photoId === photo.id && v.userId === photo.userId),
    );
    return { photo, version, allowed: version ? exportable(disclosure, version) : null };
  });
  return { picks, states };
}

/** What a folder's listing panel shows: its profile and status, and what its pack would publish or leave out. */
export async function listingPanel(db: Database, userId: string, folder: Folder) {
  const disclosure = await disclosureFor(db, userId, folder);
  const { profile } = disclosure;
  const { picks, states } = await readListing(db, userId, folder, disclosure);
  const needs = needsOriginalPage(profile);
  let unpublished = 0;
  let withdrawn = 0;
  let refused = 0;
  let unconfirmed = 0;
  for (const p of picks) {
    if (!p.version || !p.allowed) continue;
    if (!p.allowed.ok && p.allowed.unconfirmed) {
      unconfirmed++;
      continue;
    }
    if (!p.allowed.ok) {
      refused++;
      continue;
    }
    const s = states.get(p.version.id)?.state ?? "none";
    if (s === "none") unpublished++;
    if (s === "withdrawn") withdrawn++;
  }
  return {
    address: folder.listingAddress,
    mlsNumber: folder.mlsNumber,
    /** The listing's own choice ("" for the account's). */
    profileChoice: folder.mlsProfile ?? "",
    profiles: MLS_PROFILES.map(({ id, name }) => ({ id, name })),
    profile: {
      id: profile.id,
      name: profile.name,
      from: disclosure.from,
      rule: sourceLine(profile),
      originals: PLACEMENT_NAMES[profile.original],
      needsPages: needs,
    },
    status: folder.listingStatus,
    statusName: LISTING_STATUS_NAMES[folder.listingStatus],
    closeAfterDays: folder.originalsCloseDays,
    closeAt: folder.originalsCloseAt,
    photos: picks.length,
    altered: picks.filter((p) => p.version).length,
    /** Altered photos whose original page was never published / was withdrawn (the pack leaves them out). */
    unpublished: needs ? unpublished : 0,
    withdrawn: needs ? withdrawn : 0,
    /** Altered photos the profile does not let out (the pack leaves them out, saying why). */
    refused,
    /** Photos showing a flagged result nobody confirmed: the pack is refused until each is (docs/decisions/0215). */
    unconfirmed,
  };
}

export type ListingPanel = Awaited<ReturnType<typeof listingPanel>>;
