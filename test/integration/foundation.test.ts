import { env } from "cloudflare:workers";
import { healthChecks } from "@db/schema";
import { db } from "@test/support/factories";
import { takeConsoleErrors } from "@test/support/setup";
import { workerFetch } from "@test/support/worker";
import { deepHealth } from "@workers/services/health";
import { describe, expect, it } from "vitest";

describe("GET /api/health through the Worker", () => {
  it("answers the public probe from a read, writing nothing", async () => {
    const before = await db.select().from(healthChecks).all();
    const res = await workerFetch("/api/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, checks: { d1: "ok" }, failing: [] });
    expect(await db.select().from(healthChecks).all()).toEqual(before);
  });

  it("deep probe: writes and reads D1, puts and gets R2, calls the Durable Object and the check Worker's Images binding", async () => {
    const before = Date.now();
    const res = await workerFetch("/api/health?deep=1");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      ok: true,
      checks: {
        d1: "ok",
        r2: "ok",
        durableObject: "ok",
        providerKey: "ok",
        checkWorker: "ok",
        checkImages: "ok",
      },
      failing: [],
    });

    const row = await db.select().from(healthChecks).get();
    expect(row?.checkedAt).toBeGreaterThanOrEqual(before);
    // The R2 probe object is written, read back and removed.
    expect((await env.PHOTOS.list({ prefix: "health/" })).objects).toHaveLength(0);
    const pings = await env.USER_OBJECT.get(env.USER_OBJECT.idFromName("__health__")).ping();
    expect(pings.pings).toBeGreaterThanOrEqual(2);
  });

  it("deep probe: a check Worker that cannot be reached, or whose Images binding fails, fails the probe (503)", async () => {
    const deps = { db, bucket: env.PHOTOS, clock: Date.now };
    const down = await deepHealth({
      ...deps,
      env: { ...env, CHECKER: { fetch: async () => Promise.reject(new Error("no such service")) } } as unknown as Env,
    });
    expect([down.ok, down.checks.checkWorker, down.checks.checkImages]).toEqual([false, "error", "error"]);
    expect(down.failing).toEqual(["checkWorker", "checkImages"]);
    const noImages = await deepHealth({
      ...deps,
      env: {
        ...env,
        CHECKER: { fetch: async () => Response.json({ ok: false, images: "error" }, { status: 503 }) },
      } as unknown as Env,
    });
    expect([noImages.checks.checkWorker, noImages.checks.checkImages]).toEqual(["ok", "error"]);
    const logged = takeConsoleErrors().map(String).join("\n");
    expect(logged).toContain("health: checkWorker failed");
    expect(logged).toContain("health: checkImages failed");
  });

  it("stays healthy under concurrent probes", async () => {
    const results = await Promise.all(Array.from({ length: 25 }, () => workerFetch("/api/health?deep=1")));
    expect(results.map((r) => r.status)).toEqual(Array(25).fill(200));
  });

  it("carries the security headers", async () => {
    const res = await workerFetch("/api/health");
    expect(res.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
    expect(res.headers.get("Strict-Transport-Security")).toContain("max-age=");
    expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(res.headers.get("Referrer-Policy")).toBe("strict-origin-when-cross-origin");
  });

  it("answers JSON 404 for an unknown API path and any method reaches Hono", async () => {
    for (const method of ["GET", "POST", "PUT", "DELETE", "PATCH"]) {
      const res = await workerFetch("/api/does-not-exist", { method });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ ok: false, code: "not_found", error: "Not found." });
    }
  });
});

describe("cross-site writes", () => {
  it("refuses a POST whose Origin is another site, for pages and the API", async () => {
    for (const path of ["/logout", "/api/dev/seed"]) {
      const res = await workerFetch(path, { method: "POST", headers: { Origin: "https://evil.example" } });
      expect(res.status).toBe(403);
    }
    const fetchSite = await workerFetch("/api/dev/seed", {
      method: "POST",
      headers: { "Sec-Fetch-Site": "cross-site" },
    });
    expect(fetchSite.status).toBe(403);
  });

  it("takes our origin from APP_ORIGIN, never from the Host the client sent", async () => {
    // The request names evil.example as its host and origin alike: a check built on Host would let it through.
    for (const path of ["http://evil.example/api/does-not-exist", "http://evil.example/logout"]) {
      const res = await workerFetch(path, { method: "POST", headers: { Origin: "http://evil.example" } });
      expect(res.status, path).toBe(403);
    }
    // A sibling subdomain is not us either.
    const sibling = await workerFetch("/api/does-not-exist", {
      method: "POST",
      headers: { "Sec-Fetch-Site": "same-site" },
    });
    expect(sibling.status).toBe(403);
    // Our configured origin (vitest.config.ts) passes whatever Host was sent.
    const ours = await workerFetch("http://other-host.test/api/does-not-exist", {
      method: "POST",
      headers: { Origin: "http://localhost" },
    });
    expect(ours.status).toBe(404);
  });

  it("lets a same-origin POST through", async () => {
    const res = await workerFetch("/api/does-not-exist", { method: "POST", headers: { Origin: "http://localhost" } });
    expect(res.status).toBe(404);
  });
});
