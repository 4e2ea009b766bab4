import { readBinary } from "@workers/http/body";
import { failureJson } from "@workers/http/result";
import { serveObject } from "@workers/http/serve-object";
import { contentDisposition } from "@workers/lib/content-disposition";
import { storeMask } from "@workers/services/jobs/masks";
import { photoWithShown } from "@workers/services/jobs/versions";
import { getPhoto, listPhotos, type Photo } from "@workers/services/library";
import { Hono } from "hono";
import { viewFromSearch } from "~/shared/library-view";
import { MASK_MESSAGES, MAX_MASK_BYTES } from "~/shared/masks";
import { fail, NOT_FOUND } from "~/shared/result";
import { type StoredBytes, versionBytes } from "~/shared/version-bytes";
import { NO_STORE } from "./answers";
import { photoOwner } from "./photo-scope";
import { requireApiUser } from "./require-user";
import type { ApiEnv } from "./types";

// Photo bytes come from our origin, only to their owner (anyone else gets the
// same 404 as for a photo that does not exist), with private caching.

const EXTENSIONS: Record<string, string> = { "image/jpeg": "jpg", "image/png": "png" };

/**
 * The photo's own original, or the version it shows, as the byte rule allows it to leave in full (a refused result is
 * never shown until kept, so this refuses only what should never happen; app/shared/version-bytes.ts).
 */
function currentImage(found: { photo: Photo; shown: StoredBytes | null }, variant: string | undefined) {
  const { photo, shown } = found;
  if (shown && variant !== "original") {
    const bytes = versionBytes(shown, "full");
    if (!bytes.ok) return bytes;
    return {
      ok: true as const,
      key: bytes.key,
      type: photo.processedContentType ?? "image/jpeg",
      fileName: `${photo.name} (staged)`,
    };
  }
  return { ok: true as const, key: photo.originalKey, type: photo.contentType, fileName: photo.name };
}

/** Photo bytes vary with the session cookie (only the owner gets them) and answer 304 when unchanged. */
function serve(bucket: R2Bucket, request: Request, key: string, headers: Record<string, string>): Promise<Response> {
  return serveObject(bucket, key, { ...headers, Vary: "Cookie" }, request);
}

export const photosApi = new Hono<ApiEnv>()
  .use(requireApiUser)
  // The grid's pages as JSON, for scripts and other screens; /dashboard renders the same on the server.
  .get("/", async (c) => {
    const view = viewFromSearch(new URL(c.req.url).searchParams);
    const page = await listPhotos(c.get("db"), c.get("user")!.id, view, { cursor: c.req.query("cursor") });
    return c.json(page, 200, NO_STORE);
  })
  .get("/:id/thumb", async (c) => {
    const owner = await photoOwner(c, c.req.param("id"));
    const found = owner ? await photoWithShown(c.get("db"), owner, c.req.param("id")) : undefined;
    if (!found) return failureJson(NOT_FOUND);
    const { photo, shown } = found;
    const version = String(photo.processedAt ?? 0);
    // ?variant=original: the original's thumbnail (the photo view's strip), not the shown version's.
    let key = photo.thumbKey;
    if (shown && c.req.query("variant") !== "original") {
      const bytes = versionBytes(shown, "preview");
      if (!bytes.ok) return failureJson(bytes);
      key = bytes.key;
    }
    // The grid asks with the current version in the address, so that address never changes meaning.
    const cache = c.req.query("v") === version ? "private, max-age=31536000, immutable" : "private, no-cache";
    return serve(c.env.PHOTOS, c.req.raw, key, { "Cache-Control": cache });
  })
  .get("/:id/original", async (c) => {
    const owner = await photoOwner(c, c.req.param("id"));
    const photo = owner ? await getPhoto(c.get("db"), owner, c.req.param("id")) : undefined;
    if (!photo) return failureJson(NOT_FOUND);
    // The person's own upload, never a version: nothing for the byte rule to decide.
    const fileName = `${photo.name}.${EXTENSIONS[photo.contentType] ?? "jpg"}`;
    return serve(c.env.PHOTOS, c.req.raw, photo.originalKey, {
      "Cache-Control": "private, no-cache",
      "Content-Disposition": contentDisposition("inline", fileName),
    });
  })
  // A removal mask painted with the brush (docs/decisions/0195-removal-brush-masks.md): a PNG of at most 2 MB,
  // exactly the size of the image it was painted on (?source=original or a version's id; by default the image a
  // removal starts from). Answers its id, which the removal's job request names.
  .post("/:id/masks", async (c) => {
    const body = await readBinary(c.req.raw, ["image/png"], { maxBytes: MAX_MASK_BYTES });
    if (!body.ok) return failureJson(body.code === "too_large" ? fail("too_large", MASK_MESSAGES.tooLarge) : body);
    const owner = await photoOwner(c, c.req.param("id"));
    if (!owner) return failureJson(NOT_FOUND);
    const res = await storeMask(c.get("deps"), owner, c.req.param("id"), body.bytes, c.req.query("source"), {
      askedBy: c.get("user")!.id,
    });
    if (!res.ok) return failureJson(res);
    return c.json({ mask: res.mask }, 201, NO_STORE);
  })
  .get("/:id/download", async (c) => {
    const owner = await photoOwner(c, c.req.param("id"));
    const found = owner ? await photoWithShown(c.get("db"), owner, c.req.param("id")) : undefined;
    if (!found) return failureJson(NOT_FOUND);
    const file = currentImage(found, c.req.query("variant"));
    if (!file.ok) return failureJson(file);
    const fileName = `${file.fileName}.${EXTENSIONS[file.type] ?? "jpg"}`;
    return serve(c.env.PHOTOS, c.req.raw, file.key, {
      "Cache-Control": "private, no-cache",
      "Content-Disposition": contentDisposition("attachment", fileName),
    });
  });
