import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { baseUrl, browserForFile, createUser, signedInContext } from "./browser.ts";

// Public pages served the same to every signed-out visitor:
//   - "/" and "/landing" ship no JavaScript and are prerendered into static files at build time, served by the
//     platform before the Worker runs, with their headers from _headers (docs/decisions/0145);
//   - the other public pages hydrate and come from the Worker's edge cache (docs/decisions/0132).
// Both carry a CSP of hashes and no nonce; signed-in visitors see their own navigation on both.

const b = browserForFile();

const PRERENDERED = ["/", "/landing"];
const CACHED = ["/gallery", "/features", "/blog", "/terms-of-service", "/plans"];

function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)]
    .filter((m) => !/\bsrc\s*=/i.test(m[1] ?? ""))
    .map(
      (m) =>
        `'sha256-${createHash("sha256")
          .update(m[2] ?? "")
          .digest("base64")}'`,
    );
}

async function expectStaticDocument(res: Response, path: string): Promise<string> {
  expect(res.status, path).toBe(200);
  const csp = res.headers.get("Content-Security-Policy") ?? "";
  expect(csp, path).toMatch(/^default-src 'self'; script-src 'self'( 'sha256-[A-Za-z0-9+/=]+')+( 'unsafe-eval')?;/);
  expect(csp, path).not.toContain("nonce");
  // One policy only: the general one of plain files (default-src 'none') must not be joined to it.
  expect(csp, path).not.toContain("default-src 'none'");
  const html = await res.text();
  expect(html, path).not.toContain("modulepreload");
  expect(html, path).not.toContain("nonce=");
  // Exactly the page's own inline scripts are allowed.
  for (const hash of inlineScriptHashes(html)) expect(csp, path).toContain(hash);
  return html;
}

describe("public pages served as static files or from the cache", () => {
  it("serves / and /landing as prerendered files: no Worker render, the Worker's security headers, a CSP of hashes", async () => {
    for (const path of PRERENDERED) {
      const res = await fetch(`${baseUrl()}${path}`, { redirect: "manual" });
      // Not the Worker's cache: the platform's static file, with its ETag.
      expect(res.headers.get("X-Page-Cache"), path).toBeNull();
      expect(res.headers.get("ETag"), path).toBeTruthy();
      expect(res.headers.get("X-Frame-Options"), path).toBe("DENY");
      expect(res.headers.get("X-Content-Type-Options"), path).toBe("nosniff");
      expect(res.headers.get("Strict-Transport-Security"), path).toContain("max-age=");
      expect(res.headers.get("Permissions-Policy"), path).toContain("camera=()");
      expect(res.headers.get("Cross-Origin-Opener-Policy"), path).toBe("same-origin");
      expect(res.headers.get("Cache-Control"), path).toBe("no-cache");
      const html = await expectStaticDocument(res, path);
      expect(html, path).toContain("Before &amp; After Gallery");
      // No module script: the page works without loading JavaScript.
      expect(html, path).not.toMatch(/<script[^>]*type="module"/);
    }
    // The address people use stays the address: no redirect to a trailing slash.
    const landing = await fetch(`${baseUrl()}/landing`, { redirect: "manual" });
    expect(landing.status).toBe(200);
  });

  it("serves each hydrating public page rendered once, from the cache, with a CSP of hashes", async () => {
    for (const path of CACHED) {
      await fetch(`${baseUrl()}${path}`);
      const res = await fetch(`${baseUrl()}${path}`);
      expect(["isolate", "edge"], path).toContain(res.headers.get("X-Page-Cache"));
      await expectStaticDocument(res, path);
    }
  });

  it("preloads the hero picture once on /", async () => {
    const html = await (await fetch(`${baseUrl()}/`)).text();
    expect(html.match(/<link[^>]*rel="preload"[^>]*as="image"[^>]*>/g) ?? []).toHaveLength(1);
  });

  it("runs the pages' scripts with no CSP violation", async () => {
    const page = await b.newPage();
    await page.addInitScript(() => {
      (window as unknown as { violations: string[] }).violations = [];
      document.addEventListener("securitypolicyviolation", (e) =>
        (window as unknown as { violations: string[] }).violations.push(`${e.violatedDirective} ${e.blockedURI}`),
      );
    });
    for (const path of ["/", "/landing", "/gallery"]) {
      const res = await page.goto(path);
      expect(res?.status(), path).toBe(200);
      await page.waitForSelector("html[data-hydrated=true]");
      expect(await page.evaluate(() => (window as unknown as { violations: string[] }).violations)).toEqual([]);
    }
    page.assertClean();
  });

  it("renders a hydrating page per request with a nonce for a signed-in visitor, never the cached copy", async () => {
    const user = await createUser({ credits: 3 });
    const res = await fetch(`${baseUrl()}/gallery`, { headers: { Cookie: `sw_session=${user.sessionToken}` } });
    expect(res.headers.get("X-Page-Cache")).toBeNull();
    expect(res.headers.get("Content-Security-Policy")).toMatch(/script-src 'self' 'nonce-[a-z0-9]+'/);
    const ctx = await signedInContext(b, user);
    const page = await b.newPage(ctx);
    await page.goto("/gallery");
    await page.waitForSelector("html[data-hydrated=true]");
    await page.getByRole("button", { name: "Logout" }).first().waitFor();
    expect(await page.getByRole("link", { name: "Login", exact: true }).count()).toBe(0);
    page.assertClean();
  });

  it("shows a signed-in visitor their navigation on the prerendered /, from the signed-in hint, and signs out from it", async () => {
    const user = await createUser({ credits: 3 });
    const ctx = await signedInContext(b, user);
    const page = await b.newPage(ctx);
    // Any page the Worker renders for them leaves the hint beside the session.
    await page.goto("/dashboard");
    expect((await ctx.cookies()).find((c) => c.name === "sw_nav")?.value).toBe("user-stager");
    await page.goto("/");
    await page.waitForSelector("html[data-hydrated=true]");
    const header = page.locator("header nav > div").first();
    await header.getByRole("button", { name: "Logout" }).waitFor();
    expect(await header.getByRole("link", { name: "Login", exact: true }).isVisible()).toBe(false);
    expect(await header.getByRole("link", { name: "Admin", exact: true }).isVisible()).toBe(false);
    // The prerendered Logout is a plain form: it signs out, and the hint goes with the session.
    await header.getByRole("button", { name: "Logout" }).click();
    await page.waitForURL((u) => u.pathname === "/");
    await page.waitForSelector("html[data-hydrated=true]");
    expect((await ctx.cookies()).some((c) => c.name === "sw_nav" || c.name === "sw_session")).toBe(false);
    await header.getByRole("link", { name: "Login", exact: true }).waitFor();
    expect(await header.getByRole("button", { name: "Logout" }).isVisible()).toBe(false);
    page.assertClean();
  });

  it("shows an admin the Admin link on the prerendered /", async () => {
    const admin = await createUser({ role: "admin" });
    const ctx = await signedInContext(b, admin);
    const page = await b.newPage(ctx);
    await page.goto("/dashboard");
    expect((await ctx.cookies()).find((c) => c.name === "sw_nav")?.value).toMatch(/^admin/);
    await page.goto("/");
    await page.waitForSelector("html[data-hydrated=true]");
    await page.locator("header nav > div").first().getByRole("link", { name: "Admin", exact: true }).waitFor();
    page.assertClean();
  });
});
