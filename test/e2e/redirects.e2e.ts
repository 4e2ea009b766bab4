import { describe, expect, inject, it } from "vitest";
import { baseUrl } from "./browser.ts";
import { createFixtureUser } from "./fixtures.ts";

// Every carrier of a return address — the ?redirectTo query, the sign-in form's field, the verification
// e-mail's token and the Google sign-in state cookie — with payloads a browser would follow off our site.
// Whatever comes in, every answer redirects to our own origin (or answers without redirecting).

const PAYLOADS = [
  "/\t/evil.example",
  "/\n/evil.example",
  "/\r\n/evil.example",
  "/\\evil.example",
  "\\\\evil.example",
  "//evil.example",
  "%2F%2Fevil.example",
  "/%09/evil.example",
  "https://evil.example/x",
  "http:evil.example",
  "javascript:alert(1)",
  "/dashboard.data?_routes=routes%2Fdashboard",
];
const PASSWORD = "redirect test 1";
const form = (fields: Record<string, string>) => ({
  method: "POST",
  headers: { Origin: baseUrl(), "Content-Type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields).toString(),
  redirect: "manual" as const,
});

/** Where an answer sends the browser, resolved the way a browser resolves it; null when it does not redirect. */
function landing(res: Response): URL | null {
  const location = res.headers.get("Location");
  return location === null ? null : new URL(location, baseUrl());
}

function expectOurs(res: Response, label: string) {
  expect(res.status, label).toBeLessThan(500);
  const to = landing(res);
  if (to) {
    expect(to.origin, `${label} -> ${res.headers.get("Location")}`).toBe(new URL(baseUrl()).origin);
    expect(to.pathname, label).not.toMatch(/\.data$/);
  }
}

async function latestLink(to: string, subject: string): Promise<string> {
  const api = `http://127.0.0.1:${inject("ports").mail}/_emulator/emails?to=${encodeURIComponent(to)}`;
  for (let i = 0; i < 100; i++) {
    const mails = (await (await fetch(api)).json()) as { subject: string; text: string }[];
    const mail = mails.filter((m) => m.subject === subject).at(-1);
    const link = mail?.text.match(/https?:\/\/\S+/)?.[0];
    if (link) return link;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no "${subject}" e-mail to ${to}`);
}

describe("return addresses always land on our origin", { timeout: 120_000 }, () => {
  it("through the sign-in form's field", async () => {
    const user = await createFixtureUser(baseUrl(), { password: PASSWORD, session: false });
    for (const payload of PAYLOADS) {
      const res = await fetch(
        `${baseUrl()}/login`,
        form({ intent: "signin", email: user.email, password: PASSWORD, redirectTo: payload }),
      );
      expect(res.status, JSON.stringify(payload)).toBe(302);
      expectOurs(res, `form ${JSON.stringify(payload)}`);
    }
  });

  it("through the ?redirectTo query, for a signed-in visitor", async () => {
    const user = await createFixtureUser(baseUrl());
    for (const payload of PAYLOADS) {
      for (const page of ["/login", "/auth"]) {
        const res = await fetch(`${baseUrl()}${page}?redirectTo=${encodeURIComponent(payload)}`, {
          headers: { Cookie: `sw_session=${user.sessionToken}` },
          redirect: "manual",
        });
        expectOurs(res, `query ${page} ${JSON.stringify(payload)}`);
      }
    }
  });

  it("through the verification e-mail's token", async () => {
    for (const payload of PAYLOADS.slice(0, 6)) {
      const email = `redirect-${crypto.randomUUID().slice(0, 8)}@example.test`;
      const signup = await fetch(
        `${baseUrl()}/auth`,
        form({
          intent: "signup",
          name: "Redirect Test",
          email,
          password: PASSWORD,
          acceptTerms: "on",
          redirectTo: payload,
        }),
      );
      expect(signup.status, JSON.stringify(payload)).toBeLessThan(400);
      const link = new URL(await latestLink(email, "Verify your email for Stagewise"));
      const token = link.searchParams.get("token")!;
      const verified = await fetch(`${baseUrl()}/verify-email`, form({ token, password: PASSWORD }));
      expect(verified.status).toBe(302);
      expectOurs(verified, `verification ${JSON.stringify(payload)}`);
      // The address carried on to the sign-in page is one of ours, and signing in lands there.
      const carried = landing(verified)!.searchParams.get("redirectTo") ?? "";
      const signin = await fetch(
        `${baseUrl()}/login`,
        form({ intent: "signin", email, password: PASSWORD, redirectTo: carried }),
      );
      expect(signin.status).toBe(302);
      expectOurs(signin, `verified sign-in ${JSON.stringify(payload)}`);
    }
  });

  it("through the Google sign-in state cookie", async () => {
    for (const payload of PAYLOADS) {
      const start = await fetch(`${baseUrl()}/auth/google`, form({ redirectTo: payload }));
      expect(start.status, JSON.stringify(payload)).toBe(302);
      const cookie = start.headers.get("Set-Cookie") ?? "";
      const stored = /sw_oauth=[^.;]+\.[^.;]+\.([^;]*)/.exec(cookie)?.[1] ?? "";
      const kept = decodeURIComponent(stored);
      // What the state cookie keeps is empty or a path on our site.
      if (kept)
        expect(new URL(kept, baseUrl()).origin, `${JSON.stringify(payload)} kept ${kept}`).toBe(
          new URL(baseUrl()).origin,
        );
      // A kept path may mention the payload ("/%09/evil.example" is a path on our site); it never leaves it.
      if (kept) expect(kept, `${JSON.stringify(payload)} kept ${kept}`).toMatch(/^\/(?![/\\\t\n\r])/);
    }
  });
});
