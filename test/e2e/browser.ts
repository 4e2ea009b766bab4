import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { inject } from "vitest";

import { CHROMIUM_ARGS, CHROMIUM_PATH } from "./chromium.ts";
import { createFixtureUser, type FixtureOptions, type FixtureUser } from "./fixtures.ts";

export { CHROMIUM_PATH };

export function baseUrl(): string {
  return inject("baseUrl");
}

export interface OpenBrowser {
  browser: Browser;
  newContext(opts?: Parameters<Browser["newContext"]>[0]): Promise<BrowserContext>;
  /** A page that records console errors and failed requests; `assertClean()` fails the test on any. */
  newPage(context?: BrowserContext): Promise<Page & { assertClean(): void }>;
  close(): Promise<void>;
}

export async function openBrowser(): Promise<OpenBrowser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: CHROMIUM_ARGS,
  });
  const contexts: BrowserContext[] = [];
  const newContext: OpenBrowser["newContext"] = async (opts) => {
    const ctx = await browser.newContext({ baseURL: baseUrl(), ...opts });
    contexts.push(ctx);
    return ctx;
  };
  return {
    browser,
    newContext,
    async newPage(context) {
      const ctx = context ?? (await newContext());
      const page = (await ctx.newPage()) as Page & { assertClean(): void };
      const problems: string[] = [];
      page.on("console", (msg) => {
        if (msg.type() === "error") problems.push(`console.error: ${msg.text()}`);
      });
      page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
      page.assertClean = () => {
        if (problems.length) throw new Error(`Browser reported errors:\n${problems.join("\n")}`);
      };
      return page;
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => undefined);
      // playwright launches with a fresh temporary profile and removes it on close.
      await browser.close();
    },
  };
}

/** Signs in through the real /login form. */
export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto("/login");
  await page.getByLabel("Email address").fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

export type { FixtureUser };

/** Creates a user through the dev-only fixture endpoint; with a session unless `session: false`. */
export function createUser(opts: FixtureOptions = {}): Promise<FixtureUser> {
  return createFixtureUser(baseUrl(), opts);
}

/** A browser context already signed in as `user`. */
export async function signedInContext(
  b: OpenBrowser,
  user: FixtureUser,
  opts: Parameters<Browser["newContext"]>[0] = {},
) {
  if (!user.sessionToken) throw new Error("fixture user has no session");
  const ctx = await b.newContext(opts);
  await ctx.addCookies([{ name: "sw_session", value: user.sessionToken, url: baseUrl() }]);
  return ctx;
}
