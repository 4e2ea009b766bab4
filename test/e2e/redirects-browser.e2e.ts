import type { BrowserContext, Locator, Page } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { baseUrl, browserForFile, createUser } from "./browser.ts";

// Every carrier of a return address (the ?redirectTo= query, the sign-in form's
// field, the verification e-mail's token, the Google sign-in's state cookie)
// fed the payloads a browser would take off our origin. Whatever comes in, the
// person lands on our origin and no answer is a 5xx (issue 13,
// workers/services/accounts/landing.ts). Driven in Chromium, so what is checked
// is where the browser ends up; test/e2e/redirects.e2e.ts checks the raw answers.

const b = browserForFile();

const PASSWORD = "redirect password 1";
const uniqueEmail = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}@example.test`;
const origin = () => new URL(baseUrl()).origin;

/** Payloads that must land on the default page (they name another host, or are not a path). */
const OFF_SITE: Record<string, string> = {
  tab: "/\t/evil.example/",
  newline: "/\n/evil.example/",
  "CR LF": "/\r\n/evil.example/",
  backslash: "/\\evil.example/",
  "leading backslashes": "\\\\evil.example/",
  encoded: "%2F%09%2Fevil.example",
  absolute: "https://evil.example/",
  "protocol-relative": "//evil.example/",
  "javascript:": "javascript:alert(1)",
  "header injection": "\r\nSet-Cookie: x=1",
  "user info": "http://127.0.0.1@evil.example/",
};
/** Payloads that stay on our origin, but never as raw data: an encoded path and a single-fetch data address. */
const ON_SITE: Record<string, { value: string; lands: RegExp }> = {
  "encoded slashes": { value: "/%2F%2Fevil.example/", lands: /^\/%2F%2Fevil\.example\/$/ },
  NUL: { value: "/\u0000/evil.example", lands: /^\/%00\/evil\.example$/ },
  "data address": { value: "/billing.data?_routes=routes%2Fbilling%2Fbilling", lands: /^\/billing$/ },
};
const CASES: [string, string, RegExp | null][] = [
  ...Object.entries(OFF_SITE).map(([k, v]) => [k, v, null] as [string, string, null]),
  ...Object.entries(ON_SITE).map(([k, v]) => [k, v.value, v.lands] as [string, string, RegExp]),
];

/** The payloads each browser flow is tried with (the fetch test above tries them all). */
const CORE = new Set(["tab", "newline", "backslash", "encoded", "absolute", "protocol-relative", "data address"]);
const BROWSER_CASES = CASES.filter(([name]) => CORE.has(name));

/** A context whose page records every 5xx answer it receives. */
async function freshPage(): Promise<{ page: Page; context: BrowserContext; errors: string[] }> {
  const context = await b.newContext();
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("response", (r) => {
    if (r.status() >= 500) errors.push(`${r.status()} ${r.url()}`);
  });
  return { page, context, errors };
}

/** Puts `value` in the form's redirectTo field as a crafted page would (adding the field if the page left it out). */
async function forceRedirectField(form: Locator, value: string): Promise<void> {
  await form.evaluate((el, v) => {
    let input = el.querySelector<HTMLInputElement>("input[name=redirectTo]");
    if (!input) {
      input = document.createElement("input");
      input.type = "hidden";
      input.name = "redirectTo";
      el.append(input);
    }
    input.value = v;
  }, value);
}

const signInForm = (page: Page) => page.locator("form:has(input[name=password])");

async function submitSignIn(page: Page, email: string): Promise<void> {
  await page.getByLabel("Email address").fill(email);
  await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

/** Waits until the page has left /login (or the provider) and checks where it landed. */
async function expectLanding(page: Page, errors: string[], lands: RegExp | null, defaults: string[], what: string) {
  const oauth = `http://127.0.0.1:${inject("ports").oauth}`;
  await page.waitForURL(
    (u) => (u.origin === origin() ? !/^\/(login|auth|verify-email)(\/|$)/.test(u.pathname) : !u.href.startsWith(oauth)),
    { timeout: 20_000 },
  );
  await page.waitForLoadState("load");
  const at = new URL(page.url());
  expect(at.origin, what).toBe(origin());
  if (lands) expect(at.pathname + at.search, what).toMatch(lands);
  else expect(defaults, what).toContain(at.pathname);
  expect(errors, what).toEqual([]);
}

async function waitForMail(to: string, subject: string): Promise<void> {
  const api = `http://127.0.0.1:${inject("ports").mail}/_emulator/emails?to=${encodeURIComponent(to)}`;
  for (let i = 0; i < 100; i++) {
    const mails = (await (await fetch(api)).json()) as { subject: string }[];
    if (mails.some((m) => m.subject === subject)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no "${subject}" e-mail to ${to}`);
}

describe("return addresses through every carrier land on our origin", () => {
  it("?redirectTo= for a signed-in visitor: a relative Location on our origin, never a 5xx", async () => {
    const user = await createUser({ password: PASSWORD, credits: 5 });
    for (const [name, value, lands] of CASES) {
      for (const path of ["/login", "/auth"]) {
        const res = await fetch(`${baseUrl()}${path}?redirectTo=${encodeURIComponent(value)}`, {
          headers: { Cookie: `sw_session=${user.sessionToken}` },
          redirect: "manual",
        });
        expect(res.status, `${path} ${name}`).toBe(302);
        const location = res.headers.get("Location") ?? "";
        const to = new URL(location, baseUrl());
        expect(to.origin, `${path} ${name}: ${location}`).toBe(origin());
        if (lands) expect(to.pathname + to.search, `${path} ${name}`).toMatch(lands);
        else expect(to.pathname, `${path} ${name}`).toBe("/dashboard");
      }
    }
    // An absolute address on the configured origin (APP_ORIGIN) is kept, as its path.
    const res = await fetch(`${baseUrl()}/login?redirectTo=${encodeURIComponent(`${origin()}/billing?x=1`)}`, {
      headers: { Cookie: `sw_session=${user.sessionToken}` },
      redirect: "manual",
    });
    expect(res.headers.get("Location")).toBe("/billing?x=1");
  });

  for (const [name, value, lands] of BROWSER_CASES) {
    it(`?redirectTo= on /login, then the sign-in form: ${name}`, async () => {
      const user = await createUser({ password: PASSWORD, credits: 5, session: false });
      const { page, context, errors } = await freshPage();
      await page.goto(`/login?redirectTo=${encodeURIComponent(value)}`);
      await submitSignIn(page, user.email);
      await expectLanding(page, errors, lands, ["/dashboard"], `query ${name}`);
      await context.close();
    });
  }

  for (const [name, value, lands] of BROWSER_CASES) {
    it(`the sign-in form's own field, however it was filled: ${name}`, async () => {
      const user = await createUser({ password: PASSWORD, credits: 5, session: false });
      const { page, context, errors } = await freshPage();
      await page.goto("/login");
      await page.waitForSelector("html[data-hydrated=true]");
      await forceRedirectField(signInForm(page), value);
      await submitSignIn(page, user.email);
      await expectLanding(page, errors, lands, ["/dashboard"], `form ${name}`);
      await context.close();
    });
  }

  it("a .data address: a session that ends during a client-side navigation comes back to the page", async () => {
    const user = await createUser({ password: PASSWORD, credits: 5 });
    const { page, context, errors } = await freshPage();
    await context.addCookies([{ name: "sw_session", value: user.sessionToken!, url: baseUrl() }]);
    await page.goto("/dashboard");
    const billing = page.getByRole("link", { name: "Billing" }).first();
    await billing.waitFor();
    // The session ends; the next client navigation asks for /billing.data and is sent to sign in.
    await context.clearCookies();
    await billing.click();
    await page.waitForURL(/\/login\?/);
    expect(new URL(page.url()).searchParams.get("redirectTo")).toBe("/billing");
    await submitSignIn(page, user.email);
    await expectLanding(page, errors, /^\/billing$/, [], "data address");
    await context.close();
  });

  for (const [name, value, lands] of BROWSER_CASES) {
    it(`the verification e-mail's token (sign-up with a return address): ${name}`, async () => {
      const email = uniqueEmail("redir");
      const { page, context, errors } = await freshPage();
      await page.goto("/auth");
      await page.getByRole("heading", { name: "Create your account" }).waitFor();
      await forceRedirectField(signInForm(page), value);
      await page.getByLabel("Email address").fill(email);
      await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
      await page.getByLabel("I am at least 18 and accept the Terms of Service").check();
      await page.getByRole("button", { name: "Sign up", exact: true }).click();
      await page.getByText("A verification email has been sent. Please verify your email.").waitFor();

      await waitForMail(email, "Verify your email for Stagewise");
      await page.goto("/dev/mailbox");
      const mail = page.getByTestId("mail").filter({ hasText: email }).first();
      await mail.getByRole("link").click();
      await page.waitForURL(/\/verify-email\?token=/);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Verify email" }).click();
      await page.waitForURL(/\/login\?notice=verified/);
      const kept = new URL(page.url()).searchParams.get("redirectTo");
      if (kept !== null) expect(new URL(kept, baseUrl()).origin, `token ${name}`).toBe(origin());

      await submitSignIn(page, email);
      // A new account has its trial credits: the default landing is /dashboard (or /plans without them).
      await expectLanding(page, errors, lands, ["/dashboard", "/plans"], `token ${name}`);
      await context.close();
    });
  }

  for (const [name, value, lands] of BROWSER_CASES) {
    it(`Google sign-in's state, the form field and the state cookie itself: ${name}`, async () => {
      const oauth = new RegExp(`^http://127\\.0\\.0\\.1:${inject("ports").oauth}/authorize\\?`);
      const email = uniqueEmail("redir-g");
      const { page, context, errors } = await freshPage();
      await page.goto("/login");
      const google = page.locator('form[action="/auth/google"]');
      await google.waitFor();
      await forceRedirectField(google, value);
      await page.getByRole("button", { name: "Sign in with Google" }).click();
      await page.waitForURL(oauth);

      // The state cookie carries the return address back: rewrite it as a hostile client would.
      const cookies = await context.cookies(`${baseUrl()}/auth/google/callback`);
      const state = cookies.find((c) => c.name === "sw_oauth");
      expect(state, `oauth ${name}`).toBeDefined();
      const [s, verifier] = state!.value.split(".");
      await context.addCookies([{ ...state!, value: `${s}.${verifier}.${encodeURIComponent(value)}` }]);

      await page.getByLabel("Email", { exact: true }).fill(email);
      await page.getByLabel("Name").fill("Redirect Google");
      await page.getByRole("button", { name: "Continue" }).click();
      // A new Google account lands on /plans by default.
      await expectLanding(page, errors, lands, ["/plans"], `oauth ${name}`);
      await context.close();
    });
  }
});
