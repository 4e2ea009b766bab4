import { readCookie, SESSION_COOKIE } from "@workers/services/sessions";
import { staticDocument, staticDocumentPolicy } from "./static-pages";

export { inlineScriptHashes, staticDocument } from "./static-pages";

// Public pages as fast as static ones (docs/decisions/0132-public-pages-from-the-edge-cache.md).
// A signed-out GET of a public page (no query, no session cookie) is the same
// document for everyone: it is rendered once, its inline scripts hashed into a
// Content-Security-Policy that needs no per-request nonce, the modulepreload
// links dropped (the first paint needs none of them; the hydration script
// fetches its modules itself), and the result kept in this isolate and in
// Cloudflare's cache of the data center (the Cache API), keyed by the build.
// Everything else, every POST (the contact form on /gallery) and every
// signed-in visit, is rendered per request with a nonce, as before.

export const PUBLIC_PAGES: ReadonlySet<string> = new Set([
  "/",
  "/landing",
  "/gallery",
  "/features",
  "/blog",
  "/terms-of-service",
  "/privacy-policy",
  "/refund-policy",
  "/plans",
]);

/** How long a cached page is served before it is rendered again (its content changes only with a deploy). */
export const PUBLIC_PAGE_TTL_SECONDS = 300;

/** "/landing/" is the page "/landing" (React Router matches both; the build prerenders the first). */
function pageOf(pathname: string): string {
  return pathname.length > 1 && pathname.endsWith("/") ? pathname.slice(0, -1) : pathname;
}

/** A signed-out read of a public page's document itself (no query, not its data): the same for everyone. */
export function isCacheablePublicRequest(request: Request): boolean {
  const url = new URL(request.url);
  return url.search === "" && PUBLIC_PAGES.has(pageOf(url.pathname)) && isSignedOutPublicRead(request);
}

interface CachedPage {
  body: string;
  csp: string;
  expires: number;
}

const inIsolate = new Map<string, CachedPage>();

function toResponse(page: CachedPage, hit: string): Response {
  return new Response(page.body, {
    status: 200,
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Content-Security-Policy": page.csp,
      // Browsers ask again each time: a visitor who signs in must not see a cached signed-out page.
      "Cache-Control": "no-cache",
      Vary: "Cookie",
      "X-Page-Cache": hit,
    },
  });
}

function edgeCache(): Cache | null {
  return typeof caches !== "undefined" && "default" in caches
    ? (caches as unknown as { default: Cache }).default
    : null;
}

/** The data address React Router reads a page's loaders from ("/" → "/_.data", "/landing" → "/landing.data"). */
function pageOfDataPath(pathname: string): string | null {
  if (pathname === "/_.data") return "/";
  return pathname.endsWith(".data") ? pathname.slice(0, -".data".length) : null;
}

/**
 * A signed-out GET of a public page or of its loaders' data: answered from nothing but the build and the public
 * settings, so it is answered even when the Worker's secrets are not set yet. The build prerenders through exactly
 * these requests (docs/decisions/0145-public-pages-prerendered.md).
 */
export function isSignedOutPublicRead(request: Request): boolean {
  if (request.method !== "GET") return false;
  if (readCookie(request.headers.get("Cookie"), SESSION_COOKIE) !== null) return false;
  const { pathname } = new URL(request.url);
  return PUBLIC_PAGES.has(pageOf(pathname)) || PUBLIC_PAGES.has(pageOfDataPath(pathname) ?? "");
}

/**
 * Serves a signed-out public page from the isolate or the edge cache, or renders it with `render` and caches it.
 * A render that is not cacheable (not a 200 HTML answer, or one that sets a cookie) is answered as it is.
 */
export async function servePublicPage(
  request: Request,
  buildVersion: string,
  render: () => Promise<Response>,
  opts: { dev: boolean; waitUntil(p: Promise<unknown>): void; now?: number },
): Promise<Response> {
  const now = opts.now ?? Date.now();
  const url = new URL(request.url);
  const key = `${url.origin}${pageOf(url.pathname)}?__page=${encodeURIComponent(buildVersion)}`;
  const held = inIsolate.get(key);
  if (held && held.expires > now) return toResponse(held, "isolate");

  const cache = edgeCache();
  const edge = await cache?.match(key).catch(() => undefined);
  if (edge) {
    const page: CachedPage = {
      body: await edge.text(),
      csp: edge.headers.get("Content-Security-Policy") ?? "",
      expires: now + PUBLIC_PAGE_TTL_SECONDS * 1000,
    };
    if (page.csp) {
      inIsolate.set(key, page);
      return toResponse(page, "edge");
    }
  }

  const rendered = await render();
  const type = rendered.headers.get("Content-Type") ?? "";
  if (rendered.status !== 200 || !type.startsWith("text/html") || rendered.headers.has("Set-Cookie")) {
    return rendered;
  }
  const body = staticDocument(await rendered.text());
  const csp = await staticDocumentPolicy(body, opts.dev);
  const page: CachedPage = { body, csp, expires: now + PUBLIC_PAGE_TTL_SECONDS * 1000 };
  inIsolate.set(key, page);
  if (cache) {
    const stored = toResponse(page, "edge");
    stored.headers.set("Cache-Control", `public, max-age=${PUBLIC_PAGE_TTL_SECONDS}`);
    stored.headers.delete("Vary");
    opts.waitUntil(cache.put(key, stored).catch(() => undefined));
  }
  return toResponse(page, "miss");
}
