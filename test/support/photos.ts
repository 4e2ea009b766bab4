import { env } from "cloudflare:workers";
import { type Photo, photos } from "@db/schema";
import { makeJpeg } from "@test/fixtures/images";
import { randomToken } from "@workers/lib/crypto";
import { originalKey, photoPrefix, thumbKey } from "@workers/lib/photo-storage";
import { eq, sql } from "drizzle-orm";
import { db } from "./factories";
import { workerFetch } from "./worker";

/** Every R2 key under a user's photos/{userId}/ prefix. */
export async function storedKeys(userId: string): Promise<string[]> {
  const list = await env.PHOTOS.list({ prefix: `photos/${userId}/` });
  return list.objects.map((o) => o.key);
}

export async function photoRows(userId: string): Promise<number> {
  const row = await db.select({ n: sql<number>`count(*)` }).from(photos).where(eq(photos.userId, userId)).get();
  return row?.n ?? 0;
}

const THUMB = makeJpeg(40, 30, 70);

/** A photo row with its bytes in R2, made directly (not through the upload API). */
export async function makePhoto(userId: string, opts: Partial<Photo> = {}): Promise<Photo> {
  const id = opts.id ?? randomToken();
  const photo: Photo = {
    id,
    userId,
    folderId: null,
    name: "Room",
    originalKey: originalKey(userId, id),
    thumbKey: thumbKey(userId, id),
    contentType: "image/jpeg",
    bytes: THUMB.byteLength,
    width: 40,
    height: 30,
    thumbWidth: 40,
    thumbHeight: 30,
    processedKey: null,
    processedThumbKey: null,
    processedContentType: null,
    processedAt: null,
    chosenAt: null,
    createdAt: Date.now(),
    trashedAt: null,
    purgingAt: null,
    ...opts,
  };
  await env.PHOTOS.put(photo.originalKey, THUMB, { httpMetadata: { contentType: "image/jpeg" } });
  await env.PHOTOS.put(photo.thumbKey, THUMB, { httpMetadata: { contentType: "image/jpeg" } });
  await db.insert(photos).values(photo);
  return photo;
}

/** Photo rows only (no bytes), in one D1 batch: for tests of paging and listing. */
export async function makePhotoRows(userId: string, count: number, createdAt: (i: number) => number): Promise<Photo[]> {
  const rows: Photo[] = Array.from({ length: count }, (_, i) => {
    const id = randomToken();
    return {
      id,
      userId,
      folderId: null,
      name: `Room ${i + 1}`,
      originalKey: originalKey(userId, id),
      thumbKey: thumbKey(userId, id),
      contentType: "image/jpeg",
      bytes: 1,
      width: 40,
      height: 30,
      thumbWidth: 40,
      thumbHeight: 30,
      processedKey: null,
      processedThumbKey: null,
      processedContentType: null,
      processedAt: null,
      chosenAt: null,
      createdAt: createdAt(i),
      trashedAt: null,
      purgingAt: null,
    };
  });
  const [first, ...rest] = rows.map((r) => db.insert(photos).values(r));
  if (first) await db.batch([first, ...rest]);
  return rows;
}

export { photoPrefix };

export interface UploadCall {
  status: number;
  body: Record<string, unknown>;
}

async function call(cookie: string, method: string, path: string, body?: BodyInit | object): Promise<UploadCall> {
  const isJson = body !== undefined && !(body instanceof Uint8Array) && typeof body === "object";
  const res = await workerFetch(path, {
    method,
    headers: { Cookie: cookie, ...(isJson ? { "Content-Type": "application/json" } : {}) },
    body: isJson ? JSON.stringify(body) : (body as BodyInit | undefined),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** The browser's side of the upload protocol, step by step. */
export function uploadClient(cookie: string) {
  return {
    create: (input: { name?: string; size: number; type: string }) =>
      call(cookie, "POST", "/api/uploads", { name: "photo.jpg", ...input }),
    chunk: (id: string, index: number, bytes: Uint8Array) =>
      call(cookie, "PUT", `/api/uploads/${id}/chunks/${index}`, bytes),
    thumb: (id: string, bytes: Uint8Array) => call(cookie, "PUT", `/api/uploads/${id}/thumb`, bytes),
    status: (id: string) => call(cookie, "GET", `/api/uploads/${id}`),
    complete: (id: string) => call(cookie, "POST", `/api/uploads/${id}/complete`),
    abort: (id: string) => call(cookie, "DELETE", `/api/uploads/${id}`),
  };
}

/** Uploads a whole file; returns the last answer (complete's, or the first refusal). */
export async function uploadWhole(
  cookie: string,
  bytes: Uint8Array,
  opts: { type?: string; name?: string; thumb?: Uint8Array } = {},
): Promise<UploadCall & { id?: string }> {
  const api = uploadClient(cookie);
  const created = await api.create({ name: opts.name, size: bytes.byteLength, type: opts.type ?? "image/jpeg" });
  if (created.status !== 201) return created;
  const id = created.body.id as string;
  const chunkSize = created.body.chunkSize as number;
  const thumb = await api.thumb(id, opts.thumb ?? THUMB);
  if (thumb.status !== 200) return { ...thumb, id };
  for (let i = 0; i * chunkSize < bytes.byteLength; i++) {
    const r = await api.chunk(id, i, bytes.subarray(i * chunkSize, (i + 1) * chunkSize));
    if (r.status !== 200) return { ...r, id };
  }
  return { ...(await api.complete(id)), id };
}
