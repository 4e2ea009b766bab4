import { describe, expect, it } from "vitest";
import { seriousAxeViolations } from "./axe.ts";
import { baseUrl, browserForFile, createUser, type FixtureUser, openPhotoEditor, signedInContext } from "./browser.ts";
import { providerRequests, setProviderMode } from "./provider-emulator.ts";
import { seedPhotos } from "./support/library-bytes.ts";

// One look for a whole listing (issue 33, part 4; docs/decisions/0190-one-look-for-a-listing.md) in Chromium
// against the production build and the provider emulator: a staged version made the folder's look from the photo's
// dialog, a batch of the folder started from its page sends that version as the style reference of every photo
// (read from the emulator's request log), and once the look is cleared on the dashboard the next batch, started
// from the form without JavaScript, sends none.

const b = browserForFile();

function session(user: FixtureUser) {
  return { Cookie: `sw_session=${user.sessionToken}`, Origin: baseUrl() };
}

/** A folder named `name` holding `photoIds`, made through the dashboard's own forms; its id. */
async function folderWith(user: FixtureUser, name: string, photoIds: string[]): Promise<string> {
  const post = (fields: Record<string, string>) =>
    fetch(`${baseUrl()}/dashboard`, {
      method: "POST",
      redirect: "manual",
      headers: session(user),
      body: new URLSearchParams(fields),
    });
  expect((await post({ intent: "create-folder", name })).status).toBeLessThan(400);
  const html = await (await fetch(`${baseUrl()}/dashboard`, { headers: session(user) })).text();
  const folderId = /folder=([a-z2-7]+)/.exec(html)?.[1];
  expect(folderId).toBeTruthy();
  for (const photoId of photoIds) {
    expect((await post({ intent: "move", photoId, folderId: folderId! })).status).toBeLessThan(400);
  }
  return folderId!;
}

/** The staging calls the emulator logged after the first `since` entries, keyed by the photo each started from. */
async function stagingCallsSince(since: number): Promise<Map<string, Record<string, unknown>>> {
  const calls = (await providerRequests())
    .slice(since)
    .filter((c) => c.path === "/generate_designs_for_room" && typeof c.input_image_url === "string");
  return new Map(
    calls.map((c) => [/\/api\/signed\/photos\/([a-z2-7]+)\//.exec(String(c.input_image_url))?.[1] ?? "", c]),
  );
}

async function waitForBatch(page: import("playwright-core").Page, n: number) {
  await page.waitForURL(/\/batches\/[a-z2-7]+$/);
  await expect
    .poll(() => page.getByTestId("batch-counts").textContent(), { timeout: 90_000, interval: 1000 })
    .toBe(`${n} done · 0 processing · 0 queued · 0 failed`);
}

describe("one look for a whole listing", () => {
  it("a batch after 'Use this look for the listing' sends the reference for every photo; cleared, it sends none", async () => {
    await setProviderMode("ok");
    const user = await createUser({ credits: 10 });
    const ids = await seedPhotos({ baseUrl: baseUrl(), sessionToken: user.sessionToken! }, 3, "Bedroom");
    const folderId = await folderWith(user, "7 Look Lane", ids);
    const page = await b.newPage(await signedInContext(b, user));
    await page.goto(`/dashboard?folder=${folderId}`);
    await page.waitForSelector("html[data-hydrated=true]");
    await page.getByTestId("listing-look-none").waitFor();

    // Stage one photo in its dialog, then make the result the listing's look.
    const card = page.getByTestId("photo-card").first();
    const refPhotoId = (await card.getAttribute("data-photo-id"))!;
    await card.getByTestId("photo-open").focus();
    await page.keyboard.press("Enter");
    await openPhotoEditor(page);
    const dialog = page.getByTestId("quick-dialog");
    await dialog.getByLabel("Add furniture").check();
    await dialog.getByLabel("Room type").selectOption({ label: "Bedroom" });
    await dialog.getByLabel("Furniture style").selectOption({ index: 1 });
    await dialog.getByRole("button", { name: "Process Photo", exact: true }).click();
    await dialog.getByTestId("quick-result").waitFor({ timeout: 60_000 });
    const version = dialog.getByTestId("version").first();
    const refVersionId = (await version.getAttribute("data-version-id"))!;
    await version.getByTestId("use-look").click();
    await version.getByTestId("version-look").waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    await dialog.getByRole("button", { name: "Close", exact: true }).click();
    await page.goBack();
    // Back from the photo view to the folder's page, which shows the look and how closely it is followed.
    await expect
      .poll(() =>
        page
          .getByTestId("listing-look-strength")
          .textContent()
          .catch(() => ""),
      )
      .toContain("Close (0.7)");

    // The batch page offers it before starting; the batch keeps it.
    await page.getByTestId("stage-batch").click();
    await page.waitForURL(/\/batches\/new\?folder=/);
    await page.waitForSelector("html[data-hydrated=true]");
    const choice = page.getByTestId("batch-look");
    expect(await choice.textContent()).toContain("Close (0.7)");
    expect(await choice.getByLabel("Use the listing's look").isChecked()).toBe(true);
    expect(await page.getByTestId("batch-look-strength").inputValue()).toBe("0.7");
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.getByLabel("Design style for every photo").selectOption({ label: "Modern" });
    const before = (await providerRequests()).length;
    await page.getByTestId("batch-start").click();
    await waitForBatch(page, 3);

    // From the provider's side: every photo's call carries the reference's signed address and its strength, and
    // that address serves the look's bytes.
    const withLook = await stagingCallsSince(before);
    expect([...withLook.keys()].sort()).toEqual([...ids].sort());
    for (const call of withLook.values()) {
      const ref = new URL(String(call.design_style_image_url));
      expect(ref.pathname).toBe(`/api/signed/photos/${refPhotoId}/${refVersionId}`);
      expect(call.design_style_image_strength).toBe(0.7);
    }
    const sent = await fetch(String([...withLook.values()][0]!.design_style_image_url));
    const own = await fetch(`${baseUrl()}/api/photos/${refPhotoId}/versions/${refVersionId}/image`, {
      headers: session(user),
    });
    expect(sent.status).toBe(200);
    expect(Buffer.from(await sent.arrayBuffer()).equals(Buffer.from(await own.arrayBuffer()))).toBe(true);

    // Cleared on the folder's page, without JavaScript: the next batch (also started without it) sends none.
    const noJs = await b.newPage(await signedInContext(b, user, { javaScriptEnabled: false }));
    await noJs.goto(`/dashboard?folder=${folderId}`);
    await noJs.getByTestId("clear-look").click();
    await noJs.getByTestId("listing-look-none").waitFor();
    expect(await noJs.getByTestId("action-message").textContent()).toContain("look is cleared");
    await noJs.goto(`/batches/new?folder=${folderId}`);
    expect(await noJs.getByTestId("batch-look").count()).toBe(0);
    await noJs.getByLabel("Design style for every photo").selectOption({ label: "Modern" });
    const beforeClear = (await providerRequests()).length;
    await noJs.getByTestId("batch-start").click();
    await waitForBatch(noJs, 3);
    const without = await stagingCallsSince(beforeClear);
    expect([...without.keys()].sort()).toEqual([...ids].sort());
    for (const call of without.values()) {
      expect(call).not.toHaveProperty("design_style_image_url");
      expect(call).not.toHaveProperty("design_style_image_strength");
    }
    page.assertClean();
    noJs.assertClean();
  }, 240_000);
});
