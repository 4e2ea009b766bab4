import { decode } from "fast-png";
import { afterAll, describe, expect, it } from "vitest";
import { baseUrl, browserForFile, createUser, openPhotoEditor, signedInContext } from "./browser.ts";
import { setProviderMode } from "./provider-emulator.ts";
import { seedPhotos } from "./support/library-bytes.ts";

// The structure check's change map and the agent's recourse in a browser (issue 43 items 5 and 7,
// docs/decisions/0260-change-map-with-the-version.md, 0261-this-result-changed-the-room.md, 0263), on a real room photo,
// against the production build and the provider emulator, whose "drift" mode moves a block of the upper middle (a
// window) a quarter of the width to the left and lowers the ceiling line: production's limits mark that result.

const CHECK_WALLS = "Check the walls and windows";
const RETURNED = "Your credit is back";
const NOT_FOR_MLS =
  "You told us this result changed the room and got its credit back, so it cannot go to an MLS. Stage the photo again.";

const b = browserForFile();
afterAll(async () => {
  await setProviderMode("ok");
});

/** The share of marked pixels in a part of the map (fractions of its width and height). */
function markedIn(map: ReturnType<typeof decode>, x0: number, x1: number, y0: number, y1: number): number {
  let marked = 0;
  let all = 0;
  for (let y = Math.floor(y0 * map.height); y < Math.ceil(y1 * map.height); y++) {
    for (let x = Math.floor(x0 * map.width); x < Math.ceil(x1 * map.width); x++) {
      all++;
      if (map.data[y * map.width + x]! > 0) marked++;
    }
  }
  return marked / all;
}

describe("what changed, and when the check was wrong", () => {
  it("a drifted result shows its change map over the before/after where the window moved, to its owner only; its credit comes back once", async () => {
    const user = await createUser({ credits: 2 });
    const stranger = await createUser({ credits: 1 });
    const [photoId] = await seedPhotos({ baseUrl: baseUrl(), sessionToken: user.sessionToken! }, 1, "Living room");
    const ctx = await signedInContext(b, user);
    const page = await b.newPage(ctx);
    await page.goto(`${baseUrl()}/photos/${photoId}`);
    await page.waitForSelector("html[data-hydrated=true]");
    const credits = page.getByTestId("credits").first();
    await expect.poll(() => credits.textContent()).toBe("2");
    await openPhotoEditor(page);
    const dialog = page.getByTestId("quick-dialog");

    await setProviderMode("drift");
    await dialog.getByLabel("Add furniture").check();
    await dialog.getByLabel("Room type").selectOption({ label: "Living Room" });
    await dialog.getByLabel("Furniture style").selectOption({ label: "Modern" });
    await dialog.getByRole("button", { name: "Process Photo", exact: true }).click();
    const flagged = dialog.getByTestId("job-flagged");
    await flagged.waitFor({ timeout: 90_000 });
    expect(await flagged.textContent()).toContain(CHECK_WALLS);
    await expect.poll(() => credits.textContent()).toBe("1");
    await setProviderMode("ok");
    await dialog.getByRole("button", { name: "Close", exact: true }).click();

    // "Show what changed": the map over the before/after.
    const actions = page.getByTestId("photo-actions-desktop");
    await actions.locator("[data-action=show-changes]").click();
    const overlay = page.getByTestId("changes-overlay");
    await overlay.waitFor({ timeout: 30_000 });
    const src = (await overlay.getAttribute("data-src"))!;
    expect(src).toMatch(/^\/api\/photos\/[^/]+\/versions\/[^/]+\/changes$/);
    const box = await overlay.boundingBox();
    expect(box!.width).toBeGreaterThan(100);
    expect(page.url()).toContain("changes=1");

    // Drawn by the server: the page's HTML, before any script, already has the overlay.
    const html = await fetch(page.url(), { headers: { Cookie: `sw_session=${user.sessionToken}` } });
    expect(await html.text()).toContain('data-testid="changes-overlay"');

    // The map is marked where the window was and where it went (drift moves x 55-80 % to 25-50 %, y 10-45 %), and
    // not everywhere.
    const mine = await fetch(`${baseUrl()}${src}`, { headers: { Cookie: `sw_session=${user.sessionToken}` } });
    expect([mine.status, mine.headers.get("Content-Type")]).toEqual([200, "image/png"]);
    const map = decode(new Uint8Array(await mine.arrayBuffer()));
    expect(markedIn(map, 0.25, 0.8, 0.05, 0.5)).toBeGreaterThan(0.01);
    expect(markedIn(map, 0, 1, 0, 1)).toBeLessThan(0.6);
    // Another user's request: the 404 of a version that does not exist.
    const theirs = await fetch(`${baseUrl()}${src}`, { headers: { Cookie: `sw_session=${stranger.sessionToken}` } });
    expect(theirs.status).toBe(404);
    expect(((await theirs.json()) as { error: string }).error).toBeTruthy();

    // Confirmed and published first (a flagged result asks for the confirmation), so its page exists before the return.
    const version = src.replace(/\/changes$/, "");
    const owner = { Cookie: `sw_session=${user.sessionToken}` };
    const post = { ...owner, "Content-Type": "application/json", Origin: baseUrl() };
    const confirmed = await fetch(`${baseUrl()}${version}/confirm-structure`, {
      method: "POST",
      headers: post,
      body: "{}",
    });
    expect(confirmed.status).toBe(200);
    await confirmed.arrayBuffer();
    const link = await fetch(`${baseUrl()}${version}/link`, { method: "POST", headers: post, body: "{}" });
    expect(link.status).toBe(200);
    const pagePath = new URL(((await link.json()) as { url: string }).url).pathname;

    // "This result changed the room", with the pair kept: the credit comes back once.
    await actions.getByTestId("keep-pair").check();
    await actions.getByTestId("changed-room").click();
    await expect.poll(() => actions.textContent(), { timeout: 30_000 }).toContain(RETURNED);
    await expect.poll(() => credits.textContent(), { timeout: 30_000 }).toBe("2");
    await actions.getByTestId("returned").waitFor({ timeout: 30_000 });
    expect(await actions.getByTestId("changed-room").count()).toBe(0);
    const again = await fetch(`${baseUrl()}${src.replace(/\/changes$/, "/changed-room")}`, {
      method: "POST",
      headers: { Cookie: `sw_session=${user.sessionToken}`, "Content-Type": "application/json", Origin: baseUrl() },
      body: JSON.stringify({ keepPair: true }),
    });
    expect(again.status).toBe(409);
    await page.reload();
    await page.waitForSelector("html[data-hydrated=true]");
    await expect.poll(() => credits.textContent()).toBe("2");

    // Returned, it no longer goes to an MLS (ADR 0263): the photo view says so instead of offering Download for MLS
    // or the confirmation this flagged result asked for; its own copy stays downloadable; the endpoints answer 409.
    expect(await actions.getByTestId("returned-not-for-mls").textContent()).toBe(NOT_FOR_MLS);
    expect(await actions.locator("[data-action=download-mls]").count()).toBe(0);
    expect(await actions.locator("[data-action=confirm-structure]").count()).toBe(0);
    expect(await actions.locator("[data-action=original-page]").count()).toBe(0);
    expect(await actions.locator("[data-action=download]").count()).toBe(1);
    const mls = await fetch(`${baseUrl()}${version}/labelled`, { headers: owner });
    expect([mls.status, ((await mls.json()) as { error: string }).error]).toEqual([409, NOT_FOR_MLS]);
    const confirm = await fetch(`${baseUrl()}${version}/confirm-structure`, {
      method: "POST",
      headers: post,
      body: "{}",
    });
    expect([confirm.status, ((await confirm.json()) as { error: string }).error]).toEqual([409, NOT_FOR_MLS]);
    const own = await fetch(`${baseUrl()}${version}/download`, { headers: owner });
    expect(own.status).toBe(200);
    await own.arrayBuffer();
    // Its page stays up for the original, says the result was withdrawn, and no longer serves it.
    const publicPage = await fetch(`${baseUrl()}${pagePath}`);
    expect(publicPage.status).toBe(200);
    const pageHtml = await publicPage.text();
    expect(pageHtml).toContain('data-testid="altered-withdrawn"');
    expect(pageHtml).toContain("withdrew the altered photo it was made for");
    expect(pageHtml).toContain(`/api${pagePath}/original`);
    expect(pageHtml).not.toContain(`/api${pagePath}/staged`);
    expect((await fetch(`${baseUrl()}/api${pagePath}/staged`)).status).toBe(410);
    page.assertClean();
    await ctx.close();
  }, 240_000);
});
