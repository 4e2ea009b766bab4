import { provideApiReference } from "@workers/http/api-reference";
import { navHintUpdate, sessionFor } from "@workers/http/auth";
import { buildDeps } from "@workers/http/build-deps";
import { devToolsEnabled } from "@workers/http/context";
import { allowedMethods } from "@workers/http/methods";
import { codeForStatus, failureJson } from "@workers/http/result";
import { routeTable } from "@workers/http/route-table";
import { log } from "@workers/lib/log";
import { secureCookies } from "@workers/services/current-user";
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { fail, NOT_FOUND } from "~/shared/result";
import { adminApi } from "./admin";
import { devApi } from "./dev";
import { figuresApi } from "./figures";
import { health } from "./health";
import { jobsApi } from "./jobs";
import { listingApi } from "./listing";
import { me } from "./me";
import { exportsApi, mlsApi, originalImagesApi } from "./mls";
import { originalsApi } from "./originals";
import { photosApi } from "./photos";
import type { ApiEnv } from "./types";
import { uploadsApi } from "./uploads";
import { openApiDocument, v1 } from "./v1";
import { versionsApi } from "./versions";
import { webhooks } from "./webhooks";

export const api = new Hono<ApiEnv>().basePath("/api");

api.use(async (c, next) => {
  const deps = buildDeps(c.env, c.executionCtx, c.req.raw);
  c.set("deps", deps);
  c.set("db", deps.db);
  const { user, setCookie } = await sessionFor(c.env, c.req.raw, deps);
  c.set("user", user);
  await next();
  if (setCookie) c.res.headers.append("Set-Cookie", setCookie);
  // The signed-in hint of prerendered pages (docs/decisions/0145), e.g. cleared when an account is deleted here.
  const hint = navHintUpdate(c.req.raw, user, c.res, secureCookies(c.env, c.req.raw));
  if (hint) {
    try {
      c.res.headers.append("Set-Cookie", hint);
    } catch {
      // A passed-through response with fixed headers: the next page the browser opens sets the hint.
    }
  }
});

api.route("/health", health);
api.route("/figures", figuresApi);
api.route("/admin", adminApi);
api.route("/uploads", uploadsApi);
api.route("/photos", photosApi);
api.route("/", jobsApi);
api.route("/", versionsApi);
api.route("/", listingApi);
api.route("/", mlsApi);
api.route("/", originalsApi);
api.route("/o", originalImagesApi);
api.route("/exports", exportsApi);
api.route("/me", me);
api.route("/webhooks", webhooks);
// The public API for integrators, authenticated by API key (docs/decisions/0120-public-api.md).
api.route("/v1", v1);
provideApiReference(openApiDocument);

// Development-only endpoints (seeding). Mounted only when the local
// configuration turns dev tools on; a deployed worker answers 404.
api.use("/dev/*", async (c, next) => {
  if (!devToolsEnabled(c.env)) return failureJson(NOT_FOUND);
  await next();
});
api.route("/dev", devApi);
// The route table, read from the apps themselves, for the hostile-input suite.
api.get("/dev/routes", async (c) => c.json(await routeTable(api.routes)));

// A known path asked with a method it does not take gets 405 and the methods it does.
api.notFound((c) => {
  const allowed = allowedMethods(api.routes, c.req.path);
  if (allowed.length > 0)
    return failureJson(
      fail("method_not_allowed", `This address takes ${allowed.join(" or ")} requests only.`),
      allowed,
    );
  return failureJson(NOT_FOUND);
});

api.onError((err, c) => {
  const code = err instanceof HTTPException ? codeForStatus(err.status) : null;
  if (code) return failureJson(fail(code, err.message));
  log.error("api error", { err, where: "api", method: c.req.method, route: c.req.routePath });
  // Our own fault, not the caller's: the one answer in the failure shape whose code no service can give.
  return c.json({ ok: false, code: "internal", error: "Something went wrong on our side. Please try again." }, 500);
});
