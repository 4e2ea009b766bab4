import { navHintUpdate } from "@workers/http/auth";
import {
  inlineScriptHashes,
  isCacheablePublicRequest,
  isSignedOutPublicRead,
  servePublicPage,
  staticDocument,
} from "@workers/http/public-pages";
import { clearSessionCookie, navHintCookie } from "@workers/services/sessions";
import { describe, expect, it } from "vitest";

// Public pages from the edge cache (docs/decisions/0132): which requests are
// served from it, the document it keeps and the hash-based CSP beside it.

const PAGE = `<!DOCTYPE html><html><head><link rel="modulepreload" href="/assets/a.js" nonce="n1"/>
<link rel="icon" href="/favicon.svg"/></head><body><h1>Hi</h1>
<script nonce="n1">window.__ctx = {"a":1};</script><script type="module" nonce="n1" async="">import "/assets/a.js";</script>
<script src="/assets/b.js"></script></body></html>`;

async function sha(text: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return `'sha256-${btoa(String.fromCharCode(...d))}'`;
}

describe("public pages from the cache", () => {
  it("serves only signed-out GETs of the public pages without a query", () => {
    const req = (path: string, init: RequestInit = {}) => new Request(`https://x.test${path}`, init);
    for (const p of ["/", "/landing", "/gallery", "/features", "/blog", "/plans", "/privacy-policy"])
      expect(isCacheablePublicRequest(req(p)), p).toBe(true);
    expect(isCacheablePublicRequest(req("/dashboard"))).toBe(false);
    expect(isCacheablePublicRequest(req("/plans?billing=yearly"))).toBe(false);
    expect(isCacheablePublicRequest(req("/gallery", { method: "POST", body: "x" }))).toBe(false);
    expect(isCacheablePublicRequest(req("/", { headers: { Cookie: "a=1; sw_session=tok" } }))).toBe(false);
    expect(isCacheablePublicRequest(req("/", { headers: { Cookie: "other=1" } }))).toBe(true);
  });

  it("keeps the document without nonces or modulepreload links, and hashes exactly its inline scripts", async () => {
    const doc = staticDocument(PAGE);
    expect(doc).not.toContain("modulepreload");
    expect(doc).not.toContain("nonce");
    expect(doc).toContain('<link rel="icon" href="/favicon.svg"/>');
    expect(await inlineScriptHashes(doc)).toEqual([
      await sha('window.__ctx = {"a":1};'),
      await sha('import "/assets/a.js";'),
    ]);
  });

  it("renders once, then answers from the isolate with a CSP of hashes and no nonce", async () => {
    let renders = 0;
    const render = async () => {
      renders++;
      return new Response(PAGE, { headers: { "Content-Type": "text/html; charset=utf-8" } });
    };
    const request = new Request(`https://cache-${crypto.randomUUID()}.test/gallery`);
    const opts = { dev: false, waitUntil: () => undefined };
    const first = await servePublicPage(request, "v1", render, opts);
    const second = await servePublicPage(request, "v1", render, opts);
    expect(renders).toBe(1);
    expect(first.headers.get("X-Page-Cache")).toBe("miss");
    expect(second.headers.get("X-Page-Cache")).toBe("isolate");
    const csp = second.headers.get("Content-Security-Policy")!;
    expect(csp).toContain(`script-src 'self' ${await sha('window.__ctx = {"a":1};')}`);
    expect(csp).not.toContain("nonce");
    expect(second.headers.get("Cache-Control")).toBe("no-cache");
    expect(await second.text()).toBe(staticDocument(PAGE));
    // A new build renders again.
    await servePublicPage(request, "v2", render, opts);
    expect(renders).toBe(2);
  });

  it("passes through, uncached, an answer that sets a cookie or is not a 200 page", async () => {
    let renders = 0;
    const request = new Request(`https://cache-${crypto.randomUUID()}.test/`);
    const opts = { dev: false, waitUntil: () => undefined };
    const withCookie = async () => {
      renders++;
      return new Response(PAGE, { headers: { "Content-Type": "text/html", "Set-Cookie": "a=1" } });
    };
    const a = await servePublicPage(request, "v1", withCookie, opts);
    const b = await servePublicPage(request, "v1", withCookie, opts);
    expect(renders).toBe(2);
    expect(a.headers.get("X-Page-Cache")).toBeNull();
    expect(b.headers.get("Set-Cookie")).toBe("a=1");
    const notFound = await servePublicPage(
      new Request(`https://cache-${crypto.randomUUID()}.test/blog`),
      "v1",
      async () => new Response("gone", { status: 404, headers: { "Content-Type": "text/html" } }),
      opts,
    );
    expect(notFound.status).toBe(404);
  });

  it("takes /landing/ for /landing, and answers a public page's data and document without secrets, signed out only", () => {
    const req = (path: string, init: RequestInit = {}) => new Request(`https://x.test${path}`, init);
    expect(isCacheablePublicRequest(req("/landing/"))).toBe(true);
    expect(isCacheablePublicRequest(req("/dashboard/"))).toBe(false);
    for (const p of ["/", "/landing/", "/_.data", "/landing.data", "/gallery.data?_routes=root"])
      expect(isSignedOutPublicRead(req(p)), p).toBe(true);
    for (const p of ["/dashboard", "/dashboard.data", "/api/health", "/admin.data", "/x.data"])
      expect(isSignedOutPublicRead(req(p)), p).toBe(false);
    expect(isSignedOutPublicRead(req("/", { headers: { Cookie: "sw_session=t" } }))).toBe(false);
    expect(isSignedOutPublicRead(req("/gallery", { method: "POST", body: "x" }))).toBe(false);
  });
});

describe("the signed-in hint of prerendered pages (docs/decisions/0145)", () => {
  const ok = () => new Response("page");
  const req = (cookie?: string) =>
    new Request("https://x.test/dashboard", cookie ? { headers: { Cookie: cookie } } : {});
  const user = { role: "user" as const, verified: true, credits: 0, plan: null };
  const admin = { role: "admin" as const, verified: true, credits: 0, plan: null };

  it("sets the hint for whoever is signed in, once, and says admin only for a verified admin", () => {
    expect(navHintUpdate(req("sw_session=t"), user, ok(), true)).toBe(navHintCookie("user", true));
    expect(navHintUpdate(req("sw_session=t"), admin, ok(), true)).toBe(navHintCookie("admin", true));
    expect(navHintUpdate(req("sw_session=t"), { ...admin, verified: false }, ok(), false)).toBe(
      navHintCookie("user", false),
    );
    expect(navHintUpdate(req("sw_session=t; sw_nav=user"), user, ok(), true)).toBeNull();
    expect(navHintUpdate(req("sw_session=t; sw_nav=user"), admin, ok(), true)).toBe(navHintCookie("admin", true));
    // Someone with credits or a plan is sent to the dashboard by the page's sign-up links.
    expect(navHintUpdate(req("sw_session=t; sw_nav=user"), { ...user, credits: 2 }, ok(), true)).toBe(
      navHintCookie("user-stager", true),
    );
    expect(navHintUpdate(req("sw_session=t"), { ...admin, plan: "basic" }, ok(), true)).toBe(
      navHintCookie("admin-stager", true),
    );
    expect(navHintCookie("user", true)).toMatch(/^sw_nav=user; Max-Age=\d+; SameSite=Lax; Path=\/; Secure$/);
    // Readable by the page's script: never HttpOnly (it carries no secret).
    expect(navHintCookie("user", true)).not.toContain("HttpOnly");
  });

  it("clears the hint when nobody is signed in or the response signs out, and leaves a signed-out browser alone", () => {
    expect(navHintUpdate(req("sw_nav=user"), null, ok(), true)).toBe(navHintCookie(null, true));
    const signOut = new Response(null, { status: 302, headers: { "Set-Cookie": clearSessionCookie(true) } });
    expect(navHintUpdate(req("sw_session=t; sw_nav=user"), user, signOut, true)).toBe(navHintCookie(null, true));
    expect(navHintCookie(null, true)).toContain("Max-Age=0");
    expect(navHintUpdate(req(), null, ok(), true)).toBeNull();
  });
});
