import { failureJson } from "@workers/http/result";
import { serveObject } from "@workers/http/serve-object";
import { changeMapKey } from "@workers/services/jobs/versions";
import { fail, NOT_FOUND } from "~/shared/result";
import { VERSION_NOT_FOUND } from "~/shared/version-view";
import { define, errorsSaying, params } from "./define";
import * as S from "./schemas";

// The structure check's change map in the public API (docs/decisions/0260-change-map-with-the-version.md): the address
// a version's `structure.changesUrl` gives, readable with its owner's key only.

export function defineStructureRoutes(): void {
  define(
    {
      method: "get",
      path: "/photos/{photoId}/versions/{versionId}/changes",
      notFound: fail("not_found", VERSION_NOT_FOUND),
      scope: "read",
      summary: "The structure check's change map of a version",
      description:
        "A gray PNG at the check's working size (long edge 320 px, the photo's aspect): white where the check saw a line of the room lost or added, gray where a cell's edges changed, black where the result keeps its source. Laid over the result (stretched to its size) it shows where to look. 404 for a version that is not yours, or one the check did not run on (no map).",
      request: { params: S.VersionParams },
      responses: {
        200: {
          description: "The change map",
          content: { "image/png": { schema: { type: "string", format: "binary" } } },
        },
        ...errorsSaying({}, 401, 403, 404, 429),
      },
    },
    async (c, caller) => {
      const p = params(c, S.VersionParams);
      if (!p.ok) return failureJson(NOT_FOUND);
      const map = await changeMapKey(c.get("deps").db, caller.userId, p.data.photoId, p.data.versionId);
      if (!map.ok) return failureJson(map);
      return serveObject(c.env.PHOTOS, map.key, { "Cache-Control": "private, no-cache" }, c.req.raw);
    },
  );
}
