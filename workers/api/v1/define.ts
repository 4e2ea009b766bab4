import { OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { ApiEnv } from "@workers/api/types";
import { checkFields } from "@workers/http/body";
import { failureJson } from "@workers/http/result";
import { type ApiCaller, authenticateApiKey } from "@workers/services/api-keys";
import { photoAccess } from "@workers/services/teams/access";
import type { Context } from "hono";
import type { z } from "zod";
import { type Failure, fail, NOT_FOUND } from "~/shared/result";
import * as S from "./schemas";

// How a public API route is declared (docs/decisions/0120-public-api.md): once, with its zod schemas, which both
// mounts the handler (with the API key and its scope checked first) and feeds /api/v1/openapi.json.

export type V1Env = ApiEnv & { Variables: { caller: ApiCaller } };
export type Ctx = Context<V1Env>;
type Scope = "stage" | "read";

export const v1 = new OpenAPIHono<V1Env>();

v1.openAPIRegistry.registerComponent("securitySchemes", "apiKey", {
  type: "http",
  scheme: "bearer",
  description: "An API key from the API keys section of your account (sw_…).",
});

export const errors = (...codes: number[]) => errorsSaying({}, ...codes);

/** The refusals of a route, with its own words for some of them. */
export const errorsSaying = (texts: Record<number, string>, ...codes: number[]) =>
  Object.fromEntries(
    codes.map((c) => [
      String(c),
      { description: texts[c] ?? ERROR_TEXT[c] ?? "Refused", content: { "application/json": { schema: S.Failure } } },
    ]),
  );
const ERROR_TEXT: Record<number, string> = {
  400: "The input is malformed or breaks a rule",
  401: "No API key, or a revoked one",
  402: "Not enough credits",
  403: "The key lacks the scope this route needs",
  404: "Not there, or not yours",
  409: "The Idempotency-Key was used for another request, or its first request is still running",
  413: "The photo is larger than 10 MB or 24 megapixels",
  415: "Not a JPG or PNG, or the wrong body type",
  429: "Too many requests for this key; see Retry-After",
};

export function json<T>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

/**
 * Declares a route once: in the OpenAPI document, and mounted (with key, scope) on the app. A route under
 * `{photoId}` answers 404 unless the key's user may reach the photo (docs/decisions/0280-shared-team-listings.md): a
 * member removed from a team keeps no way in to their uploads in its listings through a personal key
 * (docs/decisions/0337-a-key-reaches-what-its-user-reaches.md). `photoReach: "handler"` names a route whose handler
 * reads the photo with photoAccess itself, so it is read once; `notFound` is the 404 the handler gives a made-up id,
 * when it is not the plain one, so a photo out of reach answers as a made-up one does.
 */
export function define(
  route: RouteConfig & { scope: Scope; photoReach?: "handler"; notFound?: Failure },
  handler: (c: Ctx, caller: ApiCaller) => Promise<Response>,
): void {
  const { scope, photoReach, notFound, ...doc } = route;
  v1.openAPIRegistry.registerPath({
    ...doc,
    security: [{ apiKey: [] }],
    description: `${doc.description ?? ""}\n\nScope: \`${scope}\`.`.trim(),
  });
  const honoPath = route.path.replace(/\{(\w+)\}/g, ":$1");
  v1.on(route.method.toUpperCase(), honoPath, async (c) => {
    const auth = await authenticateApiKey(c.get("deps"), c.req.header("Authorization") ?? null);
    if (!auth.ok) {
      const res = failureJson(auth);
      if (auth.code === "unauthenticated") res.headers.set("WWW-Authenticate", 'Bearer realm="api"');
      return res;
    }
    const caller = auth.caller;
    if (!caller.verified) return failureJson(fail("forbidden", "Verify your e-mail address before using the API."));
    if (!caller.scopes.includes(scope)) {
      return failureJson(fail("forbidden", `This API key does not have the "${scope}" scope.`));
    }
    c.set("caller", caller);
    const photoId = c.req.param("photoId");
    const reach = photoId !== undefined && photoReach !== "handler";
    if (reach && !(await photoAccess(c.get("db"), caller.userId, photoId))) return failureJson(notFound ?? NOT_FOUND);
    return handler(c, caller);
  });
}

export function params<T extends z.ZodType>(c: Ctx, schema: T) {
  return checkFields(schema, c.req.param());
}
