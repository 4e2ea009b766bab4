import { type Photo, photos, type UploadSession, uploadSessions } from "@db/schema";
import { chunkKey, originalKey, thumbKey, uploadThumbKey } from "@workers/lib/photo-storage";
import { and, eq, lt, or } from "drizzle-orm";
import { hasCompleteEnding, IMAGE_HEAD_BYTES, readImageInfo } from "~/shared/image-format";
import { NOT_FOUND } from "~/shared/result";
import { MAX_UPLOAD_BYTES, pixelProblem, UPLOAD_MESSAGES } from "~/shared/upload-rules";
import {
  COMPLETION_LEASE_MS,
  findSession,
  newPhotoRow,
  type Refusal,
  reject,
  storedChunks,
  type UploadDeps,
} from "./uploads";

// Completing a resumable upload (docs/decisions/0040-resumable-uploads.md): the chunks are joined, the whole file
// is checked (its type, its ending, its size in pixels), and only then are the photo and its row stored. Any
// refusal of the bytes deletes everything the upload stored.

async function completedPhoto(deps: UploadDeps, s: UploadSession): Promise<{ ok: true; photo: Photo } | Refusal> {
  const photo = await deps.db
    .select()
    .from(photos)
    .where(and(eq(photos.id, s.photoId), eq(photos.userId, s.userId)))
    .get();
  return photo ? { ok: true, photo } : NOT_FOUND;
}

export async function completeUpload(
  deps: UploadDeps,
  userId: string,
  uploadId: string,
): Promise<{ ok: true; photo: Photo } | Refusal> {
  const now = deps.now ?? Date.now();
  const s = await findSession(deps.db, userId, uploadId);
  if (!s) return NOT_FOUND;
  // A retried completion (its answer was lost on the way) gets the same photo.
  if (s.status === "completed") return completedPhoto(deps, s);
  if (s.status !== "open" && s.status !== "completing") {
    return { ok: false, code: "conflict", error: "This upload is no longer open." };
  }

  // Claim the completion so two concurrent requests never both store the photo.
  const claim = await deps.db
    .update(uploadSessions)
    .set({ status: "completing", updatedAt: now })
    .where(
      and(
        eq(uploadSessions.id, s.id),
        or(
          eq(uploadSessions.status, "open"),
          and(eq(uploadSessions.status, "completing"), lt(uploadSessions.updatedAt, now - COMPLETION_LEASE_MS)),
        ),
      ),
    )
    .run();
  if (claim.meta.changes !== 1) {
    return { ok: false, code: "conflict", error: "This upload is already being completed.", retry: true };
  }
  const reopen = () =>
    deps.db.update(uploadSessions).set({ status: "open", updatedAt: now }).where(eq(uploadSessions.id, s.id));

  const chunks = await storedChunks(deps, s);
  const missing = Array.from({ length: s.chunkCount }, (_, i) => i).filter((i) => !chunks.has(i));
  // The thumbnail as it was sent; completion copies it to the photo's own key below (ADR 0347).
  const thumb = await deps.bucket.get(uploadThumbKey(userId, s.photoId));
  if (missing.length > 0 || !thumb) {
    await reopen();
    const error = missing.length > 0 ? UPLOAD_MESSAGES.incomplete : UPLOAD_MESSAGES.noThumb;
    return { ok: false, code: "conflict", error, missing };
  }

  // Join the chunks (at most 10 MB) and check the whole file before storing it.
  const whole = new Uint8Array(s.declaredBytes);
  const parts = await Promise.all(
    Array.from({ length: s.chunkCount }, (_, i) => deps.bucket.get(chunkKey(userId, s.photoId, i))),
  );
  let at = 0;
  for (const part of parts) {
    if (!part) {
      await reopen();
      return { ok: false, code: "conflict", error: UPLOAD_MESSAGES.incomplete, missing: [] };
    }
    const bytes = new Uint8Array(await part.arrayBuffer());
    if (at + bytes.byteLength > whole.byteLength)
      return reject(deps, s, "unprocessable", UPLOAD_MESSAGES.damaged, "completing");
    whole.set(bytes, at);
    at += bytes.byteLength;
  }
  if (at !== s.declaredBytes || at > MAX_UPLOAD_BYTES)
    return reject(deps, s, "unprocessable", UPLOAD_MESSAGES.damaged, "completing");
  const info = readImageInfo(whole.subarray(0, IMAGE_HEAD_BYTES));
  if (!info) return reject(deps, s, "unsupported_media_type", UPLOAD_MESSAGES.notAnImage, "completing");
  if (info.type !== s.contentType)
    return reject(deps, s, "unsupported_media_type", UPLOAD_MESSAGES.mismatch, "completing");
  if (!hasCompleteEnding(info.type, whole))
    return reject(deps, s, "unprocessable", UPLOAD_MESSAGES.damaged, "completing");
  const pixels = pixelProblem(info.width, info.height);
  if (pixels) return reject(deps, s, "unprocessable", pixels, "completing");

  const key = originalKey(userId, s.photoId);
  const stored = await deps.bucket.put(key, whole, {
    httpMetadata: { contentType: info.type },
    customMetadata: { userId },
  });
  if (stored.size !== s.declaredBytes) return reject(deps, s, "unprocessable", UPLOAD_MESSAGES.damaged, "completing");
  const finalThumb = thumbKey(userId, s.photoId);
  await deps.bucket.put(finalThumb, await thumb.arrayBuffer(), {
    httpMetadata: thumb.httpMetadata,
    customMetadata: thumb.customMetadata,
  });

  const photo = newPhotoRow({
    id: s.photoId,
    userId,
    name: s.name,
    originalKey: key,
    thumbKey: finalThumb,
    contentType: info.type,
    bytes: s.declaredBytes,
    width: info.width,
    height: info.height,
    thumbWidth: Number(thumb.customMetadata?.width ?? 0) || 1,
    thumbHeight: Number(thumb.customMetadata?.height ?? 0) || 1,
    createdAt: now,
  });
  try {
    await deps.db.batch([
      deps.db.insert(photos).values(photo),
      deps.db.update(uploadSessions).set({ status: "completed", updatedAt: now }).where(eq(uploadSessions.id, s.id)),
    ]);
  } catch (err) {
    await deps.bucket.delete([key, finalThumb]);
    await reopen();
    throw err;
  }
  await deps.bucket.delete([...[...chunks.values()].map((o) => o.key), uploadThumbKey(userId, s.photoId)]);
  return { ok: true, photo };
}
