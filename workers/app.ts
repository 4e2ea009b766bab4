import { createDb } from "@db/client";
import { api } from "@workers/api";
import { ConfigError, config } from "@workers/config";
import { drain } from "@workers/http/body";
import { requestContext } from "@workers/http/context";
import { buildDeps } from "@workers/http/deps";
import { isCacheablePublicRequest, isSignedOutPublicRead, servePublicPage } from "@workers/http/public-pages";
import { failureJson } from "@workers/http/result";
import { crossSiteRefusal, isCrossSiteWrite, withSecurityHeaders } from "@workers/http/security";
import { randomToken } from "@workers/lib/crypto";
import { grantAllOwedTrialCredits } from "@workers/services/accounts/verification";
import { purgeIdempotency } from "@workers/services/api-idempotency";
import { resealCallbackSecrets } from "@workers/services/callback-secrets";
import { purgeTrash } from "@workers/services/library";
import { purgeExpiredSessions } from "@workers/services/maintenance";
import { closeSoldListings } from "@workers/services/mls/listing-status";
import { expireStaleUploads } from "@workers/services/uploads";
import { createRequestHandler, RouterContextProvider } from "react-router";
import { fail } from "~/shared/result";

export { RateLimiter } from "@workers/objects/rate-limiter";
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
    console.error(err.message);
    return failureJson(fail("unavailable", "This service is not configured yet."));
  }
}

function isApi(pathname: string): boolean {
  return pathname === "/api" || pathname.startsWith("/api/");
}

export default {
  async fetch(request, env, ctx) {
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
  },

  async scheduled(_controller, env) {
    const db = createDb(env.DB);
    // Awaited (not waitUntil) so a failure marks the cron run failed and tests can wait for it.
    const results = await Promise.allSettled([
      purgeExpiredSessions(db),
      // Photos 30 days in the trash, and the bytes of uploads abandoned for a day.
      purgeTrash(db, env.PHOTOS),
      expireStaleUploads({ db, bucket: env.PHOTOS }),
      // Trial credits still owed after a failure right after verification.
      grantAllOwedTrialCredits({ env, db }),
      // Public API Idempotency-Key answers older than a day (docs/decisions/0120-public-api.md).
      purgeIdempotency(db),
      // Original pages of listings sold (or off market) for the days their owner chose (docs/decisions/0170).
      closeSoldListings(db),
      // Every API key's callback secret sealed under the current signing key (docs/decisions/0182).
      resealCallbackSecrets({ db, env }),
    ]);
    const failed = results.filter((r) => r.status === "rejected").map((r) => r.reason);
    if (failed.length > 0) throw new AggregateError(failed, "daily maintenance failed");
  },
} satisfies ExportedHandler<Env>;
