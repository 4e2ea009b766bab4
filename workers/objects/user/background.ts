import { inTeamListing, reachableFolder, reachablePhoto } from "@db/access";
import type { Database } from "@db/client";
import { inQuery } from "@db/lists";
import {
  apiKeys,
  creditLedger,
  dataExports,
  folders,
  jobs,
  labelSettings,
  type PhotoVersion,
  paidPeriods,
  photos,
  photoVersions,
  structureRecourses,
  uploadSessions,
  users,
} from "@db/schema";
import { createMailer, escapeHtml } from "@workers/adapters/mail";
import { log } from "@workers/lib/log";
import { signLink } from "@workers/lib/signed-links";
import { type ZipEntry, zipStream } from "@workers/lib/zip-stream";
import { and, eq, isNull, ne, sql } from "drizzle-orm";
import { versionBytes } from "~/shared/version-bytes";

// Work of the user's Durable Object that outlives a request, run in batches by
// its alarm (docs/decisions/0112-account-deletion-and-export.md):
// - the purge of a deleted account: R2 objects, then photo rows, a bounded
//   batch per alarm, resumable after any eviction because the state is in
//   storage and each batch is idempotent;
// - "export my data": a ZIP streamed into an R2 multipart upload, mailed as a
//   signed link that expires in 24 hours; the object is deleted then.

const PURGE = "purge";
const EXPORTS = "exports";
/** R2 keys deleted per alarm run (one list page, one delete call). */
export const PURGE_KEYS_PER_RUN = 1000;
/** Photo rows deleted per alarm run. */
export const PURGE_ROWS_PER_RUN = 500;
export const EXPORT_TTL_MS = 24 * 60 * 60 * 1000;
/** R2 multipart parts must all be the same size (but the last), at least 5 MiB. */
const PART_BYTES = 5 * 1024 * 1024;

interface ExportTask {
  id: string;
  /** Set once the archive is stored: when to delete it. */
  expiresAt?: number;
}

export function userPrefixes(userId: string): string[] {
  // candidates/: results their owner returned and let us keep for the structure check's set (ADR 0261).
  return [`photos/${userId}/`, `exports/${userId}/`, `candidates/${userId}/`];
}

export async function beginPurge(storage: DurableObjectStorage, now: number): Promise<void> {
  if (!(await storage.get(PURGE))) await storage.put(PURGE, { since: now });
}

export async function queueExport(storage: DurableObjectStorage, id: string): Promise<void> {
  const list = (await storage.get<ExportTask[]>(EXPORTS)) ?? [];
  if (!list.some((t) => t.id === id)) list.push({ id });
  await storage.put(EXPORTS, list);
}

/** When the alarm is next needed for this work (real clock), or null. */
export async function nextAt(storage: DurableObjectStorage): Promise<number | null> {
  if (await storage.get(PURGE)) return Date.now();
  const list = (await storage.get<ExportTask[]>(EXPORTS)) ?? [];
  let at: number | null = null;
  for (const t of list) {
    const due = t.expiresAt ?? Date.now();
    at = at === null ? due : Math.min(at, due);
  }
  return at;
}

/**
 * The ids of the user's photos that sit in a team's listing: they belong to the team (ADR 0280), so the purge of the
 * uploader's account leaves their rows, and their bytes under the uploader's prefix, where they are.
 */
async function teamPhotoIds(db: Database, userId: string): Promise<Set<string>> {
  const rows = await db
    .select({ id: photos.id })
    .from(photos)
    .where(and(eq(photos.userId, userId), inTeamListing()))
    .all();
  return new Set(rows.map((r) => r.id));
}

/** Up to one list page of the account's R2 keys that the purge deletes (not a team photo's); none when all are gone. */
async function doomedKeys(env: Env, userId: string, kept: Set<string>): Promise<string[]> {
  for (const prefix of userPrefixes(userId)) {
    let cursor: string | undefined;
    do {
      const page = await env.PHOTOS.list({ prefix, cursor, limit: PURGE_KEYS_PER_RUN });
      // photos/<user>/<photo>/...: a key of a team photo stays.
      const doomed = page.objects
        .map((o) => o.key)
        .filter((key) => !(prefix.startsWith("photos/") && kept.has(key.slice(prefix.length).split("/")[0]!)));
      if (doomed.length > 0) return doomed;
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
  }
  return [];
}

/** One batch of purge: true while more remains. */
export async function purgeStep(env: Env, db: Database, userId: string): Promise<boolean> {
  const kept = await teamPhotoIds(db, userId);
  const doomed = await doomedKeys(env, userId, kept);
  if (doomed.length > 0) {
    await env.PHOTOS.delete(doomed);
    return true;
  }
  // Jobs, versions and original links go with their photo (ON DELETE CASCADE); a team listing's photos stay.
  // A subquery, not a list of ids: D1 takes at most 100 bound parameters.
  const deleted = await db.run(
    sql`DELETE FROM photos WHERE id IN (SELECT id FROM photos WHERE user_id = ${userId} AND NOT ${inTeamListing()} LIMIT ${PURGE_ROWS_PER_RUN})`,
  );
  if ((deleted.meta.changes ?? 0) > 0) return true;
  await db.batch([
    db.delete(structureRecourses).where(eq(structureRecourses.userId, userId)),
    // A team's listing stays the team's, whoever made it.
    db.delete(folders).where(and(eq(folders.userId, userId), isNull(folders.teamId))),
    db.delete(uploadSessions).where(eq(uploadSessions.userId, userId)),
    db.delete(dataExports).where(eq(dataExports.userId, userId)),
  ]);
  // A job that finished during the purge may have stored a result: look once more.
  return (await doomedKeys(env, userId, await teamPhotoIds(db, userId))).length > 0;
}

/** Runs what is due; true when it should run again soon. */
export async function runDue(env: Env, db: Database, storage: DurableObjectStorage, userId: string): Promise<boolean> {
  if (await storage.get(PURGE)) {
    const more = await purgeStep(env, db, userId);
    if (!more) {
      await storage.delete([PURGE, EXPORTS]);
      // The operations page's deletion backlog counts accounts not purged yet.
      await db.update(users).set({ purgedAt: Date.now() }).where(eq(users.id, userId));
    }
    return more;
  }
  const list = (await storage.get<ExportTask[]>(EXPORTS)) ?? [];
  const now = Date.now();
  const kept: ExportTask[] = [];
  for (const task of list) {
    if (task.expiresAt === undefined) {
      const expiresAt = await buildExport(env, db, userId, task.id, now);
      if (expiresAt !== null) kept.push({ id: task.id, expiresAt });
    } else if (task.expiresAt <= now) {
      await env.PHOTOS.delete(exportKey(userId, task.id));
    } else kept.push(task);
  }
  await storage.put(EXPORTS, kept);
  return false;
}

export function exportKey(userId: string, id: string): string {
  return `exports/${userId}/${id}.zip`;
}

/** The JSON part of an export: the account, folders, photos, jobs, versions and ledger. */
export async function exportJson(db: Database, userId: string) {
  const [user, folderRows, photoRows, jobRows, versionRows, ledgerRows, payments, labels, keys] = await Promise.all([
    db.select().from(users).where(eq(users.id, userId)).get(),
    // The user's folders and photos they may reach now: a team listing and their uploads in it are the team's once they
    // are removed from it (ADR 0280), so a removed member's export leaves them out, with the versions of those photos.
    db
      .select()
      .from(folders)
      .where(and(eq(folders.userId, userId), reachableFolder(userId)))
      .all(),
    db
      .select()
      .from(photos)
      .where(and(eq(photos.userId, userId), reachablePhoto(userId)))
      .all(),
    db.select().from(jobs).where(eq(jobs.userId, userId)).all(),
    db
      .select()
      .from(photoVersions)
      .where(
        and(
          eq(photoVersions.userId, userId),
          inQuery(
            photoVersions.photoId,
            db
              .select({ id: photos.id })
              .from(photos)
              .where(and(eq(photos.userId, userId), reachablePhoto(userId))),
          ),
        ),
      )
      .all(),
    db.select().from(creditLedger).where(eq(creditLedger.userId, userId)).all(),
    db.select().from(paidPeriods).where(eq(paidPeriods.userId, userId)).all(),
    db.select().from(labelSettings).where(eq(labelSettings.userId, userId)).get(),
    db
      .select({
        id: apiKeys.id,
        name: apiKeys.name,
        prefix: apiKeys.prefix,
        createdAt: apiKeys.createdAt,
        revokedAt: apiKeys.revokedAt,
      })
      .from(apiKeys)
      .where(eq(apiKeys.userId, userId))
      .all(),
  ]);
  if (!user) return null;
  const { passwordHash: _p, ...account } = user;
  return {
    exportedAt: new Date().toISOString(),
    account,
    labelDefaults: labels ?? null,
    apiKeys: keys,
    folders: folderRows,
    photos: photoRows,
    jobs: jobRows,
    versions: versionRows,
    ledger: ledgerRows,
    payments,
  };
}

const ext = (t: string) => (t === "image/png" ? "png" : "jpg");

/**
 * A version's file in the export, as the byte rule allows (docs/decisions/0200-one-rule-for-a-versions-bytes.md):
 * the image itself, or, for a result the structure check refused and its owner has not kept, its preview (the
 * thumbnail the product shows of it), named as such, with a line for the README; no preview, no file.
 */
export function exportedVersion(v: PhotoVersion): { name: string; key: string | null; note: string | null } {
  const base = `photos/${v.photoId}/versions/${v.id}-${v.kind}`;
  const bytes = versionBytes(v, "shown");
  if (!bytes.ok) return { name: base, key: null, note: `${base}: left out. ${REFUSED_IN_EXPORT}` };
  if (bytes.standIn) {
    const name = `${base}-refused-preview.jpg`;
    return { name, key: bytes.key, note: `${name}: the preview only. ${REFUSED_IN_EXPORT}` };
  }
  return { name: `${base}.${ext(v.contentType)}`, key: bytes.key, note: null };
}

/** A version's change map in the export (ADR 0260). */
export function changesName(v: Pick<PhotoVersion, "photoId" | "id" | "kind">): string {
  return `photos/${v.photoId}/versions/${v.id}-${v.kind}-changes.png`;
}

/** Why a refused result is in the export as its preview at most. */
export const REFUSED_IN_EXPORT =
  "The structure check refused this result (it changed the room's walls, windows or doors), so it was not charged and is not given at full size. Keep it (1 credit) on the photo's page to download it in full.";

/** The export's README: what is in it, and every version given as its preview or left out. */
export function exportReadme(notes: string[]): string {
  const lines = [
    "Your Stagewise data export.",
    "",
    "account.json: your account, folders, photos, jobs, versions, credit ledger and payments.",
    "photos/<photo>/original.*: each photo as you uploaded it.",
    "photos/<photo>/versions/*: each result made from it.",
    "photos/<photo>/versions/*-changes.png: where the structure check saw the room change in that result (white: a line lost or added; gray: a changed area).",
  ];
  if (notes.length > 0)
    lines.push("", "Results given as their preview only, or left out:", ...notes.map((n) => `- ${n}`));
  return `${lines.join("\n")}\n`;
}

/** Streams the export into R2 and mails its link; the expiry, or null when it failed (and was marked so). */
async function buildExport(env: Env, db: Database, userId: string, id: string, now: number): Promise<number | null> {
  const row = await db
    .select()
    .from(dataExports)
    .where(and(eq(dataExports.id, id), eq(dataExports.userId, userId)))
    .get();
  // Failed includes ended by a password reset or a sign-out everywhere before it was built (ADR 0206): not built.
  if (!row || row.status === "failed") return null;
  const data = await exportJson(db, userId);
  if (!data || data.account.deletedAt !== null) return null;
  const entries: ZipEntry[] = [
    {
      name: "account.json",
      modifiedAt: now,
      open: async () => new TextEncoder().encode(JSON.stringify(data, null, 2)),
    },
  ];
  for (const p of data.photos) {
    entries.push({
      name: `photos/${p.id}/original.${ext(p.contentType)}`,
      modifiedAt: p.createdAt,
      open: async () => (await env.PHOTOS.get(p.originalKey))?.body ?? new Uint8Array(0),
    });
  }
  const notes: string[] = [];
  for (const v of data.versions) {
    const file = exportedVersion(v);
    if (file.note) notes.push(file.note);
    if (!file.key) continue;
    const key = file.key;
    entries.push({
      name: file.name,
      modifiedAt: v.createdAt,
      open: async () => (await env.PHOTOS.get(key))?.body ?? new Uint8Array(0),
    });
  }
  // The structure check's change map of each version that has one (ADR 0260), whatever its verdict.
  for (const v of data.versions) {
    const mapKey = v.structureMapKey;
    if (!mapKey) continue;
    entries.push({
      name: changesName(v),
      modifiedAt: v.createdAt,
      open: async () => (await env.PHOTOS.get(mapKey))?.body ?? new Uint8Array(0),
    });
  }
  entries.splice(1, 0, {
    name: "README.txt",
    modifiedAt: now,
    open: async () => new TextEncoder().encode(exportReadme(notes)),
  });
  const key = exportKey(userId, id);
  const upload = await env.PHOTOS.createMultipartUpload(key, { httpMetadata: { contentType: "application/zip" } });
  let bytes = 0;
  try {
    const parts: R2UploadedPart[] = [];
    const reader = zipStream(entries).stream.getReader();
    let buf = new Uint8Array(PART_BYTES);
    let fill = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let at = 0;
      while (at < value.byteLength) {
        const n = Math.min(PART_BYTES - fill, value.byteLength - at);
        buf.set(value.subarray(at, at + n), fill);
        fill += n;
        at += n;
        if (fill === PART_BYTES) {
          parts.push(await upload.uploadPart(parts.length + 1, buf));
          bytes += fill;
          buf = new Uint8Array(PART_BYTES);
          fill = 0;
        }
      }
    }
    if (fill > 0 || parts.length === 0) {
      parts.push(await upload.uploadPart(parts.length + 1, buf.slice(0, fill)));
      bytes += fill;
    }
    await upload.complete(parts);
  } catch (err) {
    await upload.abort().catch(() => undefined);
    await db.update(dataExports).set({ status: "failed" }).where(eq(dataExports.id, id));
    log.warn("export failed", { err });
    return null;
  }
  const expiresAt = now + EXPORT_TTL_MS;
  const stored = await db
    .update(dataExports)
    .set({ status: "ready", objectKey: key, bytes, readyAt: now, expiresAt })
    .where(and(eq(dataExports.id, id), ne(dataExports.status, "failed")))
    .returning({ id: dataExports.id });
  // Ended while it was being built (a reset, a sign-out everywhere): no link is mailed and no archive kept.
  if (stored.length === 0) {
    await env.PHOTOS.delete(key);
    return null;
  }
  const origin = env.APP_ORIGIN.replace(/\/$/, "");
  const sig = await signLink(env, "export", id, expiresAt);
  const url = `${origin}/api/exports/${id}?exp=${expiresAt}&sig=${sig}`;
  await createMailer(env)
    .send({
      to: data.account.email,
      subject: "Your Stagewise data export is ready",
      text: `Your export (${Math.ceil(bytes / 1024)} KB) is ready. Download it within 24 hours:\n\n${url}\n`,
      html: `<p>Your export (${Math.ceil(bytes / 1024)} KB) is ready. Download it within 24 hours:</p><p><a href="${escapeHtml(url)}">Download my data</a></p>`,
    })
    .catch((err) => log.warn("export mail failed", { err }));
  return expiresAt;
}
