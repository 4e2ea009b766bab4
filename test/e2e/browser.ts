import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, inject } from "vitest";

import { CHROMIUM_PATH } from "./chromium.ts";
import { createFixtureUser, type FixtureOptions, type FixtureUser } from "./fixtures.ts";

export { CHROMIUM_PATH };

export function baseUrl(): string {
  return inject("baseUrl");
}

export interface OpenBrowser {
  browser: Browser;
  newContext(opts?: Parameters<Browser["newContext"]>[0]): Promise<BrowserContext>;
  /**
   * A page that records console errors and failed requests; `assertClean()` fails the test on any but those the
   * test caused on purpose (`expected`, e.g. the console line of a connection it reset).
   */
  newPage(context?: BrowserContext): Promise<Page & { assertClean(expected?: RegExp[]): void }>;
  close(): Promise<void>;
}

/**
 * The run's one Chromium: global-setup.ts launches it once as a Playwright browser server and every test file
 * connects to it here (each file runs in its own module graph, so a module-level browser would be one per file).
 * Closing disconnects this file and closes its contexts; the browser stays up until the run's teardown.
 */
/**
 * The test file's browser: connected before its tests, disconnected after them. Used like the OpenBrowser it opens
 * (`b.newPage()`, `signedInContext(b, …)`) from inside a test or a hook.
 */
export function browserForFile(): OpenBrowser {
  let open: OpenBrowser | undefined;
  beforeAll(async () => {
    open = await openBrowser();
  });
  afterAll(async () => {
    await open?.close();
  });
  return new Proxy({} as OpenBrowser, {
    get(_, key) {
      if (!open) throw new Error("the file's browser is used outside its tests");
      const value = Reflect.get(open, key);
      return typeof value === "function" ? value.bind(open) : value;
    },
  });
}

export async function openBrowser(): Promise<OpenBrowser> {
  const browser = await chromium.connect(inject("browserWsEndpoint"));
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
      const page = (await ctx.newPage()) as Page & { assertClean(expected?: RegExp[]): void };
      const problems: string[] = [];
      page.on("console", (msg) => {
        if (msg.type() === "error") problems.push(`console.error: ${msg.text()}`);
      });
      page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
      page.assertClean = (expected = []) => {
        const unexpected = problems.filter((p) => !expected.some((e) => e.test(p)));
        if (unexpected.length) throw new Error(`Browser reported errors:\n${unexpected.join("\n")}`);
      };
      return page;
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => undefined);
      // A connected browser's close() only disconnects; the shared server goes on.
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

/**
 * A phone on a bad connection: the first POST to `url` reaches the server, which answers, and the answer is lost on
 * the way back (the connection is reset); later POSTs pass. Returns the Idempotency-Key of every POST sent to `url`,
 * in order, as the test goes on (docs/decisions/0148-page-job-requests-sent-once.md).
 */
export async function loseFirstAnswer(page: Page, url: string): Promise<(string | null)[]> {
  const keys: (string | null)[] = [];
  await page.route(url, async (route) => {
    if (route.request().method() !== "POST") return route.continue();
    keys.push(route.request().headers()["idempotency-key"] ?? null);
    if (keys.length > 1) return route.continue();
    await route.fetch();
    await route.abort("connectionreset");
  });
  return keys;
}

/**
 * Creates a user through the dev-only fixture endpoint; with a session unless `session: false`. test/e2e/setup.ts
 * removes it after the test that made it (or after the file, when made in beforeAll).
 */
export function createUser(opts: FixtureOptions = {}): Promise<FixtureUser> {
  return createFixtureUser(baseUrl(), opts);
}

/** A browser context already signed in as `user`. */
/** The phone the e2e suite stages from: a 390 px wide viewport, as most phones in portrait. */
export const PHONE = { width: 390, height: 660 };

/** A browser context's options for a phone: its viewport, touch and the mobile layout (`extra` adds, e.g. a DPR). */
export function phoneContext(
  viewport: { width: number; height: number } = PHONE,
  extra: Parameters<Browser["newContext"]>[0] = {},
): Parameters<Browser["newContext"]>[0] {
  return { viewport, isMobile: true, hasTouch: true, ...extra };
}

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

/**
 * From the photo view a thumbnail opens (/photos/:id), opens the photo's editor dialog ("Versions and AI options"):
 * in the side list on a wide screen, under "More" in the bottom bar on a phone.
 */
export async function openPhotoEditor(page: Page): Promise<void> {
  await page.getByTestId("photo-view").waitFor();
  const desktop = page.locator("[data-testid=photo-actions-desktop] [data-action=editor]");
  if (await desktop.isVisible()) return desktop.click();
  const more = page.getByTestId("more-actions");
  await more.locator("summary").click();
  await more.locator("[data-action=editor]").click();
}
