import { readForm, readJson } from "@workers/http/body";
import { failureJson } from "@workers/http/result";
import { contentDisposition } from "@workers/lib/content-disposition";
import { secureCookies } from "@workers/services/current-user";
import { deleteAccount, openExport, requestExport } from "@workers/services/mls/account-data";
import { disclosureFor } from "@workers/services/mls/disclosure";
import { listingInput, saveListing, setListingStatus, statusInput } from "@workers/services/mls/listing-status";
import { ALTERED_WITHDRAWN, PUBLIC_CACHE, resolveLink } from "@workers/services/mls/original-page";
import { listingPack } from "@workers/services/mls/pack";
import { clearSessionCookie } from "@workers/services/sessions";
import { folderAccess } from "@workers/services/teams/access";
import { type Context, Hono } from "hono";
import { z } from "zod";
import { fail, NOT_FOUND } from "~/shared/result";
import { versionBytes } from "~/shared/version-bytes";
import { NO_STORE } from "./answers";
import { requireApiUser } from "./require-user";
import type { ApiEnv } from "./types";

// MLS-ready output and the agent's data (docs/decisions/0110, 0111, 0112, 0170):
// listings' details, profiles and status, listing packs, the public original
// page's images, account deletion and export (a version's download for MLS and
// its original page: ./originals.ts). Anyone but the owner gets the same 404 as
// for a thing that does not exist.

/** An image of an original page, full size or its thumbnail (?size=thumb), while the page is up. */
async function pageImage(c: Context<ApiEnv>, which: string): Promise<Response> {
  const size = c.req.query("size") ?? "full";
  if (size !== "full" && size !== "thumb") return failureJson(NOT_FOUND);
  const found = await resolveLink(c.get("db"), c.req.param("token") ?? "", Date.now());
  if (!found.ok) return failureJson(found);
  const { page } = found;
  if (which === "staged" && page.returned) return failureJson(fail("gone", ALTERED_WITHDRAWN));
  const version =
    which === "original" ? null : page.versions.find((v) => (which === "staged" ? v.linked : v.id === which));
  if (which !== "original" && !version) return failureJson(NOT_FOUND);
  // The unaltered original is the agent's own upload; a version leaves as the byte rule says (ADR 0200).
  const bytes = version
    ? versionBytes(version, size === "thumb" ? "preview" : "full")
    : { ok: true as const, key: size === "thumb" ? page.original.thumbKey : page.original.key };
  if (!bytes.ok) return failureJson(bytes);
  const image = version ?? page.original;
  const etag = `${page.etag.slice(0, -1)}-${which}-${size}"`;
  const headers = new Headers({ "Cache-Control": PUBLIC_CACHE, ETag: etag, "X-Robots-Tag": "noindex" });
  if (c.req.header("If-None-Match") === etag) return new Response(null, { status: 304, headers });
  const obj = await c.env.PHOTOS.get(bytes.key);
  if (!obj) return failureJson(fail("gone", "This image is no longer available."));
  headers.set("Content-Type", obj.httpMetadata?.contentType ?? image.contentType);
  headers.set("Content-Length", String(obj.size));
  return new Response(obj.body, { headers });
}

/** Public: the images of an original page (/o/<token>), tokened; 410 from the moment the page closes. */
export const originalImagesApi = new Hono<ApiEnv>()
  .get("/:token/:which{original|staged}", (c) => pageImage(c, c.req.param("which")))
  .get("/:token/versions/:versionId", (c) => pageImage(c, c.req.param("versionId")));

const publishNewPages = z.object({
  publish: z.literal("new", { message: "Say publish=new to publish the original pages this pack needs." }),
});

async function packAnswer(c: Context<ApiEnv>, publish: boolean): Promise<Response> {
  const user = c.get("user")!;
  const deps = c.get("deps");
  // The user's own folder, or a team listing they are an active member of, whoever made it (ADR 0280, 0298): its
  // disclosure and photos are read under the folder's owner, the broker's record names the member who asked.
  const reached = await folderAccess(deps.db, user.id, c.req.param("id") ?? "");
  if (!reached) return failureJson(NOT_FOUND);
  const { folder } = reached;
  const disclosure = await disclosureFor(deps.db, folder.userId, folder);
  const pack = await listingPack(deps, folder.userId, folder, disclosure, publish, { userId: user.id, keyId: null });
  if (!pack.ok) return failureJson(pack);
  return new Response(pack.stream, {
    headers: {
      "Content-Type": "application/zip",
      "Content-Disposition": contentDisposition("attachment", pack.fileName),
      ...NO_STORE,
    },
  });
}

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
  .use("/folders/*", requireApiUser)
  .use("/account/*", requireApiUser)
  // A listing's details and the MLS profile it follows (`profile`: an id, "" for the account's; absent: unchanged).
  .put("/folders/:id/listing", async (c) => {
    const body = await readJson(c.req.raw, listingInput, { methods: ["PUT"] });
    if (!body.ok) return failureJson(body);
    const res = await saveListing(c.get("db"), c.get("user")!.id, c.req.param("id"), body.data);
    if (!res.ok) return failureJson(res);
    return c.json({ ok: true }, 200, NO_STORE);
  })
  // A listing's status: active, pending, or sold (its original pages close `closeAfterDays` later).
  .put("/folders/:id/status", async (c) => {
    const body = await readJson(c.req.raw, statusInput, { methods: ["PUT"] });
    if (!body.ok) return failureJson(body);
    const { db, clock } = c.get("deps");
    const res = await setListingStatus(db, c.get("user")!.id, c.req.param("id"), body.data, clock());
    if (!res.ok) return failureJson(res);
    return c.json({ ok: true, message: res.message }, 200, NO_STORE);
  })
  // The listing pack as its profile lays it out. A GET publishes nothing: a photo whose page the profile needs and
  // does not exist is left out, with the reason in the manifest.
  .get("/folders/:id/pack", async (c) => packAnswer(c, false))
  // The same, after publishing the pages that never existed (publish=new: the agent's explicit ask).
  .post("/folders/:id/pack", async (c) => {
    const body = await readForm(c.req.raw, publishNewPages);
    if (!body.ok) return failureJson(body);
    return packAnswer(c, true);
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
