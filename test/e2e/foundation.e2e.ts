import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { ROOT, TRACE_STORE_DIR } from "../../scripts/stack.ts";
import { baseUrl, browserForFile } from "./browser.ts";
import { createFixtureUser } from "./fixtures.ts";

const b = browserForFile();

describe("the running stack", () => {
  it("serves / with 200 and reports every binding healthy", async () => {
    const home = await fetch(`${baseUrl()}/`);
    expect(home.status).toBe(200);
    expect(await home.text()).toContain("Transform Spaces Instantly");
    const health = await fetch(`${baseUrl()}/api/health?deep=1`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      ok: true,
      checks: { d1: "ok", r2: "ok", durableObject: "ok", providerKey: "ok", checkWorker: "ok", checkImages: "ok" },
    });
  });

  it("titles its error pages: an unknown address, a folder that is not yours, an unknown batch, a refused method", async () => {
    const user = await createFixtureUser(baseUrl());
    const headers = { Cookie: `sw_session=${user.sessionToken}` };
    for (const path of ["/no-such-page", "/dashboard?folder=notyours", "/batches/not-a-batch"]) {
      const res = await fetch(`${baseUrl()}${path}`, { headers });
      expect(res.status, path).toBe(404);
      const html = await res.text();
      expect(html.match(/<title>([^<]*)<\/title>/)?.[1], path).toBe("Page not found · Stagewise");
    }
    // A request a page does not take (a POST to a page without a form) is the request's doing, not an outage.
    for (const path of ["/features", "/terms-of-service"]) {
      const res = await fetch(`${baseUrl()}${path}`, { method: "POST", headers: { Origin: baseUrl() }, body: "x" });
      expect(res.status, path).toBe(405);
      const html = await res.text();
      expect(html.match(/<title>([^<]*)<\/title>/)?.[1], path).toBe("This request was not accepted · Stagewise");
      expect(html, path).toContain("nothing was changed");
    }
    // A page with its own error boundary names its own error, and a refused method as every other page does.
    const link = await (await fetch(`${baseUrl()}/o/no-such-link`)).text();
    expect(link.match(/<title>([^<]*)<\/title>/)?.[1]).toBe("This link does not exist · Stagewise");
    const put = await fetch(`${baseUrl()}/o/no-such-link`, { method: "PUT", headers: { Origin: baseUrl() } });
    expect(put.status).toBe(405);
    expect((await put.text()).match(/<title>([^<]*)<\/title>/)?.[1]).toBe("This request was not accepted · Stagewise");
    // A page that names itself keeps its own title.
    const dashboard = await (await fetch(`${baseUrl()}/dashboard`, { headers })).text();
    expect(dashboard.match(/<title>([^<]*)<\/title>/)?.[1]).toBe("Dashboard · Stagewise");
  });

  it("renders every page of the route table with one main landmark and no id twice, signed in and out", async () => {
    const routes = (await (await fetch(`${baseUrl()}/api/dev/routes`)).json()) as { app: string; path: string }[];
    const pages = routes
      .filter((r) => r.app === "page")
      .map((r) => r.path.replace(/:\w+/g, "zzzz").replace("*", "no-such-page"));
    expect(pages.length).toBeGreaterThan(15);
    const user = await createFixtureUser(baseUrl());
    let documents = 0;
    const signedOut: Record<string, string> = {};
    for (const headers of [signedOut, { Cookie: `sw_session=${user.sessionToken}` }]) {
      for (const path of [...pages, "/dashboard?upload=1", "/batches/new"]) {
        const res = await fetch(`${baseUrl()}${path}`, { headers, redirect: "manual" });
        if (!res.headers.get("Content-Type")?.startsWith("text/html")) continue;
        const html = await res.text();
        const label = `${path} (${"Cookie" in headers ? "signed in" : "signed out"}, ${res.status})`;
        expect(html.match(/<main[\s>]/g)?.length, label).toBe(1);
        const ids = [...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
        expect(
          ids.filter((id, i) => ids.indexOf(id) !== i),
          label,
        ).toEqual([]);
        documents++;
      }
    }
    expect(documents).toBeGreaterThan(30);
  });

  it("keeps wrangler's request traces where each start clears them, beside the data it keeps", async () => {
    // scripts/stack.ts clearTraces removes this folder at every start: it must be the one wrangler writes to.
    const traces = join(inject("stateDir"), TRACE_STORE_DIR);
    await fetch(`${baseUrl()}/api/health`);
    await expect
      .poll(() => (existsSync(traces) ? readdirSync(traces, { recursive: true }).map(String) : []))
      .toContainEqual(expect.stringMatching(/\.sqlite$/));
    expect(existsSync(join(inject("stateDir"), "v3", "d1"))).toBe(true);
  });

  it("seeded the demo users idempotently", async () => {
    const again = await fetch(`${baseUrl()}/api/dev/seed`, { method: "POST" });
    expect(await again.json()).toEqual({
      ok: true,
      users: [
        { email: "demo@example.com", credits: 20, role: "user" },
        { email: "admin@example.com", credits: 0, role: "admin" },
      ],
    });
  });
});

describe("in Chromium", () => {
  it("navigates from a hydrated page to / on the client without a reload or any console error", async () => {
    const page = await b.newPage();
    await page.goto("/features");
    await page.waitForSelector("html[data-hydrated=true]");
    await page.evaluate(() => {
      (window as unknown as { marker: number }).marker = 42;
    });
    await page.getByTestId("brand").click();
    await page.waitForURL(`${baseUrl()}/`);
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(42);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Transform Spaces Instantly");
    page.assertClean();
  });

  it("serves / and /landing as documents that load no JavaScript module (docs/decisions/0136-landing-page-islands.md)", async () => {
    for (const path of ["/", "/landing"]) {
      const page = await b.newPage();
      const scripts: string[] = [];
      page.on("request", (r) => {
        if (r.resourceType() === "script") scripts.push(r.url());
      });
      await page.goto(path);
      await page.waitForSelector("html[data-hydrated=true]");
      await page.waitForLoadState("networkidle");
      expect(scripts, path).toEqual([]);
      expect(await page.locator("script[type=module], link[rel=modulepreload]").count(), path).toBe(0);
      page.assertClean();
    }
  });

  it("opens the mobile menu at 390 px", async () => {
    const ctx = await b.newContext({ viewport: { width: 390, height: 844 } });
    const page = await b.newPage(ctx);
    await page.goto("/");
    const menu = page.getByTestId("mobile-menu");
    expect(await menu.isVisible()).toBe(false);
    await page.getByLabel("Menu").click();
    expect(await menu.isVisible()).toBe(true);
    page.assertClean();
  });
});

describe("the production build", () => {
  function files(dir: string): string[] {
    return readdirSync(dir).flatMap((name) => {
      const p = join(dir, name);
      return statSync(p).isDirectory() ? files(p) : [p];
    });
  }

  it("ships no server-only code, secret or provider host to the browser", () => {
    const client = files(join(ROOT, "build", "client"));
    expect(client.some((f) => f.endsWith(".js"))).toBe(true);
    const vars = inject("stackVars");
    const secrets = [
      "MAIL_API_KEY",
      "PROVIDER_API_KEY",
      "STRIPE_SECRET_KEY",
      "STRIPE_WEBHOOK_SECRET",
      "GOOGLE_CLIENT_SECRET",
    ]
      .map((k) => vars[k])
      .filter((v): v is string => Boolean(v));
    expect(secrets.length).toBeGreaterThanOrEqual(4);
    const forbidden = [
      "drizzle-orm",
      "sqliteTable",
      "pbkdf2-sha256",
      "stripe.com",
      "decor8",
      "api.resend.com",
      "USER_OBJECT",
      ...secrets,
    ];
    for (const file of client) {
      const text = readFileSync(file, "utf8");
      for (const needle of forbidden) expect(text.includes(needle), `${needle} in ${file}`).toBe(false);
    }
  });

  it("bundles React's production builds, on the server and in the browser, even when built from a test run", () => {
    // This suite runs under Vitest, which sets NODE_ENV=test; Vite keeps an inherited NODE_ENV, and React then picks
    // its development renderer (several times slower to render a page). The stack's build sets it to production.
    expect(process.env.NODE_ENV).toBe("test");
    for (const side of ["server", "client"]) {
      const scripts = files(join(ROOT, "build", side)).filter((f) => f.endsWith(".js"));
      const text = scripts.map((f) => readFileSync(f, "utf8")).join("\n");
      // Production React throws minified errors; only development React carries its warnings' texts.
      expect(text, side).toContain("Minified React error");
      expect(text, side).not.toContain("Each child in a list should have a unique");
    }
  });

  it("gives a deployed worker no dev tools", () => {
    const wrangler = JSON.parse(readFileSync(join(ROOT, "build", "server", "wrangler.json"), "utf8"));
    expect(wrangler.vars.DEV_TOOLS).toBe("0");
    expect(wrangler.vars.APP_ENV).toBe("production");
    expect(readdirSync(join(ROOT, "build", "server"))).not.toContain(".dev.vars");
  });
});
