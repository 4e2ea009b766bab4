import { insertUnderCaps } from "@db/capped";
import type { Database } from "@db/client";
import { type Photo, type UploadSession, uploadSessions } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import {
  chunkKey,
  chunkPrefix,
  deletePrefix,
  listKeys,
  photoPrefix,
  readCapped,
  uploadThumbKey,
} from "@workers/lib/photo-storage";
import { and, eq, inArray, lt, sql } from "drizzle-orm";
import { hasCompleteEnding, IMAGE_HEAD_BYTES, readImageInfo, sniffImageType } from "~/shared/image-format";
import { type Failure, NOT_FOUND } from "~/shared/result";
import {
  ACCEPTED_UPLOAD_TYPES,
  CHUNK_SIZE,
  chunkCount,
  chunkLength,
  MAX_UPLOAD_BYTES,
  photoNameFromFileName,
  pixelProblem,
  THUMB_LONG_EDGE,
  THUMB_MAX_BYTES,
  UPLOAD_MESSAGES,
} from "~/shared/upload-rules";

// Resumable uploads (docs/decisions/0040-resumable-uploads.md): the browser
// declares a photo, sends it in small chunks that R2 keeps as temporary
// objects, sends a thumbnail, and asks to complete. Completion joins the
// chunks, checks the whole file, and only then stores the photo and its row.
// Any refusal of the bytes deletes everything the upload stored.

/** A newly stored photo's row: in no folder, not staged yet, not in the trash. */
export function newPhotoRow(
  p: Omit<
    Photo,
    | "folderId"
    | "processedKey"
    | "processedThumbKey"
    | "processedContentType"
    | "processedAt"
    | "chosenAt"
    | "trashedAt"
    | "purgingAt"
  >,
): Photo {
  return {
    ...p,
    folderId: null,
    processedKey: null,
    processedThumbKey: null,
    processedContentType: null,
    processedAt: null,
    chosenAt: null,
    trashedAt: null,
    purgingAt: null,
  };
}
export interface UploadDeps {
  db: Database;
  bucket: R2Bucket;
  now?: number;
}

/** Why an upload step was refused; `missing` lists chunks still to send, `retry` says trying again later may work. */
export type Refusal = Failure & { missing?: number[]; retry?: boolean };

export const MAX_OPEN_UPLOADS = 10;
/** An open upload untouched this long is abandoned: the daily cron deletes its bytes. */
export const STALE_UPLOAD_MS = 24 * 60 * 60 * 1000;
/** A completion that has not finished in this long may be taken over by a retry. */
export const COMPLETION_LEASE_MS = 60 * 1000;
/** Thumbnails are made for a 400 px long edge; allow some room, never a full photo. */
export const THUMB_MAX_EDGE = Math.round(THUMB_LONG_EDGE * 1.5);

export function isAccepted(type: string): type is (typeof ACCEPTED_UPLOAD_TYPES)[number] {
  return (ACCEPTED_UPLOAD_TYPES as readonly string[]).includes(type);
}

export async function findSession(db: Database, userId: string, uploadId: string): Promise<UploadSession | undefined> {
  return db
    .select()
    .from(uploadSessions)
    .where(and(eq(uploadSessions.id, uploadId), eq(uploadSessions.userId, userId)))
    .get();
}

/** Refuses the upload's bytes: deletes everything it stored and closes it. */
/**
 * Refuses an upload's bytes and deletes everything it stored, only while the upload is still as its caller found it
 * (`from`: a part or a thumbnail is refused while open, completion refuses what it holds): a part refused while a
 * completion finished meanwhile must not delete the finished photo (ADR 0347).
 */
export async function reject(
  deps: UploadDeps,
  s: UploadSession,
  code: Refusal["code"],
  error: string,
  from: "open" | "completing" = "open",
): Promise<Refusal> {
  const closed = await deps.db
    .update(uploadSessions)
    .set({ status: "rejected", updatedAt: deps.now ?? Date.now() })
    .where(and(eq(uploadSessions.id, s.id), eq(uploadSessions.status, from)))
    .run();
  if (closed.meta.changes !== 1) return { ok: false, code: "conflict", error: "This upload is no longer open." };
  await deletePrefix(deps.bucket, photoPrefix(s.userId, s.photoId));
  return { ok: false, code, error };
}

export interface CreatedUpload {
  ok: true;
  id: string;
  chunkSize: number;
  chunkCount: number;
}

export async function createUpload(
  deps: UploadDeps,
  userId: string,
  input: { name: string; size: number; type: string },
): Promise<CreatedUpload | Refusal> {
  const now = deps.now ?? Date.now();
  if (!isAccepted(input.type)) return { ok: false, code: "unsupported_media_type", error: UPLOAD_MESSAGES.wrongType };
  if (input.size > MAX_UPLOAD_BYTES) return { ok: false, code: "too_large", error: UPLOAD_MESSAGES.tooLarge };
  if (input.size <= 0) return { ok: false, code: "invalid", error: UPLOAD_MESSAGES.empty };

  const id = randomToken();
  const count = chunkCount(input.size, CHUNK_SIZE);
  const open = deps.db
    .select({ n: sql<number>`count(*)` })
    .from(uploadSessions)
    .where(
      and(
        eq(uploadSessions.userId, userId),
        inArray(uploadSessions.status, ["open", "completing"]),
        sql`${uploadSessions.updatedAt} > ${now - STALE_UPLOAD_MS}`,
      ),
    );
  const over = await insertUnderCaps(
    deps.db,
    deps.db.insert(uploadSessions).values({
      id,
      userId,
      photoId: randomToken(),
      name: photoNameFromFileName(input.name),
      contentType: input.type,
      declaredBytes: input.size,
      chunkSize: CHUNK_SIZE,
      chunkCount: count,
      status: "open",
      createdAt: now,
      updatedAt: now,
    }),
    [{ count: open, max: MAX_OPEN_UPLOADS }],
    () => deps.db.delete(uploadSessions).where(eq(uploadSessions.id, id)),
  );
  if (over !== null) return { ok: false, code: "rate_limited", error: UPLOAD_MESSAGES.tooManyOpen };
  return { ok: true, id, chunkSize: CHUNK_SIZE, chunkCount: count };
}

/** After a write, makes sure the upload was not closed meanwhile; if it was, takes the write back. */
export async function keepOnlyIfOpen(deps: UploadDeps, s: UploadSession, key: string): Promise<Refusal | null> {
  const now = await findSession(deps.db, s.userId, s.id);
  if (now?.status === "open") {
    await deps.db
      .update(uploadSessions)
      .set({ updatedAt: deps.now ?? Date.now() })
      .where(eq(uploadSessions.id, s.id));
    return null;
  }
  await deps.bucket.delete(key);
  return { ok: false, code: "conflict", error: "This upload is no longer open." };
}

export async function putChunk(
  deps: UploadDeps,
  userId: string,
  uploadId: string,
  index: number,
  body: ReadableStream<Uint8Array> | null,
): Promise<{ ok: true; index: number } | Refusal> {
  const s = await findSession(deps.db, userId, uploadId);
  if (!s) return NOT_FOUND;
  if (s.status !== "open") return { ok: false, code: "conflict", error: "This upload is no longer open." };
  if (!Number.isInteger(index) || index < 0 || index >= s.chunkCount) {
    return { ok: false, code: "invalid", error: "There is no such part in this upload." };
  }
  const expected = chunkLength(index, s.declaredBytes, s.chunkSize);
  const bytes = await readCapped(body, expected);
  if (bytes === "too-large") return reject(deps, s, "too_large", "This part is larger than the upload declared.");
  if (bytes.byteLength !== expected) return reject(deps, s, "unprocessable", UPLOAD_MESSAGES.damaged);
  if (index === 0) {
    const type = sniffImageType(bytes);
    if (type === null) return reject(deps, s, "unsupported_media_type", UPLOAD_MESSAGES.notAnImage);
    if (type !== s.contentType) return reject(deps, s, "unsupported_media_type", UPLOAD_MESSAGES.mismatch);
    // The header's dimensions, checked before a byte is kept (again at completion, when the whole file is there).
    const head = readImageInfo(bytes.subarray(0, IMAGE_HEAD_BYTES));
    const pixels = head ? pixelProblem(head.width, head.height) : null;
    if (pixels) return reject(deps, s, "unprocessable", pixels);
  }
  const key = chunkKey(userId, s.photoId, index);
  await deps.bucket.put(key, bytes);
  const closed = await keepOnlyIfOpen(deps, s, key);
  return closed ?? { ok: true, index };
}

export async function putThumb(
  deps: UploadDeps,
  userId: string,
  uploadId: string,
  body: ReadableStream<Uint8Array> | null,
): Promise<{ ok: true } | Refusal> {
  const s = await findSession(deps.db, userId, uploadId);
  if (!s) return NOT_FOUND;
  if (s.status !== "open") return { ok: false, code: "conflict", error: "This upload is no longer open." };
  const bytes = await readCapped(body, THUMB_MAX_BYTES);
  if (bytes === "too-large") return reject(deps, s, "too_large", UPLOAD_MESSAGES.thumbTooLarge);
  const info = readImageInfo(bytes.subarray(0, IMAGE_HEAD_BYTES));
  if (!info) return reject(deps, s, "unsupported_media_type", UPLOAD_MESSAGES.notAnImage);
  if (!hasCompleteEnding(info.type, bytes)) return reject(deps, s, "unprocessable", UPLOAD_MESSAGES.damaged);
  if (Math.max(info.width, info.height) > THUMB_MAX_EDGE)
    return reject(deps, s, "unprocessable", UPLOAD_MESSAGES.thumbTooLarge);
  const key = uploadThumbKey(userId, s.photoId);
  await deps.bucket.put(key, bytes, {
    httpMetadata: { contentType: info.type },
    customMetadata: { width: String(info.width), height: String(info.height) },
  });
  return (await keepOnlyIfOpen(deps, s, key)) ?? { ok: true };
}

export async function storedChunks(deps: UploadDeps, s: UploadSession): Promise<Map<number, R2Object>> {
  const found = new Map<number, R2Object>();
  for (const obj of await listKeys(deps.bucket, chunkPrefix(s.userId, s.photoId))) {
    const index = Number(obj.key.slice(obj.key.lastIndexOf("/") + 1));
    if (obj.size === chunkLength(index, s.declaredBytes, s.chunkSize)) found.set(index, obj);
  }
  return found;
}

export interface UploadStatus {
  ok: true;
  id: string;
  status: UploadSession["status"];
  size: number;
  chunkSize: number;
  chunkCount: number;
  received: number[];
  thumb: boolean;
  photoId: string | null;
}

export async function uploadStatus(
  deps: UploadDeps,
  userId: string,
  uploadId: string,
): Promise<UploadStatus | Refusal> {
  const s = await findSession(deps.db, userId, uploadId);
  if (!s) return NOT_FOUND;
  const live = s.status === "open" || s.status === "completing";
  const received = live ? [...(await storedChunks(deps, s)).keys()].sort((a, b) => a - b) : [];
  const thumb = live ? (await deps.bucket.head(uploadThumbKey(userId, s.photoId))) !== null : false;
  return {
    ok: true,
    id: s.id,
    status: s.status,
    size: s.declaredBytes,
    chunkSize: s.chunkSize,
    chunkCount: s.chunkCount,
    received,
    thumb,
    photoId: s.status === "completed" ? s.photoId : null,
  };
}

export async function abortUpload(
  deps: UploadDeps,
  userId: string,
  uploadId: string,
): Promise<{ ok: true; status: UploadSession["status"] } | Refusal> {
  const s = await findSession(deps.db, userId, uploadId);
  if (!s) return NOT_FOUND;
  const now = deps.now ?? Date.now();
  if (s.status === "completed") return { ok: false, code: "conflict", error: "This photo has already been uploaded." };
  if (s.status === "completing" && s.updatedAt >= now - COMPLETION_LEASE_MS) {
    return { ok: false, code: "conflict", error: "This upload is already being completed.", retry: true };
  }
  if (s.status === "open" || s.status === "completing") {
    await deps.db.update(uploadSessions).set({ status: "aborted", updatedAt: now }).where(eq(uploadSessions.id, s.id));
    await deletePrefix(deps.bucket, photoPrefix(userId, s.photoId));
    return { ok: true, status: "aborted" };
  }
  return { ok: true, status: s.status };
}

/** Daily cron: deletes the bytes of uploads left unfinished for a day, and forgets old closed ones. */
export async function expireStaleUploads(deps: UploadDeps, limit = 200): Promise<number> {
  const now = deps.now ?? Date.now();
  const stale = await deps.db
    .select()
    .from(uploadSessions)
    .where(
      and(inArray(uploadSessions.status, ["open", "completing"]), lt(uploadSessions.updatedAt, now - STALE_UPLOAD_MS)),
    )
    .limit(limit)
    .all();
  for (const s of stale) {
    await deps.db
      .update(uploadSessions)
      .set({ status: "expired", updatedAt: now })
      .where(and(eq(uploadSessions.id, s.id), inArray(uploadSessions.status, ["open", "completing"])));
    await deletePrefix(deps.bucket, photoPrefix(s.userId, s.photoId));
  }
  await deps.db
    .delete(uploadSessions)
    .where(
      and(
        inArray(uploadSessions.status, ["completed", "aborted", "rejected", "expired"]),
        lt(uploadSessions.updatedAt, now - 7 * STALE_UPLOAD_MS),
      ),
    );
  return stale.length;
}
