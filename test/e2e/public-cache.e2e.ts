import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseUrl, createUser, type OpenBrowser, openBrowser, signedInContext } from "./browser.ts";

// Public pages from the edge cache (docs/decisions/0132-public-pages-from-the-edge-cache.md):
// signed-out visitors get one cached document with a CSP of hashes and no
// modulepreload links; it hydrates without a single CSP violation; signed-in
// visitors keep the per-request render with a nonce.

let b: OpenBrowser;
beforeAll(async () => {
  b = await openBrowser();
});
afterAll(async () => {
  await b?.close();
});

const PAGES = ["/", "/landing", "/gallery", "/features", "/blog", "/terms-of-service", "/plans"];

describe("public pages from the cache", () => {
  it("serves each public page rendered once, with a CSP of hashes, no nonce and no modulepreload", async () => {
    for (const path of PAGES) {
      await fetch(`${baseUrl()}${path}`);
      const res = await fetch(`${baseUrl()}${path}`);
      expect(res.status, path).toBe(200);
      expect(["isolate", "edge"], path).toContain(res.headers.get("X-Page-Cache"));
      const csp = res.headers.get("Content-Security-Policy") ?? "";
      expect(csp, path).toMatch(/script-src 'self'( 'sha256-[A-Za-z0-9+/=]+')+( 'unsafe-eval')?;/);
      expect(csp, path).not.toContain("nonce");
      const html = await res.text();
      expect(html, path).not.toContain("modulepreload");
      expect(html, path).not.toContain("nonce=");
    }
  });

  it("preloads the hero picture once on /", async () => {
    const html = await (await fetch(`${baseUrl()}/`)).text();
    expect(html.match(/<link[^>]*rel="preload"[^>]*as="image"[^>]*>/g) ?? []).toHaveLength(1);
  });

  it("hydrates a cached page with no CSP violation and its scripts working", async () => {
    const page = await b.newPage();
    await page.addInitScript(() => {
      (window as unknown as { violations: string[] }).violations = [];
      document.addEventListener("securitypolicyviolation", (e) =>
        (window as unknown as { violations: string[] }).violations.push(`${e.violatedDirective} ${e.blockedURI}`),
      );
    });
    for (const path of ["/", "/gallery"]) {
      const res = await page.goto(path);
      expect(["isolate", "edge", "miss"]).toContain(res?.headers()["x-page-cache"]);
      await page.waitForSelector("html[data-hydrated=true]");
      expect(await page.evaluate(() => (window as unknown as { violations: string[] }).violations)).toEqual([]);
    }
    page.assertClean();
  });

  it("renders per request with a nonce for a signed-in visitor, and never serves them the cached page", async () => {
    const user = await createUser({ credits: 3 });
    const res = await fetch(`${baseUrl()}/`, { headers: { Cookie: `sw_session=${user.sessionToken}` } });
    expect(res.headers.get("X-Page-Cache")).toBeNull();
    expect(res.headers.get("Content-Security-Policy")).toMatch(/script-src 'self' 'nonce-[a-z0-9]+'/);
    const ctx = await signedInContext(b, user);
    const page = await b.newPage(ctx);
    await page.goto("/");
    await page.waitForSelector("html[data-hydrated=true]");
    // The signed-in navigation (Logout, no Login) shows: not the signed-out copy.
    await page.getByRole("button", { name: "Logout" }).first().waitFor();
    expect(await page.getByRole("link", { name: "Login", exact: true }).count()).toBe(0);
    page.assertClean();
  });
});
