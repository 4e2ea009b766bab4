import type { Database } from "@db/client";
import { folders, originalLinks, photos, photoVersions, users } from "@db/schema";
import { randomToken, sha256Hex } from "@workers/lib/crypto";
import { and, desc, eq, isNull } from "drizzle-orm";
import { fail, ok, type Result } from "~/shared/result";

// Public pages of an original next to its staged version, /o/<token>
// (docs/decisions/0110-mls-disclosure-and-original-pages.md). The token is
// 128 random bits (26 base32 characters) and is the only key: no user id in
// the address. Revoking sets revoked_at; the page and its images answer 410
// from then on, and so they do once the account is deleted.

export const LINK_TOKEN = /^[a-z2-7]{26}$/;

export function originalPageUrl(origin: string, token: string): string {
  return `${origin}/o/${token}`;
}

export async function activeLink(db: Database, userId: string, versionId: string) {
  return db
    .select()
    .from(originalLinks)
    .where(
      and(eq(originalLinks.versionId, versionId), eq(originalLinks.userId, userId), isNull(originalLinks.revokedAt)),
    )
    .orderBy(desc(originalLinks.createdAt))
    .get();
}

/** The version's live link, made when it has none. */
export async function ensureLink(
  db: Database,
  version: { id: string; userId: string; photoId: string },
  now = Date.now(),
): Promise<string> {
  const existing = await activeLink(db, version.userId, version.id);
  if (existing) return existing.token;
  const token = randomToken(16);
  await db
    .insert(originalLinks)
    .values({ token, userId: version.userId, photoId: version.photoId, versionId: version.id, createdAt: now });
  return token;
}

/** Revokes the owner's live link of a version; a stranger's or an unknown one is not found. */
export async function revokeLinks(db: Database, userId: string, versionId: string, now = Date.now()): Promise<Result> {
  const res = await db
    .update(originalLinks)
    .set({ revokedAt: now })
    .where(
      and(eq(originalLinks.versionId, versionId), eq(originalLinks.userId, userId), isNull(originalLinks.revokedAt)),
    )
    .returning({ token: originalLinks.token });
  if (res.length === 0) return fail("not_found", "This version has no live link.");
  return ok({});
}

export interface OriginalPage {
  token: string;
  /** When the staged version was made (ms). */
  stagedAt: number;
  kind: "stage" | "sky" | "removal";
  originalType: string;
  stagedType: string;
  width: number;
  height: number;
  listingAddress: string | null;
  originalKey: string;
  stagedKey: string;
  /** ETag of the page: it changes when the page could. */
  etag: string;
}

/** The page behind a token: found, gone (revoked, or the account deleted) or not found. */
export async function resolveLink(db: Database, token: string): Promise<Result<{ page: OriginalPage }>> {
  if (!LINK_TOKEN.test(token)) return fail("not_found", "This link does not exist.");
  const row = await db
    .select({
      link: originalLinks,
      photo: {
        originalKey: photos.originalKey,
        contentType: photos.contentType,
        trashedAt: photos.trashedAt,
      },
      version: {
        key: photoVersions.key,
        kind: photoVersions.kind,
        createdAt: photoVersions.createdAt,
        contentType: photoVersions.contentType,
        width: photoVersions.width,
        height: photoVersions.height,
      },
      listingAddress: folders.listingAddress,
      deletedAt: users.deletedAt,
    })
    .from(originalLinks)
    .innerJoin(photos, eq(photos.id, originalLinks.photoId))
    .innerJoin(photoVersions, eq(photoVersions.id, originalLinks.versionId))
    .innerJoin(users, eq(users.id, originalLinks.userId))
    .leftJoin(folders, eq(folders.id, photos.folderId))
    .where(eq(originalLinks.token, token))
    .get();
  if (!row) return fail("not_found", "This link does not exist.");
  if (row.link.revokedAt !== null || row.deletedAt !== null || row.photo.trashedAt !== null)
    return fail("gone", "This link was withdrawn by the person who shared it.");
  return ok({
    page: {
      token,
      stagedAt: row.version.createdAt,
      kind: row.version.kind,
      originalType: row.photo.contentType,
      stagedType: row.version.contentType,
      width: row.version.width,
      height: row.version.height,
      listingAddress: row.listingAddress ?? null,
      originalKey: row.photo.originalKey,
      stagedKey: row.version.key,
      etag: `"${sha256Hex(JSON.stringify([token, row.link.createdAt, row.version.createdAt, row.listingAddress])).slice(0, 32)}"`,
    },
  });
}

/** The edge may keep a page or image this long; revocation is seen by the origin at once (ADR 0110). */
export const PUBLIC_CACHE = "public, max-age=0, s-maxage=60, must-revalidate";
