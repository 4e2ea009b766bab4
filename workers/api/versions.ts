import { failureJson } from "@workers/http/result";
import { serveObject } from "@workers/http/serve-object";
import { contentDisposition } from "@workers/lib/content-disposition";
import { verifiedKey } from "@workers/lib/signed-urls";
import { changeMapKey, getVersion, listVersions, makerNames } from "@workers/services/jobs/versions";
import { getPhoto } from "@workers/services/library";
import { photoListing } from "@workers/services/listing-look";
import { Hono } from "hono";
import { fail, NOT_FOUND } from "~/shared/result";
import { fullBytesAllowed, versionBytes } from "~/shared/version-bytes";
import { toVersionView } from "~/shared/version-view";
import { NO_STORE } from "./answers";
import { photoOwner } from "./photo-scope";
import { requireApiUser } from "./require-user";
import type { ApiEnv } from "./types";

// The versions a photo's jobs produce, and the images behind them: the owner's (or a teammate's in a team listing)
// only; anyone else gets the same 404 as for one that does not exist. The provider reads its input through a signed
// address instead of a cookie.

export const versionsApi = new Hono<ApiEnv>()
  // The provider fetches our image through this signed address (no cookie). The signature vouches for the stored
  // object, so serving it reads no row: the signer applied the byte rule (ADR 0200), and a deleted photo's bytes go
  // before its row (library.ts), so a gone photo is a 404 here too (ADR 0328).
  .get("/signed/photos/:photoId/:variant", async (c) => {
    const { photoId, variant } = c.req.param();
    const key = await verifiedKey(c.env, "photo", photoId, variant, c.req.query(), Date.now());
    if (!key) return failureJson(fail("forbidden", "Forbidden."));
    return serveObject(c.env.PHOTOS, key, NO_STORE);
  })
  // ... and the removal's mask (docs/decisions/0195-removal-brush-masks.md).
  .get("/signed/photos/:photoId/masks/:maskId", async (c) => {
    const { photoId, maskId } = c.req.param();
    const key = await verifiedKey(c.env, "mask", photoId, maskId, c.req.query(), Date.now());
    if (!key) return failureJson(fail("forbidden", "Forbidden."));
    // The photo's one mask, only while it is the one signed for: a newer mask replaced it otherwise.
    return serveObject(c.env.PHOTOS, key, NO_STORE, undefined, (o) => {
      return o.customMetadata?.id === maskId;
    });
  })
  .use("/photos/:id/versions", requireApiUser)
  .use("/photos/:id/versions/*", requireApiUser)
  .get("/photos/:id/versions", async (c) => {
    const db = c.get("db");
    const owner = await photoOwner(c, c.req.param("id"));
    const photo = owner ? await getPhoto(db, owner, c.req.param("id")) : undefined;
    if (!owner || !photo) return failureJson(NOT_FOUND);
    const versions = await listVersions(db, owner, photo.id);
    // The photo's listing (its folder) and its look: "Use this look for the listing" is offered only in one.
    const listing = await photoListing(db, owner, photo);
    // Who made each version, and when (createdAt): in a team listing, any member.
    const names = await makerNames(
      db,
      versions.map((v) => v.createdBy ?? v.userId),
    );
    const views = versions.map((v) => ({
      ...toVersionView(v, photo.processedKey),
      createdByName: names.get(v.createdBy ?? v.userId) ?? "",
    }));
    return c.json({ versions: views, listing }, 200, NO_STORE);
  })
  // The structure check's change map (ADR 0260): its owner's only; anyone else gets the 404 of a missing version.
  .get("/photos/:id/versions/:versionId/changes", async (c) => {
    const { id, versionId } = c.req.param();
    const owner = await photoOwner(c, id);
    if (!owner) return failureJson(NOT_FOUND);
    const map = await changeMapKey(c.get("db"), owner, id, versionId);
    if (!map.ok) return failureJson(map);
    return serveObject(c.env.PHOTOS, map.key, { "Cache-Control": "private, no-cache", Vary: "Cookie" }, c.req.raw);
  })
  .get("/photos/:id/versions/:versionId/:variant{image|thumb|download}", async (c) => {
    const { id, versionId, variant } = c.req.param();
    const owner = await photoOwner(c, id);
    const version = owner ? await getVersion(c.get("db"), owner, id, versionId) : undefined;
    if (!owner || !version) return failureJson(NOT_FOUND);
    const headers: Record<string, string> = { "Cache-Control": "private, max-age=31536000, immutable", Vary: "Cookie" };
    // A result the structure check refused was not charged: it is shown (at thumbnail size) until its owner keeps it,
    // and never downloaded; without a thumbnail, no preview rather than the full image (ADR 0200).
    const bytes = versionBytes(version, variant === "download" ? "full" : variant === "thumb" ? "preview" : "shown");
    if (!bytes.ok) return failureJson(bytes);
    // Kept later, the same address gives the image: not cached as if the preview were final.
    if (!fullBytesAllowed(version)) headers["Cache-Control"] = "private, no-cache";
    if (variant === "download") {
      const photo = await getPhoto(c.get("db"), owner, id);
      const ext = version.contentType === "image/png" ? "png" : "jpg";
      headers["Content-Disposition"] = contentDisposition(
        "attachment",
        `${photo?.name ?? "photo"} (${version.kind} ${new Date(version.createdAt).toISOString().slice(0, 10)}).${ext}`,
      );
    }
    // A thumbnail still being made is the image itself for a moment: not cached as if it were final.
    if (variant === "thumb" && version.thumbKey === version.key) headers["Cache-Control"] = "private, no-cache";
    return serveObject(c.env.PHOTOS, bytes.key, headers);
  });
