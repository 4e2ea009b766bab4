import { signedIn } from "@test/support/factories";
import { workerFetch } from "@test/support/worker";
import { describe, expect, it } from "vitest";

const paths: [string, string, unknown?][] = [
  ["GET", "/api/admin/users"],
  ["GET", "/api/admin/users/someone"],
  ["POST", "/api/admin/users/someone/credits", { amount: 5, reason: "because" }],
  ["POST", "/api/admin/users/someone/sessions/revoke", { reason: "because" }],
  ["POST", "/api/admin/users/someone/role", { role: "admin", reason: "because" }],
  ["POST", "/api/admin/users/someone/verification", { reason: "because" }],
];

function call(method: string, path: string, cookie: string | null, body?: unknown) {
  return workerFetch(path, {
    method,
    headers: { ...(cookie ? { Cookie: cookie } : {}), "Content-Type": "application/json" },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
}

describe("/api/admin", () => {
  it("answers 404 to signed-out visitors, verified non-admins and unverified admins", async () => {
    const user = await signedIn();
    const unverifiedAdmin = await signedIn({ role: "admin", verified: false });
    for (const cookie of [null, user.cookie, unverifiedAdmin.cookie]) {
      for (const [method, path, body] of paths) {
        const res = await call(method, path, cookie, body);
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(await res.json()).toEqual({ ok: false, code: "not_found", error: "Not found." });
      }
    }
  });

  it("lets an admin list users and grant credits, and validates input with 400", async () => {
    const adminUser = await signedIn({ role: "admin" });
    const target = await signedIn({ credits: 1 });
    const list = await call("GET", `/api/admin/users?q=${encodeURIComponent(target.email)}`, adminUser.cookie);
    expect(list.status).toBe(200);
    expect(((await list.json()) as { rows: { email: string; credits: number }[] }).rows).toEqual([
      expect.objectContaining({ email: target.email, credits: 1 }),
    ]);
    const bad = await call("POST", `/api/admin/users/${target.id}/credits`, adminUser.cookie, { amount: 5 });
    expect(bad.status).toBe(400);
    const badSort = await call("GET", "/api/admin/users?sort=password_hash", adminUser.cookie);
    expect(badSort.status).toBe(400);
    const notJson = await workerFetch(`/api/admin/users/${target.id}/credits`, {
      method: "POST",
      headers: { Cookie: adminUser.cookie },
      body: "{",
    });
    // No Content-Type: not a body this endpoint reads (415); the same bytes declared as JSON are malformed (400).
    expect(notJson.status).toBe(415);
    const malformed = await workerFetch(`/api/admin/users/${target.id}/credits`, {
      method: "POST",
      headers: { Cookie: adminUser.cookie, "Content-Type": "application/json" },
      body: "{",
    });
    expect(malformed.status).toBe(400);
    const ok = await call("POST", `/api/admin/users/${target.id}/credits`, adminUser.cookie, {
      amount: 5,
      reason: "welcome",
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ ok: true, message: "Granted 5 credits. Balance: 6." });
  });
});
