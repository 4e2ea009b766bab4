import type { CDPSession, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { makeJpeg } from "../fixtures/images.ts";
import { browserForFile, createUser, type FixtureUser, type OpenBrowser, signedInContext } from "./browser.ts";
import { phoneSizedJpeg } from "./support/library-bytes.ts";

// Uploads that survive the tab (docs/decisions/0130-uploads-survive-the-tab.md):
// the prepared photo and its upload session are kept in IndexedDB, so a reload
// resumes from the last chunk the server confirmed; offline, the upload says
// it waits for the network and carries on by itself.

const b = browserForFile();

type TestPage = Awaited<ReturnType<OpenBrowser["newPage"]>>;

async function throttled(user: FixtureUser, uploadKBps: number): Promise<{ page: TestPage; cdp: CDPSession }> {
  const ctx = await signedInContext(b, user);
  const page = await b.newPage(ctx);
  await page.goto("/dashboard?upload=1");
  await page.waitForSelector("html[data-hydrated=true]");
  const cdp = await ctx.newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", {
    offline: false,
    latency: 100,
    downloadThroughput: 512 * 1024,
    uploadThroughput: uploadKBps * 1024,
  });
  return { page, cdp };
}

/** Counts every chunk request the browser sent, by index, across reloads. */
function countChunks(page: Page) {
  const sent = new Map<number, number>();
  const declared: string[] = [];
  page.on("request", (r) => {
    const path = new URL(r.url()).pathname;
    const m = /^\/api\/uploads\/[a-z0-9]+\/chunks\/(\d+)$/.exec(path);
    if (m && r.method() === "PUT") sent.set(Number(m[1]), (sent.get(Number(m[1])) ?? 0) + 1);
    if (path === "/api/uploads" && r.method() === "POST") declared.push(path);
  });
  return { sent, declared };
}

async function percentShown(page: Page): Promise<number> {
  return Number(await page.getByRole("progressbar").first().getAttribute("aria-valuenow"));
}

describe("uploads that survive the tab", () => {
  it("resumes a 10 MB photo's upload after a reload at 40%, each chunk sent once (at most one again)", async () => {
    const user = await createUser({ credits: 2 });
    const { page } = await throttled(user, 96);
    const counts = countChunks(page);
    const file = phoneSizedJpeg();
    expect(file.byteLength).toBeGreaterThan(9 * 1024 * 1024);
    await page
      .getByTestId("upload-input")
      .setInputFiles({ name: "Phone photo.jpg", mimeType: "image/jpeg", buffer: Buffer.from(file) });
    await page.waitForFunction(
      () => Number(document.querySelector("[role=progressbar]")?.getAttribute("aria-valuenow")) >= 40,
      undefined,
      { timeout: 60_000, polling: 50 },
    );
    const before = await percentShown(page);
    expect(before).toBeLessThan(60);

    await page.reload();
    await page.waitForSelector("html[data-hydrated=true]");
    // The kept upload shows up by itself and carries on from where the server is.
    const pending = page.getByTestId("pending-upload");
    await pending.waitFor({ timeout: 15_000 });
    await expect.poll(() => percentShown(page), { timeout: 15_000 }).toBeGreaterThanOrEqual(before - 5);
    await page.getByTestId("photo-name").filter({ hasText: "Phone photo" }).waitFor({ timeout: 90_000 });
    await pending.waitFor({ state: "detached" });

    const chunkCount = Math.max(...counts.sent.keys()) + 1;
    expect(counts.declared).toHaveLength(1);
    expect(counts.sent.size).toBe(chunkCount);
    const repeated = [...counts.sent.values()].filter((n) => n > 1);
    expect(repeated.length).toBeLessThanOrEqual(1);
    expect(Math.max(...counts.sent.values())).toBeLessThanOrEqual(2);
    // The browser forgets the upload once the server confirmed it: a second reload resumes nothing.
    await page.reload();
    await page.waitForSelector("html[data-hydrated=true]");
    await page.waitForTimeout(500);
    expect(await page.getByTestId("pending-upload").count()).toBe(0);
    expect(await page.getByTestId("photo-name").filter({ hasText: "Phone photo" }).count()).toBe(1);
    page.assertClean();
  }, 120_000);

  it("says it is waiting for the network while offline, then finishes by itself", async () => {
    const user = await createUser({ credits: 1 });
    const { page, cdp } = await throttled(user, 64);
    const counts = countChunks(page);
    await page.getByTestId("upload-input").setInputFiles({
      name: "Cellar.jpg",
      mimeType: "image/jpeg",
      buffer: Buffer.from(makeJpeg(2400, 1600, 92, 40, 21)),
    });
    await page.waitForFunction(
      () => Number(document.querySelector("[role=progressbar]")?.getAttribute("aria-valuenow")) >= 20,
      undefined,
      { timeout: 60_000, polling: 50 },
    );
    await cdp.send("Network.emulateNetworkConditions", {
      offline: true,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1,
    });
    const status = page.getByTestId("upload-status");
    await expect.poll(() => status.getAttribute("data-offline"), { timeout: 20_000 }).toBe("true");
    expect(await status.textContent()).toContain("Paused - waiting for network");
    expect(await page.locator("[data-testid=upload-panel]").getAttribute("data-state")).toBe("running");

    await cdp.send("Network.emulateNetworkConditions", {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1,
    });
    await page.waitForSelector("[data-testid=upload-panel][data-state=success]", { timeout: 30_000 });
    await page.getByTestId("photo-name").filter({ hasText: "Cellar" }).waitFor();
    expect(Math.max(...counts.sent.values())).toBeLessThanOrEqual(2);
  });
});
