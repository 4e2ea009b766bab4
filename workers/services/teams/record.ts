import type { Database } from "@db/client";
import { apiKeys, folders, photos, type TeamExport, teamExports, teams, users } from "@db/schema";
import { encodeHexLowerCase } from "@oslojs/encoding";
import { contentDisposition } from "@workers/lib/content-disposition";
import { randomToken } from "@workers/lib/crypto";
import { putRetrying } from "@workers/lib/stored-retry";
import { and, asc, eq, gte, lt } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { fail, ok, type Result } from "~/shared/result";
import { requireTeamRole } from "./teams";

// The broker's record (issue 47 item 5; docs/decisions/0285-the-brokers-record.md): every photo that leaves a team
// listing, written as a row before its bytes are served (or in the batch of whatever the export writes), with a copy
// of the bytes that left under teams/<teamId>/record/. Nothing here updates or deletes a row: only the daily cron's
// expiry does, after the team's retention (record-expiry.ts, docs/decisions/0316-the-brokers-record-expires.md).

export type ExportVia = TeamExport["via"];

/** Who made the export: a member, or a team key (its jobs and downloads run as the team's runner, ADR 0295). */
export interface Exporter {
  userId: string;
  keyId: string | null;
}

/** The team listing a photo is in, with the names the record keeps; null for a personal folder's photo. */
export interface TeamListing {
  teamId: string;
  folderId: string;
  folderName: string;
  photoId: string;
  photoName: string;
  originalKey: string;
  contentType: string;
}

export async function teamListingOf(db: Database, photoId: string): Promise<TeamListing | null> {
  const row = await db
    .select({
      teamId: folders.teamId,
      folderId: folders.id,
      folderName: folders.name,
      photoId: photos.id,
      photoName: photos.name,
      originalKey: photos.originalKey,
      contentType: photos.contentType,
    })
    .from(photos)
    .innerJoin(folders, eq(folders.id, photos.folderId))
    .where(eq(photos.id, photoId))
    .get();
  return row?.teamId ? { ...row, teamId: row.teamId } : null;
}

/** The exporter's name at this moment: the member's, or the key's for a team key. */
async function exporterName(db: Database, who: Exporter): Promise<string> {
  if (who.keyId) {
    const key = await db.select({ name: apiKeys.name }).from(apiKeys).where(eq(apiKeys.id, who.keyId)).get();
    return `API key ${key?.name ?? who.keyId}`;
  }
  const user = await db.select({ name: users.name }).from(users).where(eq(users.id, who.userId)).get();
  return user?.name ?? who.userId;
}

export async function sha256Of(bytes: Uint8Array | ArrayBuffer): Promise<string> {
  return encodeHexLowerCase(new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array(bytes))));
}

/** Keeps a copy of bytes that left, addressed by their hash (the same bytes are kept once). */
export async function keepBytes(
  bucket: R2Bucket,
  teamId: string,
  bytes: Uint8Array | ArrayBuffer,
  contentType: string,
): Promise<{ key: string; sha256: string }> {
  const sha256 = await sha256Of(bytes);
  const key = `teams/${teamId}/record/${sha256}.${contentType === "image/png" ? "png" : "jpg"}`;
  if (!(await bucket.head(key))) await putRetrying(bucket, key, bytes, { httpMetadata: { contentType } });
  return { key, sha256 };
}

/** Keeps the unaltered original once per photo, beside the record (the photo itself may be deleted later). */
export async function keepOriginal(bucket: R2Bucket, listing: TeamListing): Promise<string | null> {
  const key = `teams/${listing.teamId}/record/originals/${listing.photoId}`;
  if (await bucket.head(key)) return key;
  const obj = await bucket.get(listing.originalKey);
  if (!obj) return null;
  await putRetrying(bucket, key, await obj.arrayBuffer(), { httpMetadata: { contentType: listing.contentType } });
  return key;
}

/** One photo that left: what the row says besides who, where and when. */
export interface ExportFact {
  listing: TeamListing;
  via: ExportVia;
  versionId: string | null;
  versionKind: string | null;
  profile: string;
  labelText: string | null;
  caption: string | null;
  sha256?: string | null;
  recordKey?: string | null;
  originalKey?: string | null;
  packId?: string | null;
}

/** The insert statements of the record's rows, for the caller's batch (or `writeRecord` when it writes nothing). */
export async function recordRows(
  db: Database,
  who: Exporter,
  facts: ExportFact[],
  now: number,
): Promise<BatchItem<"sqlite">[]> {
  if (facts.length === 0) return [];
  const memberName = await exporterName(db, who);
  return facts.map((f) =>
    db.insert(teamExports).values({
      id: randomToken(),
      teamId: f.listing.teamId,
      folderId: f.listing.folderId,
      folderName: f.listing.folderName,
      photoId: f.listing.photoId,
      photoName: f.listing.photoName,
      versionId: f.versionId,
      versionKind: f.versionKind,
      via: f.via,
      memberId: who.userId,
      memberName,
      keyId: who.keyId,
      mlsProfile: f.profile,
      labelText: f.labelText,
      caption: f.caption,
      contentSha256: f.sha256 ?? null,
      recordKey: f.recordKey ?? null,
      originalKey: f.originalKey ?? null,
      packId: f.packId ?? null,
      at: now,
    }),
  );
}

/** Writes rows on their own (an export that writes nothing else), in one batch: all or none. */
export async function writeRecord(db: Database, who: Exporter, facts: ExportFact[], now: number): Promise<void> {
  const rows = await recordRows(db, who, facts, now);
  const [first, ...rest] = rows;
  if (first) await db.batch([first, ...rest]);
}

const DAY = 86_400_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A date range from the query (`from`, `to` as YYYY-MM-DD, both days included, UTC); at most ~10 years. */
export function parseRange(from: string | null, to: string | null): Result<{ from: number; to: number }> {
  if (!from || !to || !DATE.test(from) || !DATE.test(to))
    return fail("invalid", "Give the range as from=YYYY-MM-DD and to=YYYY-MM-DD.");
  const start = Date.parse(`${from}T00:00:00Z`);
  const end = Date.parse(`${to}T00:00:00Z`) + DAY;
  if (Number.isNaN(start) || Number.isNaN(end) || new Date(start).toISOString().slice(0, 10) !== from)
    return fail("invalid", "That is not a date.");
  if (new Date(end - DAY).toISOString().slice(0, 10) !== to) return fail("invalid", "That is not a date.");
  if (end <= start) return fail("invalid", "The range ends before it starts.");
  if (end - start > 3700 * DAY) return fail("invalid", "A range covers at most ten years.");
  return ok({ from: start, to: end });
}

/** The team's record in a range, oldest first; one listing's when `folderId` is given. */
export async function listRecord(
  db: Database,
  teamId: string,
  range: { from: number; to: number },
  folderId: string | null,
  limit = 5000,
): Promise<TeamExport[]> {
  return db
    .select()
    .from(teamExports)
    .where(
      and(
        eq(teamExports.teamId, teamId),
        gte(teamExports.at, range.from),
        lt(teamExports.at, range.to),
        folderId ? eq(teamExports.folderId, folderId) : undefined,
      ),
    )
    .orderBy(asc(teamExports.at), asc(teamExports.id))
    .limit(limit)
    .all();
}

/** The team listings the record names (for the page's picker), the live name of each that still exists. */
export async function recordListings(db: Database, teamId: string) {
  return db
    .selectDistinct({ folderId: teamExports.folderId, name: teamExports.folderName })
    .from(teamExports)
    .where(eq(teamExports.teamId, teamId))
    .orderBy(asc(teamExports.folderName))
    .all();
}

/** A team CSV (the record, the spend) as a download that no cache keeps. */
export function csvDownload(body: string, fileName: string): Response {
  return new Response(body, {
    headers: {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": contentDisposition("attachment", fileName),
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
}

export function csvCell(v: string | number | null): string {
  const s = v === null ? "" : String(v);
  // A cell a spreadsheet would run as a formula is prefixed with a quote.
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

const VIA_NAMES: Record<ExportVia, string> = {
  mls_download: "MLS download",
  listing_pack: "listing pack",
  api_download: "API download",
  page_published: "original page published",
  page_withdrawn: "original page withdrawn",
};

const CSV_COLUMNS = [
  "at",
  "listing",
  "listing_id",
  "photo",
  "photo_id",
  "version_id",
  "version_kind",
  "export",
  "member",
  "member_id",
  "api_key_id",
  "mls_profile",
  "label_text",
  "caption",
  "sha256",
  "record_copy",
  "original_copy",
  "pack_id",
] as const;

export function recordCsv(rows: TeamExport[]): string {
  const lines = rows.map((r) =>
    [
      new Date(r.at).toISOString(),
      r.folderName,
      r.folderId,
      r.photoName,
      r.photoId,
      r.versionId,
      r.versionKind,
      VIA_NAMES[r.via],
      r.memberName,
      r.memberId,
      r.keyId,
      r.mlsProfile,
      r.labelText,
      r.caption,
      r.contentSha256,
      r.recordKey,
      r.originalKey,
      r.packId,
    ]
      .map(csvCell)
      .join(","),
  );
  return `${[CSV_COLUMNS.join(","), ...lines].join("\r\n")}\r\n`;
}

export const viaName = (via: ExportVia) => VIA_NAMES[via];

/** A team admin sets how long the record keeps what left (days). */
export async function setRetention(db: Database, teamId: string, days: number, now: number): Promise<void> {
  await db.update(teams).set({ retentionDays: days, updatedAt: now }).where(eq(teams.id, teamId));
}

/**
 * The record as its owner and team admins read it: a range (default the last 30 days), optionally one listing. An
 * agent is refused 403, anyone else 404 (ADR 0271). `csv`: the range is required.
 */
export async function readTeamRecord(
  db: Database,
  teamId: string,
  userId: string,
  query: URLSearchParams,
  opts: { csv: boolean; now: number },
): Promise<
  Result<{
    team: { id: string; name: string; retentionDays: number };
    rows: TeamExport[];
    range: { from: string; to: string };
    folderId: string | null;
    listings: { folderId: string; name: string }[];
  }>
> {
  const found = await requireTeamRole(db, teamId, userId, "manage");
  if (!found.ok) return found;
  const today = new Date(opts.now).toISOString().slice(0, 10);
  const monthAgo = new Date(opts.now - 29 * DAY).toISOString().slice(0, 10);
  const fromText = query.get("from") ?? (opts.csv ? null : monthAgo);
  const toText = query.get("to") ?? (opts.csv ? null : today);
  const range = parseRange(fromText, toText);
  if (!range.ok) return range;
  const folder = query.get("folder");
  if (folder !== null && !/^[a-z0-9]{1,64}$/.test(folder)) return fail("invalid", "That is not a listing.");
  const [rows, listings] = await Promise.all([listRecord(db, teamId, range, folder), recordListings(db, teamId)]);
  const { team } = found;
  return ok({
    team: { id: team.id, name: team.name, retentionDays: team.retentionDays },
    rows,
    range: { from: fromText!, to: toText! },
    folderId: folder,
    listings,
  });
}
