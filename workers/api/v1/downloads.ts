import { NO_STORE } from "@workers/api/answers";
import { checkFields } from "@workers/http/body";
import { failureJson } from "@workers/http/result";
import { contentDisposition } from "@workers/lib/content-disposition";
import { confirmStructure, getVersion } from "@workers/services/jobs/versions";
import { mlsDownload } from "@workers/services/mls/downloads";
import { originalPageUrl, publishOriginal } from "@workers/services/mls/links";
import { fail, NOT_FOUND } from "~/shared/result";
import { versionBytes } from "~/shared/version-bytes";
import { VERSION_NOT_FOUND } from "~/shared/version-view";
import { define, errorsSaying, json, params } from "./define";
import * as S from "./schemas";

// The public API's download of a version and its original page (docs/decisions/0170-mls-profiles.md): what leaves
// through the API follows the listing's MLS profile, as Download for MLS and the listing pack do, and only a POST
// publishes the original page.

const REFUSALS = {
  403: "The key lacks the scope, or the listing's MLS profile does not let this result be published",
  409: "The structure check refused the result (or it was kept anyway: never for a listing), or flagged it and nobody confirmed it was checked (POST …/confirm-structure), or its owner returned it as a result that changed the room (never for a listing), or the label gives the original page's address and that page is not published (or its listing's pages closed)",
};

export function defineListingDownloads(): void {
  define(
    {
      method: "get",
      path: "/photos/{photoId}/versions/{versionId}/download",
      scope: "read",
      summary: "Download a version for the listing",
      description:
        "The version as its listing's MLS profile wants it (docs/decisions/0170-mls-profiles.md): with the disclosure label (and the QR code of its original page) burned in where the profile puts one, clean where it forbids one. 403 when the profile does not let this kind of result be published; 409 when the structure check refused the result (not charged: keep it first) or it was kept anyway (it changed the room, so it is never for a listing), when it flagged the result and nobody has confirmed checking its walls and windows (POST …/confirm-structure), when its owner returned it (“This result changed the room”: its credit went back, so it never goes into a listing), or when the label needs the original page and it is not published (POST .../original-page publishes it). `?disclosure=none` gives the stored result unchanged, your own copy, not for advertising: a kept or returned result too, never a refused one (409).",
      request: { params: S.VersionParams, query: S.DownloadQuery },
      responses: {
        200: {
          description: "The image",
          content: {
            "image/jpeg": { schema: { type: "string", format: "binary" } },
            "image/png": { schema: { type: "string", format: "binary" } },
          },
        },
        ...errorsSaying(REFUSALS, 400, 401, 403, 404, 409, 429),
      },
    },
    async (c, caller) => {
      const p = params(c, S.VersionParams);
      if (!p.ok) return failureJson(NOT_FOUND);
      const q = checkFields(S.DownloadQuery, c.req.query());
      if (!q.ok) return failureJson(q);
      if (q.data.disclosure !== "none") {
        const res = await mlsDownload(c.get("deps"), caller.userId, p.data.photoId, p.data.versionId, null, {
          who: { userId: caller.userId, keyId: caller.keyId },
          via: "api_download",
        });
        if (!res.ok) return failureJson(res);
        const { file } = res;
        return new Response(file.body, {
          headers: {
            "Content-Type": file.contentType,
            "Content-Disposition": contentDisposition("attachment", file.fileName),
            ...NO_STORE,
          },
        });
      }
      const version = await getVersion(c.get("db"), caller.userId, p.data.photoId, p.data.versionId);
      if (!version) return failureJson(NOT_FOUND);
      // The stored result unchanged: only one the byte rule lets leave in full (ADR 0200).
      const full = versionBytes(version, "full");
      if (!full.ok) return failureJson(full);
      const obj = await c.env.PHOTOS.get(full.key);
      if (!obj) return failureJson(NOT_FOUND);
      const ext = version.contentType === "image/png" ? "png" : "jpg";
      return new Response(obj.body, {
        headers: {
          "Content-Type": version.contentType,
          "Content-Length": String(obj.size),
          "Content-Disposition": contentDisposition("attachment", `${version.kind}-${version.id}.${ext}`),
          ...NO_STORE,
        },
      });
    },
  );

  define(
    {
      method: "post",
      path: "/photos/{photoId}/versions/{versionId}/original-page",
      scope: "stage",
      summary: "Publish the version's original page",
      description:
        "Makes the public page that shows the unaltered original beside this version (the address its label's QR code and captions give), or returns the live one. Nothing else publishes it: a download never does. Refused (409) once its listing is marked sold and its pages have closed, or when the structure check refused the result or it was kept anyway, or its owner returned it as a result that changed the room; 403 when the listing's profile does not let this version be published.",
      request: { params: S.VersionParams },
      responses: {
        200: json(S.OriginalPage, "The page's address"),
        ...errorsSaying(REFUSALS, 401, 403, 404, 409, 429),
      },
    },
    async (c, caller) => {
      const p = params(c, S.VersionParams);
      if (!p.ok) return failureJson(NOT_FOUND);
      const { db, origin, clock } = c.get("deps");
      const res = await publishOriginal(
        db,
        caller.userId,
        p.data.photoId,
        p.data.versionId,
        "again",
        clock(),
        caller.keyId,
      );
      if (!res.ok) return failureJson(res);
      return c.json({ url: originalPageUrl(origin, res.token) }, 200, NO_STORE);
    },
  );

  define(
    {
      method: "post",
      path: "/photos/{photoId}/versions/{versionId}/confirm-structure",
      notFound: fail("not_found", VERSION_NOT_FOUND),
      scope: "stage",
      summary: "Confirm you checked a flagged result's walls and windows",
      description:
        'For a version whose structure verdict is "flagged" (the check saw the room may have changed: delivered and charged, see structure.reasons for where): says you compared it with the original and its walls, windows and doors are the room\'s. From then on its download for the listing and its original page are allowed (until then they answer 409). Stored with the version (when, by whom); said again, the first confirmation stands. 409 for a version that is not flagged, or that its owner returned as a result that changed the room.',
      request: { params: S.VersionParams },
      responses: {
        200: json(S.StructureConfirmed, "Confirmed"),
        ...errorsSaying(
          { 409: "The version is not flagged (only a flagged result asks for this), or its owner returned it" },
          401,
          403,
          404,
          409,
          429,
        ),
      },
    },
    async (c, caller) => {
      const p = params(c, S.VersionParams);
      if (!p.ok) return failureJson(NOT_FOUND);
      const { db, clock } = c.get("deps");
      const res = await confirmStructure(db, caller.userId, p.data.photoId, p.data.versionId, clock());
      if (!res.ok) return failureJson(res);
      return c.json({ versionId: res.versionId, confirmedAt: res.confirmedAt }, 200, NO_STORE);
    },
  );
}
