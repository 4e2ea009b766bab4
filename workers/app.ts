import { createDb } from "@db/client";
import { api } from "@workers/api";
import { ConfigError, config } from "@workers/config";
import { drain } from "@workers/http/body";
import { buildDeps } from "@workers/http/build-deps";
import { requestContext } from "@workers/http/context";
import { isCacheablePublicRequest, isSignedOutPublicRead, servePublicPage } from "@workers/http/public-pages";
import { failureJson } from "@workers/http/result";
import { crossSiteRefusal, isCrossSiteWrite, withSecurityHeaders } from "@workers/http/security";
import { randomToken } from "@workers/lib/crypto";
import { log } from "@workers/lib/log";
import { observed } from "@workers/lib/observed";
import { grantAllOwedTrialCredits } from "@workers/services/accounts/verification";
import { purgeIdempotency } from "@workers/services/api-idempotency";
import { resealCallbackSecrets } from "@workers/services/callback-secrets";
import { purgeTrash } from "@workers/services/library";
import { purgeExpiredSessions } from "@workers/services/maintenance";
import { closeSoldListings } from "@workers/services/mls/listing-status";
import { recordCronRun } from "@workers/services/operations";
import { expireTeamRecords } from "@workers/services/teams/record-expiry";
import { expireStaleUploads } from "@workers/services/uploads";
import { createRequestHandler, RouterContextProvider } from "react-router";
import { fail } from "~/shared/result";

export { ProviderGate } from "@workers/objects/provider-gate-object";
export { RateLimiter } from "@workers/objects/rate-limiter";
export { TeamObject } from "@workers/objects/team-object";
export { UserObject } from "@workers/objects/user-object";

// Given a function, React Router's handler re-derives its route tree on every request (flattening and ranking every
// route: about a fifth of a signed-in page's server time). Built code does not change under a running isolate, so
// outside the dev server the handler is made once, from the build itself.
// The dev server keeps the function form, which loads the build it has just rebuilt.
type DocumentHandler = ReturnType<typeof createRequestHandler>;
const loadBuild = () => import("virtual:react-router/server-build");
let documentHandler: DocumentHandler | undefined = import.meta.env.DEV
  ? createRequestHandler(loadBuild, import.meta.env.MODE)
  : undefined;
const handleDocument: DocumentHandler = async (request, context) => {
  documentHandler ??= createRequestHandler(await loadBuild(), import.meta.env.MODE);
  return documentHandler(request, context);
};

/** Refuses to serve with a configuration that is incomplete (a missing secret), once per isolate, loudly. */
function checkConfig(env: Env): Response | null {
  try {
    config(env);
    return null;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    log.error("configuration incomplete", { err, where: "config" });
    return failureJson(fail("unavailable", "This service is not configured yet."));
  }
}

function isApi(pathname: string): boolean {
  return pathname === "/api" || pathname.startsWith("/api/");
}

/** The request's id: answered in X-Request-Id, logged with every line, carried to the jobs it starts. */
function withRequestId(response: Response, requestId: string): Response {
  try {
    response.headers.set("X-Request-Id", requestId);
    return response;
  } catch {
    // An immutable response (a WebSocket upgrade, a passed-through fetch) keeps its headers.
    return response;
  }
}

export default {
  fetch(request, env, ctx) {
    const requestId = crypto.randomUUID();
    return observed(
      env,
      (p) => ctx.waitUntil(p),
      { where: "fetch", requestId },
      async () => withRequestId(await handle(request, env, ctx), requestId),
    );
  },

  scheduled(_controller, env, ctx) {
    return observed(
      env,
      (p) => ctx.waitUntil(p),
      { where: "scheduled" },
      () => maintain(env),
    );
  },
} satisfies ExportedHandler<Env>;

async function handle(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  // A signed-out public page needs no secret: it is the document the build prerenders into static files
  // (docs/decisions/0145-public-pages-prerendered.md), so it is rendered even before the secrets are set.
  const misconfigured = checkConfig(env);
  if (misconfigured && !isSignedOutPublicRead(request)) return misconfigured;
  const nonce = randomToken(16);
  const dev = import.meta.env.DEV;
  if (isCrossSiteWrite(request, env.APP_ORIGIN)) return withSecurityHeaders(crossSiteRefusal(), nonce, dev);

  const { pathname } = new URL(request.url);
  let response: Response;
  if (isApi(pathname)) response = await api.fetch(request, env, ctx);
  else {
    const render = (withNonce: string) => {
      const context = new RouterContextProvider();
      const deps = buildDeps(env, ctx, request);
      context.set(requestContext, { env, ctx, db: deps.db, deps, nonce: withNonce });
      return handleDocument(request, context);
    };
    if (isCacheablePublicRequest(request)) {
      // The same document for every signed-out visitor: rendered once, CSP by hashes (docs/decisions/0132).
      const build = await loadBuild();
      response = await servePublicPage(request, build.assets.version, () => render(""), {
        dev,
        waitUntil: (p) => ctx.waitUntil(p),
      });
    } else response = await render(nonce);
  }
  // A body the route did not read (a refused request) is read and dropped, up to a bound, so the client
  // gets the answer instead of a connection reset in the middle of sending.
  if (request.body && !request.bodyUsed) await drain(request.body.getReader());
  return withSecurityHeaders(response, nonce, dev);
}

/** The daily cron: each task on its own, the run recorded for the operations page, a failure thrown. */
async function maintain(env: Env): Promise<void> {
  const db = createDb(env.DB);
  const startedAt = Date.now();
  // Each task by name: a failed one is named in the run's record and in the error. Awaited (not waitUntil) so a
  // failure marks the cron run failed and tests can wait for it.
  const tasks: [string, Promise<unknown>][] = [
    ["sessions", purgeExpiredSessions(db)],
    // Photos 30 days in the trash, and the bytes of uploads abandoned for a day.
    ["trash", purgeTrash(db, env.PHOTOS)],
    ["uploads", expireStaleUploads({ db, bucket: env.PHOTOS })],
    // Trial credits still owed after a failure right after verification.
    ["trial credits", grantAllOwedTrialCredits({ env, db })],
    // Public API Idempotency-Key answers older than a day (docs/decisions/0120-public-api.md).
    ["idempotency", purgeIdempotency(db)],
    // Original pages of listings sold (or off market) for the days their owner chose (docs/decisions/0170).
    ["sold listings", closeSoldListings(db)],
    // Every API key's callback secret sealed under the current signing key (docs/decisions/0182).
    ["callback secrets", resealCallbackSecrets({ db, env })],
    // The broker's record past each team's retention, and the kept copies no remaining row names (docs/decisions/0316).
    ["broker's record", expireTeamRecords(db, env.PHOTOS)],
  ];
  const results = await Promise.allSettled(tasks.map(([, work]) => work));
  const failed = results.flatMap((r, i) => (r.status === "rejected" ? [{ task: tasks[i]![0], err: r.reason }] : []));
  await recordCronRun(db, { startedAt, finishedAt: Date.now(), failed: failed.map((f) => f.task) });
  if (failed.length > 0) {
    const named = failed.map((f) => f.task).join(", ");
    throw new AggregateError(
      failed.map((f) => f.err),
      `daily maintenance failed: ${named}`,
      { cause: failed[0]!.err },
    );
  }
}
