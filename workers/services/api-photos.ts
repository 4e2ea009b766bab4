import type { Photo } from "@db/schema";
import { photos } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { originalKey, readCapped, thumbKey } from "@workers/lib/photo-storage";
import { guardedFetch, type UrlPolicy } from "@workers/lib/safe-url";
import { putRetrying } from "@workers/lib/stored-retry";
import { hasCompleteEnding, readImageInfo } from "~/shared/image-format";
import { fail, ok, type Result } from "~/shared/result";
import { cutText } from "~/shared/text";
import {
  ACCEPTED_UPLOAD_TYPES,
  MAX_UPLOAD_BYTES,
  photoNameFromFileName,
  pixelProblem,
  UPLOAD_MESSAGES,
} from "~/shared/upload-rules";
import type { Deps } from "./request-deps";
import { newPhotoRow } from "./uploads";

// Photos sent whole through the public API (docs/decisions/0120-public-api.md): as a multipart file, or by a URL our
// server fetches. The same rules as the browser's resumable upload (docs/decisions/0040-resumable-uploads.md): JPG or
// PNG by their bytes, 10 MB at most, a complete file, and the pixel limit (ADR 0103). Here the server makes the
// thumbnail, through the Images binding: the photo is described from its header and never decoded on this isolate
// (docs/decisions/0210-api-photos-never-decoded-here.md): a JavaScript decode of a phone's photo needs several times a
// Worker's memory (the figures are in that ADR).

/** How long fetching a photo by URL may take, headers and body together. */
export const FETCH_TIMEOUT_MS = 15_000;

/** Checks the bytes and stores the photo, its thumbnail and its row. */
export async function storeApiPhoto(
  deps: Pick<Deps, "db" | "bucket" | "clock" | "images">,
  userId: string,
  fileName: string,
  bytes: Uint8Array,
  /** The listing it goes to: a team key's own team listing (ADR 0295); none for a personal key. */
  folderId: string | null = null,
): Promise<Result<{ photo: Photo }>> {
  if (bytes.byteLength === 0) return fail("invalid", UPLOAD_MESSAGES.empty);
  if (bytes.byteLength > MAX_UPLOAD_BYTES) return fail("too_large", UPLOAD_MESSAGES.tooLarge);
  // The whole file is here, so its header is read wherever its frame header is (not only in the first 64 KiB).
  const info = readImageInfo(bytes);
  if (!info || !(ACCEPTED_UPLOAD_TYPES as readonly string[]).includes(info.type)) {
    return fail("unsupported_media_type", UPLOAD_MESSAGES.notAnImage);
  }
  if (!hasCompleteEnding(info.type, bytes)) return fail("invalid", UPLOAD_MESSAGES.damaged);
  const pixels = pixelProblem(info.width, info.height);
  if (pixels) return fail("too_large", pixels);
  // The binding decodes (JPEG or PNG alike) and answers a JPEG of at most 400 px; a file it cannot read is refused.
  let thumb: Uint8Array;
  try {
    thumb = await deps.images.thumbnail(bytes);
  } catch {
    return fail("invalid", UPLOAD_MESSAGES.unreadable);
  }
  // Its size from its own header: the binding turns the photo upright by its EXIF orientation, as browsers show it.
  const thumbSize = readImageInfo(thumb);
  if (!thumbSize) return fail("invalid", UPLOAD_MESSAGES.unreadable);
  const id = randomToken();
  const now = deps.clock();
  const key = originalKey(userId, id);
  const tKey = thumbKey(userId, id);
  await putRetrying(deps.bucket, key, bytes, { httpMetadata: { contentType: info.type }, customMetadata: { userId } });
  await putRetrying(deps.bucket, tKey, thumb, {
    httpMetadata: { contentType: "image/jpeg" },
    customMetadata: { width: String(thumbSize.width), height: String(thumbSize.height) },
  });
  const photo: Photo = {
    ...newPhotoRow({
      id,
      userId,
      name: photoNameFromFileName(fileName),
      originalKey: key,
      thumbKey: tKey,
      contentType: info.type,
      bytes: bytes.byteLength,
      width: info.width,
      height: info.height,
      thumbWidth: thumbSize.width,
      thumbHeight: thumbSize.height,
      createdAt: now,
    }),
    folderId,
  };
  try {
    await deps.db.insert(photos).values(photo);
  } catch (err) {
    await deps.bucket.delete([key, tKey]);
    throw err;
  }
  return ok({ photo });
}

/** Fetches a photo by URL under the SSRF guard, the timeout and the size cap; nothing is stored here. */
export async function fetchPhoto(
  policy: UrlPolicy,
  url: string,
  fetchImpl: typeof fetch = fetch,
): Promise<Result<{ bytes: Uint8Array; fileName: string }>> {
  const got = await guardedFetch(url, policy, {
    method: "GET",
    headers: { Accept: "image/jpeg, image/png", "User-Agent": "Stagewise-Fetch/1" },
    timeoutMs: FETCH_TIMEOUT_MS,
    // Past the upload limit the stream is cut off; readCapped below answers "too large" first.
    maxBodyBytes: 2 * MAX_UPLOAD_BYTES,
    fetchImpl,
  });
  if (!got.ok) return fail("invalid", `The photo could not be fetched: ${got.reason}`);
  const res = got.response;
  if (!res.ok) {
    await res.body?.cancel();
    return fail("invalid", `The photo could not be fetched: the address answered ${res.status}.`);
  }
  const declared = Number(res.headers.get("Content-Length") ?? "0");
  if (declared > MAX_UPLOAD_BYTES) {
    await res.body?.cancel();
    return fail("too_large", UPLOAD_MESSAGES.tooLarge);
  }
  let bytes: Uint8Array | "too-large";
  try {
    bytes = await readCapped(res.body, MAX_UPLOAD_BYTES);
  } catch {
    return fail("invalid", "The photo could not be fetched: the connection dropped or took too long.");
  }
  if (bytes === "too-large") return fail("too_large", UPLOAD_MESSAGES.tooLarge);
  let last = got.url.pathname.split("/").pop() ?? "";
  try {
    last = decodeURIComponent(last);
  } catch {
    // Keep it as sent.
  }
  last = cutText(last, 255);
  return ok({ bytes, fileName: last || "photo" });
}
