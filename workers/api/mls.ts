import { readJson } from "@workers/http/body";
import { failureJson } from "@workers/http/result";
import { contentDisposition } from "@workers/lib/content-disposition";
import { secureCookies } from "@workers/services/current-user";
import { getVersion } from "@workers/services/jobs/start";
import { getPhoto } from "@workers/services/library";
import { deleteAccount, openExport, requestExport } from "@workers/services/mls/account-data";
import { getLabelDefaults, labelChoiceFrom, labelledBytes } from "@workers/services/mls/labels";
import { ensureLink, originalPageUrl, PUBLIC_CACHE, resolveLink, revokeLinks } from "@workers/services/mls/links";
import { listingInput, listingPack, saveListing } from "@workers/services/mls/pack";
import { clearSessionCookie } from "@workers/services/sessions";
import { Hono } from "hono";
import { z } from "zod";
import { fail, NOT_FOUND } from "~/shared/result";
import { mlsRefusal } from "~/shared/version-view";
import { NO_STORE } from "./answers";
import { requireApiUser } from "./require-user";
import type { ApiEnv } from "./types";

// MLS-ready output and the agent's data (docs/decisions/0110, 0111, 0112):
// labelled downloads, original-page links, listing packs, the public original
// page's images, account deletion and export. Anyone but the owner gets the
// same 404 as for a thing that does not exist.

/** Public: the images of an original page (/o/<token>), tokened; 410 from the moment the link is revoked. */
export const originalImagesApi = new Hono<ApiEnv>().get("/:token/:which{original|staged}", async (c) => {
  const found = await resolveLink(c.get("db"), c.req.param("token"));
  if (!found.ok) return failureJson(found);
  const { page } = found;
  const etag = `${page.etag.slice(0, -1)}-${c.req.param("which")}"`;
  const headers = new Headers({ "Cache-Control": PUBLIC_CACHE, ETag: etag, "X-Robots-Tag": "noindex" });
  if (c.req.header("If-None-Match") === etag) return new Response(null, { status: 304, headers });
  const original = c.req.param("which") === "original";
  const obj = await c.env.PHOTOS.get(original ? page.originalKey : page.stagedKey);
  if (!obj) return failureJson(fail("gone", "This image is no longer available."));
  headers.set("Content-Type", original ? page.originalType : page.stagedType);
  headers.set("Content-Length", String(obj.size));
  return new Response(obj.body, { headers });
});

/** Public: a mailed export link (signed, 24 hours). */
export const exportsApi = new Hono<ApiEnv>().get("/:id", async (c) => {
  const res = await openExport(c.get("deps"), c.req.param("id"), c.req.query("exp"), c.req.query("sig"));
  if (!res.ok) return failureJson(res);
  return new Response(res.body, {
    headers: {
      "Content-Type": "application/zip",
      "Content-Length": String(res.size),
      "Content-Disposition": contentDisposition("attachment", "stagewise-export.zip"),
      ...NO_STORE,
    },
  });
});

export const mlsApi = new Hono<ApiEnv>()
  .use("/photos/*", requireApiUser)
  .use("/folders/*", requireApiUser)
  .use("/account/*", requireApiUser)
  // A version with the disclosure label burned in (the user's defaults, or ?text=&corner=&size=&tone=&qr=, or ?label=none).
  .get("/photos/:id/versions/:versionId/labelled", async (c) => {
    const user = c.get("user")!;
    const { db, bucket, origin, clock } = c.get("deps");
    const version = await getVersion(db, user.id, c.req.param("id"), c.req.param("versionId"));
    if (!version) return failureJson(NOT_FOUND);
    const notForListing = mlsRefusal(version.structureVerdict);
    if (notForListing) return failureJson(fail("conflict", notForListing));
    const parsed = labelChoiceFrom(new URL(c.req.url).searchParams, await getLabelDefaults(db, user.id));
    if (!parsed.ok) return failureJson(parsed);
    const photo = await getPhoto(db, user.id, version.photoId);
    const ext = version.contentType === "image/png" ? "png" : "jpg";
    const fileName = `${photo?.name.replace(/\.(jpe?g|png)$/i, "") ?? "photo"} (${version.kind}, labelled).${ext}`;
    const headers = {
      ...NO_STORE,
      "Content-Disposition": contentDisposition("attachment", fileName),
    };
    const { choice } = parsed;
    if (!choice.label) {
      const obj = await bucket.get(version.key);
      if (!obj) return failureJson(NOT_FOUND);
      return new Response(obj.body, { headers: { ...headers, "Content-Type": version.contentType } });
    }
    const qrUrl = choice.qr ? originalPageUrl(origin, await ensureLink(db, version, clock())) : null;
    const { label: _l, qr: _q, ...spec } = choice;
    const rendered = await labelledBytes(bucket, version, { ...spec, qrUrl });
    if (!rendered.ok) return failureJson(rendered);
    return new Response(rendered.bytes as Uint8Array<ArrayBuffer>, {
      headers: { ...headers, "Content-Type": rendered.contentType },
    });
  })
  // The version's original page: made (or the live one returned), or revoked.
  .post("/photos/:id/versions/:versionId/link", async (c) => {
    const user = c.get("user")!;
    const { db, origin, clock } = c.get("deps");
    const version = await getVersion(db, user.id, c.req.param("id"), c.req.param("versionId"));
    if (!version) return failureJson(NOT_FOUND);
    const notForListing = mlsRefusal(version.structureVerdict);
    if (notForListing) return failureJson(fail("conflict", notForListing));
    const token = await ensureLink(db, version, clock());
    return c.json({ ok: true, url: originalPageUrl(origin, token) }, 200, NO_STORE);
  })
  .delete("/photos/:id/versions/:versionId/link", async (c) => {
    const user = c.get("user")!;
    const { db, clock } = c.get("deps");
    const version = await getVersion(db, user.id, c.req.param("id"), c.req.param("versionId"));
    if (!version) return failureJson(NOT_FOUND);
    const res = await revokeLinks(db, user.id, version.id, clock());
    if (!res.ok) return failureJson(res);
    return c.json({ ok: true }, 200, NO_STORE);
  })
  .put("/folders/:id/listing", async (c) => {
    const body = await readJson(c.req.raw, listingInput, { methods: ["PUT"] });
    if (!body.ok) return failureJson(body);
    const res = await saveListing(c.get("db"), c.get("user")!.id, c.req.param("id"), body.data);
    if (!res.ok) return failureJson(res);
    return c.json({ ok: true }, 200, NO_STORE);
  })
  .get("/folders/:id/pack", async (c) => {
    const user = c.get("user")!;
    const deps = c.get("deps");
    const folder = await deps.db.query.folders.findFirst({
      where: (f, { and, eq }) => and(eq(f.id, c.req.param("id")), eq(f.userId, user.id)),
    });
    if (!folder) return failureJson(NOT_FOUND);
    const defaults = await getLabelDefaults(deps.db, user.id);
    const pack = await listingPack(deps, user.id, folder, defaults);
    if (!pack.ok) return failureJson(pack);
    return new Response(pack.stream, {
      headers: {
        "Content-Type": "application/zip",
        "Content-Disposition": contentDisposition("attachment", pack.fileName),
        ...NO_STORE,
      },
    });
  })
  .post("/account/export", async (c) => {
    // An API call with a JSON body (`{}`): anything else is refused before an export starts.
    const body = await readJson(c.req.raw, z.object({}));
    if (!body.ok) return failureJson(body);
    const res = await requestExport(c.get("deps"), c.get("user")!.id);
    if (!res.ok) return failureJson(res);
    return c.json({ ok: true, id: res.id }, 202, NO_STORE);
  })
  .post("/account/delete", async (c) => {
    const body = await readJson(
      c.req.raw,
      z.object({ password: z.string({ message: "Type your password." }).max(200) }),
    );
    if (!body.ok) return failureJson(body);
    const res = await deleteAccount(c.get("deps"), c.get("user")!.id, body.data);
    if (!res.ok) return failureJson(res);
    return c.json({ ok: true }, 200, {
      ...NO_STORE,
      "Set-Cookie": clearSessionCookie(secureCookies(c.env, c.req.raw)),
    });
  });
