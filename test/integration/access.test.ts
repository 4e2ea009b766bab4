import { db, makeUser, signedIn } from "@test/support/factories";
import { workerFetch } from "@test/support/worker";
import { oauthStateCookie, readOauthState } from "@workers/services/accounts/google";
import { secureCookies } from "@workers/services/current-user";
import { clearSessionCookie, createSession, SESSION_TTL_MS, sessionCookie } from "@workers/services/sessions";
import { describe, expect, it } from "vitest";

describe("cookies", () => {
  it("carries the session token with HttpOnly, SameSite=Lax, Path=/ and a 30-day Max-Age, Secure except on local http", async () => {
    const user = await makeUser();
    const { token, expiresAt } = await createSession(db, user.id, "vitest");
    expect(token).toMatch(/^[a-z2-7]{32}$/); // 160 random bits
    const secure = sessionCookie(token, expiresAt, true);
    expect(secure.split("; ")).toEqual([
      `sw_session=${token}`,
      "HttpOnly",
      "SameSite=Lax",
      "Path=/",
      expect.stringMatching(/^Max-Age=(2591999|2592000)$/),
      "Secure",
    ]);
    expect(sessionCookie(token, expiresAt, false)).not.toContain("Secure");
    expect(clearSessionCookie(true)).toBe("sw_session=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0; Secure");
    expect(SESSION_TTL_MS).toBe(30 * 24 * 60 * 60 * 1000);
  });

  it("is Secure whenever the site is served over https", () => {
    const local = { APP_ORIGIN: "http://localhost:5173" };
    expect(secureCookies(local, new Request("http://localhost:5173/login"))).toBe(false);
    expect(secureCookies(local, new Request("https://localhost:5173/login"))).toBe(true);
    expect(secureCookies({ APP_ORIGIN: "https://stagewise.example.com" }, new Request("http://internal/"))).toBe(true);
  });

  it("keeps the Google state and PKCE verifier in a short-lived HttpOnly cookie scoped to the callback", () => {
    const cookie = oauthStateCookie(
      { state: "st4te", codeVerifier: "v3rifier", redirectTo: "/checkout?planId=small" },
      true,
    );
    expect(cookie).toMatch(/^sw_oauth=[^;]+; HttpOnly; SameSite=Lax; Path=\/auth\/google; Max-Age=600; Secure$/);
    const value = cookie.split(";")[0]!;
    expect(readOauthState(value)).toEqual({
      state: "st4te",
      codeVerifier: "v3rifier",
      redirectTo: "/checkout?planId=small",
    });
    const evil = oauthStateCookie({ state: "s", codeVerifier: "v", redirectTo: "//evil.example" }, false).split(
      ";",
    )[0]!;
    expect(readOauthState(evil)?.redirectTo).toBeNull();
  });
});

describe("cross-site requests", () => {
  it("refuses cross-site POSTs to every account form before any action runs", async () => {
    for (const path of ["/login", "/auth", "/auth/google", "/reset-password", "/verify-email", "/logout"]) {
      const res = await workerFetch(path, {
        method: "POST",
        headers: { Origin: "https://evil.example", "Content-Type": "application/x-www-form-urlencoded" },
        body: "intent=signin&email=a%40example.test&password=x",
      });
      expect(res.status, path).toBe(403);
      expect(await res.json()).toEqual({ ok: false, code: "forbidden", error: "Cross-site request refused." });
    }
  });
});

describe("admin API", () => {
  it("answers 404 to visitors, verified non-admins and unverified admins, and 200 to a verified admin", async () => {
    const cases: [string, Record<string, string>][] = [
      ["visitor", {}],
      ["verified user", { Cookie: (await signedIn({ role: "user" })).cookie }],
      ["unverified admin", { Cookie: (await signedIn({ role: "admin", verified: false })).cookie }],
    ];
    for (const [who, headers] of cases) {
      const res = await workerFetch("/api/admin", { headers });
      expect(res.status, who).toBe(404);
      expect(await res.json()).toEqual({ ok: false, code: "not_found", error: "Not found." });
    }
    const admin = await signedIn({ role: "admin" });
    const res = await workerFetch("/api/admin", { headers: { Cookie: admin.cookie } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, admin: admin.email });
  });
});
