import type { Page } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { baseUrl, browserForFile, createUser, signedInContext, signIn } from "./browser.ts";

const b = browserForFile();

const PASSWORD = "first password 1";
const NEW_PASSWORD = "second password 2";
const uniqueEmail = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}@example.test`;
const url = (path: string) => `${baseUrl()}${path}`;

/** Waits until the mail emulator holds `count` messages to `to` with this subject (they go out after the answer). */
async function waitForMail(to: string, subject: string, count = 1): Promise<void> {
  const api = `http://127.0.0.1:${inject("ports").mail}/_emulator/emails?to=${encodeURIComponent(to)}`;
  for (let i = 0; i < 100; i++) {
    const mails = (await (await fetch(api)).json()) as { subject: string }[];
    if (mails.filter((m) => m.subject === subject).length >= count) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no "${subject}" e-mail to ${to}`);
}

/** Opens the newest matching e-mail's link from the dev mailbox page. */
async function openLinkFromMailbox(page: Page, to: string, subject: string): Promise<void> {
  await waitForMail(to, subject);
  await page.goto("/dev/mailbox");
  const mail = page.getByTestId("mail").filter({ hasText: to }).filter({ hasText: subject }).first();
  await mail.getByRole("link").click();
}

async function hasSessionCookie(page: Page): Promise<boolean> {
  return (await page.context().cookies()).some((c) => c.name === "sw_session");
}

describe("e-mail accounts in Chromium", () => {
  it("signs up, is refused until verified, verifies from /dev/mailbox, signs in and out, and resets the password", async () => {
    const email = uniqueEmail("robin");
    const page = await b.newPage();

    // Sign up.
    await page.goto("/auth");
    await page.getByRole("heading", { name: "Create your account" }).waitFor();
    await page.getByLabel("Name").fill("Robin Agent");
    await page.getByLabel("Email address").fill(email);
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByLabel("I am at least 18 and accept the Terms of Service").check();
    await page.getByRole("button", { name: "Sign up", exact: true }).click();
    await page.getByText("A verification email has been sent. Please verify your email.").waitFor();
    expect(await hasSessionCookie(page)).toBe(false);

    // Refused until verified, with the exact message and no session.
    await signIn(page, email, PASSWORD);
    await page.getByText("Please verify your email before logging in.").waitFor();
    expect(await hasSessionCookie(page)).toBe(false);
    await page.getByRole("button", { name: "Resend verification email" }).click();
    await page.getByText("A verification email has been sent. Please verify your email.").waitFor();
    await waitForMail(email, "Verify your email for Stagewise", 2);

    // Verify through the link in the dev mailbox.
    await openLinkFromMailbox(page, email, "Verify your email for Stagewise");
    await page.waitForURL(/\/verify-email\?token=/);
    // A wrong password verifies nothing and keeps the form (ADR 0351); the one chosen at sign-up verifies.
    await page.getByLabel("Password").fill("not the password I chose");
    await page.getByRole("button", { name: "Verify email" }).click();
    await page.getByRole("alert").getByText("That is not the password this account was created with.").waitFor();
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Verify email" }).click();
    await page.waitForURL(/\/login\?notice=verified/);
    await page.getByText("Your email is verified. Please sign in.").waitFor();

    // Sign in: the free trial credits make it land on the dashboard (docs/product.md, "Accounts").
    await signIn(page, email, PASSWORD);
    await page.waitForURL(url("/dashboard"));
    expect(await hasSessionCookie(page)).toBe(true);

    // Sign out.
    await page.goto("/");
    await page.getByRole("button", { name: "Logout" }).click();
    await page.waitForURL(url("/"));
    await page.getByRole("link", { name: "Login", exact: true }).waitFor();
    expect(await hasSessionCookie(page)).toBe(false);

    // A session elsewhere that the reset must end.
    const other = await b.newPage();
    await signIn(other, email, PASSWORD);
    await other.waitForURL(url("/dashboard"));

    // Forgot Password? needs the e-mail typed first.
    await page.goto("/login");
    await page.getByRole("button", { name: "Forgot Password?" }).click();
    await page.getByRole("alert").getByText("Please Enter email address above.").waitFor();
    await page.getByLabel("Email address").fill(email);
    await page.getByRole("button", { name: "Forgot Password?" }).click();
    await page.getByText("Password reset email sent!").waitFor();

    await openLinkFromMailbox(page, email, "Reset your Stagewise password");
    await page.waitForURL(/\/reset-password\?token=/);
    await page.getByLabel("New password").fill(NEW_PASSWORD);
    await page.getByRole("button", { name: "Set new password" }).click();
    await page.waitForURL(/\/login\?notice=password-changed/);

    // The old password fails, the new one works.
    await signIn(page, email, PASSWORD);
    await page.getByText("Invalid email or password.").waitFor();
    await signIn(page, email, NEW_PASSWORD);
    await page.waitForURL(url("/dashboard"));

    // The other browser's session is dead: an unknown page sends it to /login.
    await other.goto("/somewhere-unknown");
    await other.waitForURL(/\/login\?redirectTo=%2Fsomewhere-unknown/);
    await other.getByRole("link", { name: "Login", exact: true }).waitFor();
  });

  it("lands on /plans without plan or credits, and a remembered checkout wins", async () => {
    const broke = await createUser({ password: PASSWORD, session: false });
    const page = await b.newPage();
    await signIn(page, broke.email, PASSWORD);
    await page.waitForURL(url("/plans"));

    const other = await b.newPage();
    await other.goto(`/login?redirectTo=${encodeURIComponent("/checkout?planId=popular")}`);
    await other.getByLabel("Email address").fill(broke.email);
    await other.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await other.getByRole("button", { name: "Sign in", exact: true }).click();
    await other.waitForURL(url("/checkout?planId=popular"));
  });

  it("forces sign-up when a plan arrives from /plans", async () => {
    const page = await b.newPage();
    await page.goto("/auth?plan=popular&mode=signin");
    await page.getByRole("heading", { name: "Create your account" }).waitFor();
    expect(await page.getByTestId("chosen-plan").textContent()).toContain("Popular plan");
    expect(await page.locator("input[name=redirectTo]").first().inputValue()).toBe("/checkout?planId=popular");
    await page.goto("/auth?mode=signin");
    await page.getByRole("heading", { name: "Sign in to your account" }).waitFor();
    page.assertClean();
  });

  it("sends a sign-up with a used address to /login with the spec's message", async () => {
    const taken = await createUser({ session: false });
    const page = await b.newPage();
    await page.goto("/auth");
    await page.getByLabel("Email address").fill(taken.email);
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByLabel("I am at least 18 and accept the Terms of Service").check();
    await page.getByRole("button", { name: "Sign up", exact: true }).click();
    await page.waitForURL(/\/login\?notice=email-in-use/);
    await page.getByText("Email address is already in use. Please log in.").waitFor();
    await page.getByRole("heading", { name: "Welcome back" }).waitFor();
    page.assertClean();
  });

  it("sends a signed-in user away from the sign-in pages", async () => {
    const user = await createUser({ credits: 5 });
    const page = await b.newPage(await signedInContext(b, user));
    await page.goto("/login");
    await page.waitForURL(url("/dashboard"));
  });

  it("signs in with JavaScript turned off", async () => {
    const user = await createUser({ password: PASSWORD, credits: 2, session: false });
    const page = await b.newPage(await b.newContext({ javaScriptEnabled: false }));
    await page.goto("/login");
    await page.getByLabel("Email address").fill(user.email);
    await page.getByLabel("Password", { exact: true }).fill("wrong password!");
    const [wrong] = await Promise.all([
      page.waitForResponse((r) => r.url() === url("/login") && r.request().method() === "POST"),
      page.getByRole("button", { name: "Sign in", exact: true }).click(),
    ]);
    expect(wrong.status()).toBe(401);
    await page.getByText("Invalid email or password.").waitFor();
    expect(await page.getByLabel("Email address").inputValue()).toBe(user.email);
    expect(await page.getByLabel("Password", { exact: true }).inputValue()).toBe("");
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL(url("/dashboard"));
  });

  it("answers 429 with Retry-After once an address has had 10 sign-in attempts", async () => {
    const email = uniqueEmail("guess");
    const attempt = () =>
      fetch(url("/login"), {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: baseUrl() },
        body: new URLSearchParams({ intent: "signin", email, password: "guess-guess" }),
      });
    const statuses = [];
    for (let i = 0; i < 10; i++) statuses.push((await attempt()).status);
    expect(statuses).toEqual(Array(10).fill(401));
    const limited = await attempt();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(await limited.text()).toContain("Too many attempts. Please wait a few minutes and try again.");
  });

  it("refuses a form whose honeypot is filled", async () => {
    const res = await fetch(url("/login"), {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: baseUrl() },
      body: new URLSearchParams({ intent: "signin", email: "bot@example.test", password: "x", website: "spam" }),
      redirect: "manual",
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("The form was not submitted properly.");
  });
});

describe("Google sign-in in Chromium", () => {
  async function signInWithGoogle(page: Page, email: string): Promise<void> {
    await page.goto("/login");
    await page.getByRole("button", { name: "Sign in with Google" }).click();
    await page.waitForURL(new RegExp(`^http://127\\.0\\.0\\.1:${inject("ports").oauth}/authorize\\?`));
    await page.getByLabel("Email", { exact: true }).fill(email);
    await page.getByLabel("Name").fill("Gale Google");
    await page.getByRole("button", { name: "Continue" }).click();
  }

  it("creates a new user against the local OAuth server, lands on /plans, and on /dashboard the next time", async () => {
    const email = uniqueEmail("gale");
    const page = await b.newPage();
    await signInWithGoogle(page, email);
    await page.waitForURL(url("/plans"));
    expect(await hasSessionCookie(page)).toBe(true);
    await page.goto("/");
    await page.getByRole("button", { name: "Logout" }).click();
    await page.getByRole("link", { name: "Login", exact: true }).waitFor();
    expect(await hasSessionCookie(page)).toBe(false);

    await signInWithGoogle(page, email);
    await page.waitForURL(url("/dashboard"));
  });

  it("refuses a callback whose state does not match", async () => {
    const page = await b.newPage();
    await page.goto("/auth/google/callback?code=abc&state=forged");
    await page.waitForURL(/\/login\?notice=google-expired/);
    await page.getByText("Failed to log in with Google").waitFor();
    expect(await hasSessionCookie(page)).toBe(false);
  });
});

describe("admin route", () => {
  it("answers 404 to a verified non-admin and shows the page to an admin", async () => {
    const user = await createUser();
    const userRes = await fetch(url("/admin"), { headers: { Cookie: `sw_session=${user.sessionToken}` } });
    expect(userRes.status).toBe(404);
    const visitor = await fetch(url("/admin"), { redirect: "manual" });
    expect(visitor.status).toBe(404);

    const admin = await createUser({ role: "admin" });
    const page = await b.newPage(await signedInContext(b, admin));
    const res = await page.goto("/admin");
    expect(res?.status()).toBe(200);
    await page.getByRole("heading", { name: "Admin", level: 1 }).waitFor();
    page.assertClean();
  });
});
