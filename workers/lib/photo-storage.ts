import { deleteRetrying } from "./stored-retry";

// Where a photo's bytes live in R2. Everything of one photo (its chunks while
// uploading, the original, the thumbnail, later its processed versions) sits
// under one prefix, so one listing finds all of it and nothing leaks on delete.

/** Every photo of one user. */
export function userPrefix(userId: string): string {
  return `photos/${userId}/`;
}

/**
 * Whose prefix a job's result is stored under: a team listing's job (`teamId` set) under the team's, `photos/team-<id>/`
 * (docs/decisions/0280-shared-team-listings.md), so neither the member who ran it nor the photo's uploader takes it
 * with them when their account is purged; any other job under its user's, beside the photo's original.
 */
export function resultOwner(job: { userId: string; teamId?: string | null }): string {
  return job.teamId ? `team-${job.teamId}` : job.userId;
}

export function photoPrefix(userId: string, photoId: string): string {
  return `${userPrefix(userId)}${photoId}/`;
}

export function chunkPrefix(userId: string, photoId: string): string {
  return `${photoPrefix(userId, photoId)}chunks/`;
}

export function chunkKey(userId: string, photoId: string, index: number): string {
  return `${chunkPrefix(userId, photoId)}${String(index).padStart(4, "0")}`;
}

export function originalKey(userId: string, photoId: string): string {
  return `${photoPrefix(userId, photoId)}original`;
}

/** Whether `key` is a photo's original, as originalKey names it (a user's or a team's photo). */
export function isOriginalKey(key: string): boolean {
  return /^photos\/[A-Za-z0-9_-]+\/[A-Za-z0-9_-]+\/original$/.test(key);
}

export function thumbKey(userId: string, photoId: string): string {
  return `${photoPrefix(userId, photoId)}thumb`;
}

/**
 * Where an upload keeps the thumbnail it was sent until completion copies it to thumbKey (ADR 0347): a late
 * thumbnail taken back after completion deletes this key, never the finished photo's thumbnail.
 */
export function uploadThumbKey(userId: string, photoId: string): string {
  return `${photoPrefix(userId, photoId)}upload-thumb`;
}

/**
 * The photo's removal mask: one per photo, the newest painted, under the photo's prefix so it goes when the photo
 * does (docs/decisions/0211-masks-decoded-once-per-photo.md). Its id (the SHA-256 of its bytes) and pixel size are in
 * its custom metadata (MaskMetadata).
 */
export function maskKey(userId: string, photoId: string): string {
  return `${photoPrefix(userId, photoId)}mask.png`;
}

/** What a stored mask's custom metadata holds. */
export interface MaskMetadata {
  id: string;
  width: string;
  height: string;
}

/** The photo's stored mask when it is the one named `maskId` (not since replaced), with its pixel size; else null. */
export async function storedMask(
  bucket: R2Bucket,
  userId: string,
  photoId: string,
  maskId: string,
): Promise<{ width: number; height: number } | null> {
  const head = await bucket.head(maskKey(userId, photoId));
  const meta = head?.customMetadata as Partial<MaskMetadata> | undefined;
  if (!meta || meta.id !== maskId) return null;
  return { width: Number(meta.width), height: Number(meta.height) };
}

/** Every key under a prefix (R2 lists at most 1,000 per call). */
export async function listKeys(bucket: R2Bucket, prefix: string): Promise<R2Object[]> {
  const found: R2Object[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix, cursor, limit: 1000 });
    found.push(...page.objects);
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return found;
}

/** Deletes every object under a prefix; returns how many there were. */
export async function deletePrefix(bucket: R2Bucket, prefix: string): Promise<number> {
  const keys = (await listKeys(bucket, prefix)).map((o) => o.key);
  for (let i = 0; i < keys.length; i += 1000) await deleteRetrying(bucket, keys.slice(i, i + 1000));
  return keys.length;
}

/**
 * Reads a request body into memory, refusing it once it passes `max` bytes
 * (whatever Content-Length claimed), so an oversized body is never stored.
 */
export async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  max: number,
): Promise<Uint8Array | "too-large"> {
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => undefined);
      return "too-large";
    }
    parts.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
