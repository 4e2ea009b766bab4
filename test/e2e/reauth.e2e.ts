import type { Page } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { baseUrl, browserForFile } from "./browser.ts";

// Deleting an account that signs in only with Google, confirmed with Google
// instead of a password (docs/decisions/0112-account-deletion-and-export.md),
// in Chromium against the production build and the OAuth emulator.

const b = browserForFile();

const uniqueEmail = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}@example.test`;
const emulator = () => new RegExp(`^http://127\\.0\\.0\\.1:${inject("ports").oauth}/authorize\\?`);

async function hasSessionCookie(page: Page): Promise<boolean> {
  return (await page.context().cookies()).some((c) => c.name === "sw_session");
}

/** On the emulator's consent page: who Google says is there. */
async function answerAs(page: Page, email: string): Promise<void> {
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByLabel("Name").fill("Gale Google");
  await page.getByRole("button", { name: "Continue" }).click();
}

async function leaveForGoogleFromSettings(page: Page): Promise<void> {
  await page.goto("/settings");
  await page.waitForSelector("html[data-hydrated=true]");
  await page.getByRole("button", { name: "Confirm with Google" }).click();
  await page.waitForURL(emulator());
  // The provider was asked to authenticate the person again.
  expect(new URL(page.url()).searchParams.get("max_age")).toBe("0");
  await page.getByTestId("reauth-notice").waitFor();
}

describe("deleting a Google-only account in Chromium", () => {
  it("is refused for another Google account, confirmed by its own, deleted, signed out, and the address signs up again", async () => {
    const email = uniqueEmail("gdel");
    const page = await b.newPage();

    // A new account through Google: no password.
    await page.goto("/login");
    await page.getByRole("button", { name: "Sign in with Google" }).click();
    await page.waitForURL(emulator());
    await answerAs(page, email);
    await page.waitForURL(`${baseUrl()}/plans`);

    await page.goto("/settings");
    const section = page.getByRole("region", { name: "Your data" });
    await section.getByRole("button", { name: "Confirm with Google" }).waitFor();
    expect(await section.getByLabel("Your password").count()).toBe(0);

    // Another Google account cannot confirm this deletion.
    await leaveForGoogleFromSettings(page);
    const refused = page.waitForResponse((r) => r.url().startsWith(`${baseUrl()}/auth/google/callback`));
    await answerAs(page, uniqueEmail("intruder"));
    expect((await refused).status()).toBe(403);
    await page.getByTestId("reauth-error").getByText("That Google account is not the one").waitFor();
    await page.goto("/settings");
    await page.getByRole("button", { name: "Confirm with Google" }).waitFor();
    expect(await page.getByText("Google confirmed it is you").count()).toBe(0);

    // Its own Google account does: the final button, with no password field.
    await leaveForGoogleFromSettings(page);
    await answerAs(page, email);
    await page.waitForURL(`${baseUrl()}/settings?confirm=delete`);
    await page.waitForSelector("html[data-hydrated=true]");
    const confirmed = page.getByTestId("delete-account-google-form");
    await confirmed.getByText("Google confirmed it is you").waitFor();
    expect(await page.locator('input[name="password"]').count()).toBe(0);
    await confirmed.getByRole("button", { name: "Delete my account" }).click();
    await page.waitForURL(/\/\?deleted=1$/);
    expect(await hasSessionCookie(page)).toBe(false);
    const settings = await page.goto("/settings");
    expect(new URL(settings!.url()).pathname).toBe("/login");

    // The address is free again: it signs up as a new account.
    await page.goto("/auth");
    await page.getByRole("heading", { name: "Create your account" }).waitFor();
    await page.getByLabel("Name").fill("Gale Again");
    await page.getByLabel("Email address").fill(email);
    await page.getByLabel("Password", { exact: true }).fill("a new password 1");
    await page.getByLabel("I am at least 18 and accept the Terms of Service").check();
    await page.getByRole("button", { name: "Sign up", exact: true }).click();
    await page.getByText("A verification email has been sent. Please verify your email.").waitFor();
    // No assertClean(): the refused confirmation is a 403 document by design, and the emulator has no favicon.
  });
});
