import { z } from "@hono/zod-openapi";
import { answerHeaders, callerRequestKey } from "@workers/api/answers";
import { failureJson } from "@workers/http/result";
import { onceForKey, requestHash, type StoredAnswer } from "@workers/services/api-idempotency";
import { getVersion, keepRefusedVersion } from "@workers/services/jobs/versions";
import { photoAccess } from "@workers/services/teams/access";
import { type Failure, fail, NOT_FOUND } from "~/shared/result";
import { VERSION_NOT_FOUND } from "~/shared/version-view";
import { type Ctx, define, errorsSaying, json, params } from "./define";
import * as S from "./schemas";

// POST /api/v1/photos/{photoId}/versions/{versionId}/keep (docs/decisions/0232-an-api-that-says-what-it-means.md):
// "Keep it anyway" as the page's route does it (POST /api/photos/:id/versions/:versionId/keep, through the user's
// object, workers/objects/user/jobs/keep.ts): a result the structure check refused was not charged; kept, it costs
// one credit and becomes the photo's shown version. With an Idempotency-Key, a retry gets the first answer and is
// never charged again (workers/services/api-idempotency.ts, as the API's other POSTs).

const KeepAnswer = z
  .object({
    version: S.Version,
    credits: z.number().int().openapi({ description: "Credits left after the keep." }),
  })
  .openapi("KeepAnswer");

const REFUSALS = {
  402: "Not enough credits: keeping costs one",
  409: "The version is not a refused result (it passed, or was kept already), or the Idempotency-Key was used for another request or its first request is still running",
};

type StoredVersion = NonNullable<Awaited<ReturnType<typeof getVersion>>>;

/** `view`: the API's shape of a version (index.ts), so the answer carries its addresses as every other answer. */
export function defineKeep(view: (v: StoredVersion) => z.infer<typeof S.Version>): void {
  define(
    {
      method: "post",
      path: "/photos/{photoId}/versions/{versionId}/keep",
      notFound: fail("not_found", VERSION_NOT_FOUND),
      photoReach: "handler",
      scope: "stage",
      summary: "Keep a result the structure check refused",
      description:
        "A result that moved walls, windows or doors is refused: the job fails, its credit goes back, and the version has no downloadUrl, only a keepUrl. POST here to keep it anyway for one credit, as the page's \"Keep it anyway\" does: it becomes the photo's shown version, labelled kept, and its downloadUrl gives your own copy (`?disclosure=none`); it changed the room, so it never goes into a listing. Send an Idempotency-Key: a retry with the same key gets the first answer and is never charged twice.",
      request: { params: S.VersionParams, headers: S.IdempotencyHeader },
      responses: {
        200: json(KeepAnswer, "The kept version and the balance after its credit"),
        ...errorsSaying(REFUSALS, 400, 401, 402, 403, 404, 409, 429),
      },
    },
    async (c, caller) => {
      const p = params(c, S.VersionParams);
      if (!p.ok) return failureJson(NOT_FOUND);
      const { photoId, versionId } = p.data;
      const deps = c.get("deps");
      // A teammate's photo in a team listing: its versions are its uploader's rows (ADR 0280), and keeping one spends
      // the team's pool, so the answer reads the version under the photo's owner, not the caller.
      const scope = await photoAccess(deps.db, caller.userId, photoId);
      if (!scope) return failureJson(fail("not_found", VERSION_NOT_FOUND));
      const key = callerRequestKey(c.req.raw.headers, caller);
      if (key instanceof Response) return key;
      const hash = requestHash(`POST /photos/${photoId}/versions/${versionId}/keep`, {});
      const result = await onceForKey(deps.db, caller.userId, key.key, hash, deps.clock(), async () => {
        const kept = await keepRefusedVersion(deps, caller.userId, photoId, versionId);
        if (!kept.ok) return { status: 0, body: kept };
        const version = await getVersion(deps.db, scope.ownerId, photoId, versionId);
        if (!version) return { status: 0, body: NOT_FOUND };
        return { status: 200, body: { version: view(version), credits: kept.credits } };
      });
      return answered(c, result);
    },
  );
}

function answered(c: Ctx, r: StoredAnswer | Failure): Response {
  if ("ok" in r && r.ok === false) return failureJson(r);
  const a = r as StoredAnswer;
  if (a.status === 0) return failureJson(a.body as Failure);
  return c.json(a.body as object, a.status as 200, answerHeaders(a.replayed));
}
