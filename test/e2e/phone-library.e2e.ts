import { describe, expect, it } from "vitest";
import {
  baseUrl,
  browserForFile,
  createUser,
  type FixtureUser,
  PHONE,
  phoneContext,
  signedInContext,
} from "./browser.ts";
import { seedPhotos } from "./support/library-bytes.ts";

// The library on a phone (docs/decisions/0133-phone-first-library.md): at 390 x 660,
// the size a phone browser shows with its bars, the upload action, the balance
// and the top half of the first photo are on the first screen; the actions sit
// in the bottom half, where a thumb reaches; the desktop keeps its layout.

const b = browserForFile();

async function libraryWithPhotos(credits: number): Promise<FixtureUser> {
  const user = await createUser({ credits });
  await seedPhotos({ baseUrl: baseUrl(), sessionToken: user.sessionToken! }, 3, "Kitchen");
  return user;
}

describe("the library on a phone", () => {
  it("shows the upload action, the balance and the first photo's top half without scrolling, actions within thumb reach", async () => {
    const user = await libraryWithPhotos(5);
    const ctx = await signedInContext(b, user, phoneContext());
    const page = await b.newPage(ctx);
    await page.goto("/dashboard");
    await page.waitForSelector("html[data-hydrated=true]");
    expect(await page.evaluate(() => window.scrollY)).toBe(0);
    // Nothing wider than the phone: a page that overflows is zoomed out and everything moves.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await page.screenshot({ path: "test-results/phone-library.png" });

    const inFirstScreen = async (testId: string, part = 1) => {
      const box = await page.getByTestId(testId).first().boundingBox();
      expect(box, testId).not.toBeNull();
      expect(box!.y, testId).toBeGreaterThanOrEqual(0);
      expect(box!.y + box!.height * part, testId).toBeLessThanOrEqual(PHONE.height);
      return box!;
    };
    const upload = await inFirstScreen("upload-action");
    await expect.poll(() => page.getByTestId("upload-action").isVisible()).toBe(true);
    const balance = await inFirstScreen("topbar-credits");
    expect(await page.getByTestId("topbar-credits").textContent()).toBe("5 credits");
    expect(balance.y).toBeLessThan(64);
    const photo = await inFirstScreen("photo-card", 0.5);
    expect(photo.height).toBeGreaterThan(100);
    // Thumb reach: the actions are in the lower half of the screen.
    expect(upload.y).toBeGreaterThan(PHONE.height / 2);
    const designer = await page.getByRole("button", { name: "AI Designer" }).boundingBox();
    expect(designer!.y).toBeGreaterThan(PHONE.height / 2);
    // The cards about the account are out of the first screen.
    expect(await page.getByTestId("plan-status-card").isVisible()).toBe(false);

    // The folder drawer opens from the bottom bar and switches the view.
    await page.getByTestId("view-drawer").locator("summary").tap();
    const trash = page.getByTestId("view-drawer").getByRole("link", { name: "Trash", exact: true });
    const trashBox = await trash.boundingBox();
    expect(trashBox!.y + trashBox!.height).toBeLessThanOrEqual(PHONE.height);
    await trash.tap();
    await page.waitForURL(/view=trash|\/dashboard\?.*trash/);
    await page.getByRole("heading", { name: "Trash", level: 1 }).waitFor();
    page.assertClean();
  });

  it("loads the first row's thumbnails at once and leaves the rest to lazy loading", async () => {
    const user = await createUser({ credits: 5 });
    await seedPhotos({ baseUrl: baseUrl(), sessionToken: user.sessionToken! }, 7, "Bedroom");
    // As the server sends it, before any script: the preload scanner sees the eager ones in the HTML.
    const html = await (
      await fetch(`${baseUrl()}/dashboard`, { headers: { Cookie: `sw_session=${user.sessionToken}` } })
    ).text();
    const thumbs = [...html.matchAll(/<img [^>]*src="\/api\/photos\/[^"]+\/thumb[^>]*>/g)].map((m) => m[0]);
    expect(thumbs).toHaveLength(7);
    expect(thumbs.slice(0, 4).some((t) => t.includes('loading="lazy"'))).toBe(false);
    expect(thumbs.slice(4).every((t) => t.includes('loading="lazy"'))).toBe(true);
    // On the phone the first row is on the first screen and loaded without scrolling.
    const ctx = await signedInContext(b, user, phoneContext());
    const page = await b.newPage(ctx);
    await page.goto("/dashboard");
    await page.waitForSelector("html[data-hydrated=true]");
    const first = page.getByTestId("photo-card").first().locator("img");
    await expect.poll(() => first.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    page.assertClean();
  });

  it("keeps the desktop layout: plan card and folders on the left, the full upload button in the header", async () => {
    const user = await libraryWithPhotos(5);
    const ctx = await signedInContext(b, user, { viewport: { width: 1280, height: 900 } });
    const page = await b.newPage(ctx);
    await page.goto("/dashboard");
    await page.waitForSelector("html[data-hydrated=true]");
    expect(await page.getByTestId("topbar-credits").isVisible()).toBe(false);
    expect(await page.getByTestId("view-drawer").isVisible()).toBe(false);
    const card = await page.getByTestId("plan-status-card").boundingBox();
    const folders = await page.getByTestId("folder-list").boundingBox();
    const title = await page.getByRole("heading", { name: "All Photos", level: 1 }).boundingBox();
    const upload = await page.getByRole("link", { name: "Upload Photo (5 credits left)" }).boundingBox();
    expect(card!.x).toBeLessThan(title!.x);
    expect(folders!.x).toBeLessThan(title!.x);
    // The header row: title and upload button on one line at the top of the page.
    expect(Math.abs(upload!.y + upload!.height / 2 - (title!.y + title!.height / 2))).toBeLessThan(12);
    expect(upload!.y).toBeLessThan(200);
    page.assertClean();
  });
});
