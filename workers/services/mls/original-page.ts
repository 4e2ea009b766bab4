import type { Database } from "@db/client";
import {
  folders,
  labelSettings,
  originalLinks,
  photos,
  photoVersions,
  type StructureVerdict,
  teams,
  users,
} from "@db/schema";
import { sha256Hex } from "@workers/lib/crypto";
import { and, desc, eq, isNotNull, or, sql } from "drizzle-orm";
import { DEFAULT_LABEL } from "~/shared/label-options";
import { KIND_NAMES } from "~/shared/mls-profiles";
import { fail, ok, type Result } from "~/shared/result";
import { disclosureOf, exportable } from "./disclosure";
import { LINK_TOKEN, stateOf } from "./links";

// What the public original page /o/<token> shows (docs/decisions/0110, 0170): the unaltered original, and every
// altered version of the photo that its listing's profile lets it publish, each with its kind and date, the one
// the link was made for first (or, once its owner returned it, a line saying it was withdrawn). Nothing about the agent. The page answers 410 from the moment its link is withdrawn,
// its listing's pages close after a sale, its photo is trashed or its account deleted.

export interface PageVersion {
  id: string;
  kind: string;
  kindName: string;
  createdAt: number;
  key: string;
  thumbKey: string;
  contentType: string;
  width: number;
  height: number;
  /** What the structure check said of it: the byte rule reads it (app/shared/version-bytes.ts). */
  structureVerdict: StructureVerdict | null;
  /** The version this link was made for (the one on the label or in the caption). */
  linked: boolean;
}

export interface OriginalPage {
  token: string;
  listingAddress: string | null;
  original: { key: string; thumbKey: string; contentType: string; width: number; height: number };
  /** The linked version first (unless returned), then the others, newest first. */
  versions: PageVersion[];
  /**
   * The version the link was made for, when its owner returned it ("This result changed the room", ADR 0263): the
   * page stays up for the original, says the altered photo was withdrawn, and no longer serves it. Null otherwise.
   */
  returned: { kind: string; createdAt: number } | null;
  /** ETag of the page: it changes when the page could. */
  etag: string;
}

/** What the page and its image address say once the owner returned the altered photo the page was made for. */
export const ALTERED_WITHDRAWN =
  "The person who shared this page withdrew the altered photo it was made for: it did not show the room as it is.";

/** The page behind a token: found, gone (withdrawn, closed, trashed, the account deleted) or not found. */
export async function resolveLink(db: Database, token: string, now: number): Promise<Result<{ page: OriginalPage }>> {
  if (!LINK_TOKEN.test(token)) return fail("not_found", "This link does not exist.");
  const row = await db
    .select({
      link: originalLinks,
      photo: photos,
      // Flat, not a nested object: drizzle reads a left-joined object of nullable columns as null.
      mlsProfile: folders.mlsProfile,
      listingAddress: folders.listingAddress,
      closeAt: folders.originalsCloseAt,
      accountProfile: labelSettings.profile,
      deletedAt: users.deletedAt,
      // A team listing's page is the team's (ADR 0280): it follows the team's default MLS profile (ADR 0341), and stays
      // up when the member who published it leaves or deletes their account.
      teamId: folders.teamId,
      teamProfile: teams.defaultMlsProfile,
    })
    .from(originalLinks)
    .innerJoin(photos, eq(photos.id, originalLinks.photoId))
    .innerJoin(users, eq(users.id, originalLinks.userId))
    .leftJoin(
      folders,
      and(eq(folders.id, photos.folderId), or(eq(folders.userId, originalLinks.userId), isNotNull(folders.teamId))),
    )
    .leftJoin(teams, eq(teams.id, folders.teamId))
    // A team listing follows the account of the member who made it, not of the one who published (ADR 0341).
    .leftJoin(
      labelSettings,
      eq(
        labelSettings.userId,
        sql`CASE WHEN ${folders.teamId} IS NULL THEN ${originalLinks.userId} ELSE ${folders.userId} END`,
      ),
    )
    .where(eq(originalLinks.token, token))
    .get();
  if (!row) return fail("not_found", "This link does not exist.");
  const closeAt = row.closeAt;
  if (
    row.link.revokedAt !== null ||
    (row.deletedAt !== null && row.teamId === null) ||
    row.photo.trashedAt !== null ||
    (closeAt !== null && closeAt <= now)
  )
    return fail("gone", "This link was withdrawn by the person who shared it.");
  const disclosure = disclosureOf(
    { ...DEFAULT_LABEL, profile: row.teamProfile ?? row.accountProfile ?? DEFAULT_LABEL.profile },
    row.mlsProfile,
  );
  const [all, links] = await db.batch([
    db
      .select()
      .from(photoVersions)
      .where(and(eq(photoVersions.photoId, row.photo.id), eq(photoVersions.userId, row.photo.userId)))
      .orderBy(desc(photoVersions.createdAt), desc(photoVersions.id)),
    db
      .select()
      .from(originalLinks)
      .where(eq(originalLinks.photoId, row.photo.id))
      .orderBy(desc(originalLinks.createdAt)),
  ]);
  // A version whose own page its owner withdrew is not shown on the photo's other pages either: withdrawn is
  // unpublished everywhere. A version never published is shown beside the one linked (ADR 0170).
  const unpublished = (versionId: string) => {
    const s = stateOf(links.filter((l) => l.versionId === versionId));
    return s.state === "withdrawn" && s.reason === "owner";
  };
  const linked = all.find((v) => v.id === row.link.versionId);
  if (!linked) return fail("gone", "This link was withdrawn by the person who shared it.");
  // A returned result is not served, but its page stays: an advertisement that gives this address must still lead to
  // the unaltered original (California B&P 10140.8), and the page says the altered photo was withdrawn.
  const returned = linked.structureReturnedAt !== null ? { kind: linked.kind, createdAt: linked.createdAt } : null;
  const versions: PageVersion[] = all
    .filter((v) => (v.id === linked.id ? returned === null : exportable(disclosure, v).ok && !unpublished(v.id)))
    .map((v) => ({
      id: v.id,
      kind: v.kind,
      kindName: KIND_NAMES[v.kind] ?? "Digital alteration",
      createdAt: v.createdAt,
      key: v.key,
      thumbKey: v.thumbKey,
      contentType: v.contentType,
      width: v.width,
      height: v.height,
      structureVerdict: v.structureVerdict,
      linked: v.id === row.link.versionId,
    }))
    .sort((a, b) => Number(b.linked) - Number(a.linked));
  const p = row.photo;
  return ok({
    page: {
      token,
      listingAddress: row.listingAddress,
      original: {
        key: p.originalKey,
        thumbKey: p.thumbKey,
        contentType: p.contentType,
        width: p.width,
        height: p.height,
      },
      versions,
      returned,
      etag: `"${sha256Hex(
        JSON.stringify([
          token,
          row.link.createdAt,
          row.listingAddress,
          versions.map((v) => [v.id, v.createdAt]),
          returned !== null,
        ]),
      ).slice(0, 32)}"`,
    },
  });
}

/** The edge may keep a page or image this long; withdrawal is seen by the origin at once (ADR 0110). */
export const PUBLIC_CACHE = "public, max-age=0, s-maxage=60, must-revalidate";
