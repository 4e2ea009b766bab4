import type { Locator } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { baseUrl, browserForFile, createUser, loseFirstAnswer, openPhotoEditor, signedInContext } from "./browser.ts";
import { providerRequests, setProviderMode } from "./provider-emulator.ts";
import { ROOM_PHOTO, seedPhotos } from "./support/library-bytes.ts";

// AI staging in Chromium against the production build and the provider
// emulator: stage, replace the sky, then a provider failure that costs nothing.

const b = browserForFile();
afterAll(async () => {
  await setProviderMode("ok");
});

/** Opens a seeded photo's dialog from the library. */
async function openFirstPhoto(page: import("playwright-core").Page) {
  await page.goto(`${baseUrl()}/dashboard`);
  await page.waitForSelector("html[data-hydrated=true]");
  // Keyboard: the thumbnail is a link to the photo view.
  await page.getByTestId("photo-open").first().focus();
  await page.keyboard.press("Enter");
  // The thumbnail opens the photo view; its "Versions and AI options" opens the photo's editor.
  await openPhotoEditor(page);
  return page.getByTestId("quick-dialog");
}

/** The size of the image the result's comparison shows, once it has loaded. */
async function shownResultSize(dialog: Locator): Promise<[number, number]> {
  const img = dialog.getByTestId("quick-result").locator('img[src*="/versions/"]').first();
  await expect.poll(() => img.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth > 0)).toBe(true);
  return img.evaluate((i: HTMLImageElement) => [i.naturalWidth, i.naturalHeight] as [number, number]);
}

/** Picks a photo in the AI Designer dialog and waits for its preview. */
async function uploadToDesigner(dialog: Locator, name: string) {
  await dialog
    .getByTestId("upload-input")
    .setInputFiles({ name, mimeType: "image/jpeg", buffer: Buffer.from(ROOM_PHOTO) });
  await dialog.getByTestId("designer-preview").waitFor({ timeout: 60_000 });
}

/** Waits for the dialog to show a staged result. */
async function resultShown(dialog: Locator) {
  await dialog
    .getByTestId("designer-result")
    .getByText("AI Enhanced", { exact: true })
    .first()
    .waitFor({ timeout: 60_000 });
}

describe("AI staging", () => {
  it("stages as Bedroom / Scandinavian, replaces the sky with Dusk, and a provider failure costs nothing", async () => {
    await setProviderMode("ok");
    const user = await createUser({ credits: 3 });
    const ctx = await signedInContext(b, user);
    const page = await b.newPage(ctx);
    await page.goto(`${baseUrl()}/dashboard`);
    await page.waitForSelector("html[data-hydrated=true]");
    const credits = page.getByTestId("credits").first();
    await expect.poll(() => credits.textContent()).toBe("3");

    await page.getByRole("button", { name: "AI Designer" }).click();
    const dialog = page.getByTestId("designer-dialog");
    const transform = dialog.getByRole("button", { name: "Transform with AI" });
    expect(await transform.isDisabled()).toBe(true);
    await uploadToDesigner(dialog, "Bedroom.jpg");
    await dialog.getByLabel("Room type").selectOption({ label: "Bedroom" });
    expect(await transform.isDisabled()).toBe(true);
    await dialog.getByLabel("Design style").selectOption({ label: "Scandinavian" });
    expect(await transform.isDisabled()).toBe(false);
    await transform.click();
    await dialog.getByRole("button", { name: "Processing your design..." }).waitFor();
    await resultShown(dialog);
    await dialog.getByTestId("result-compare").waitFor();
    await expect.poll(() => credits.textContent()).toBe("2");

    await dialog.getByRole("button", { name: "Sky: Dusk" }).click();
    await dialog.getByRole("button", { name: "Processing your design..." }).waitFor();
    await dialog.getByRole("button", { name: "Transform with AI" }).waitFor({ timeout: 60_000 });
    expect(await dialog.getByTestId("job-error").allTextContents()).toEqual([]);
    await expect.poll(() => credits.textContent()).toBe("1");

    await setProviderMode("fail500");
    await dialog.getByRole("button", { name: "Sky: Night" }).click();
    const error = dialog.getByTestId("job-error");
    await error.waitFor({ timeout: 60_000 });
    expect(await error.textContent()).toBe("Failed to replace sky: 500 - Internal Server Error");
    expect(await error.getAttribute("class")).toContain("alert-error");
    await setProviderMode("ok");
    await page.reload();
    await page.waitForSelector("html[data-hydrated=true]");
    await expect.poll(() => page.getByTestId("credits").first().textContent()).toBe("1");

    // The result is in the library: open the photo and see both versions.
    // Keyboard: the thumbnail is a link to the photo view.
    await page.getByTestId("photo-open").first().focus();
    await page.keyboard.press("Enter");
    // The thumbnail opens the photo view; its "Versions and AI options" opens the photo's editor.
    await openPhotoEditor(page);
    const quick = page.getByTestId("quick-dialog");
    await expect.poll(() => quick.getByTestId("version-list").locator("li").count()).toBe(2);
    expect(await quick.getByRole("button", { name: "Process Photo" }).isDisabled()).toBe(true);
    await quick.getByLabel("Add furniture").check();
    expect(await quick.getByRole("button", { name: "Process Photo" }).isDisabled()).toBe(true);
    await quick.getByLabel("Room type").selectOption({ label: "Kitchen" });
    await quick.getByLabel("Furniture style").selectOption({ label: "Luxury" });
    expect(await quick.getByRole("button", { name: "Process Photo" }).isDisabled()).toBe(false);
    await ctx.close();
  });

  it("an answer lost on the way back: the page sends the request again with its key and is charged once", async () => {
    await setProviderMode("ok");
    const user = await createUser({ credits: 3 });
    const ctx = await signedInContext(b, user);
    const page = await b.newPage(ctx);
    // The first job request reaches the server, which starts the job; its answer never reaches the page.
    const sent = await loseFirstAnswer(page, "**/api/photos/*/jobs");
    await page.goto(`${baseUrl()}/dashboard`);
    await page.waitForSelector("html[data-hydrated=true]");
    const credits = page.getByTestId("credits").first();
    await page.getByRole("button", { name: "AI Designer" }).click();
    const dialog = page.getByTestId("designer-dialog");
    await uploadToDesigner(dialog, "Lounge.jpg");
    await dialog.getByLabel("Room type").selectOption({ label: "Bedroom" });
    await dialog.getByLabel("Design style").selectOption({ label: "Scandinavian" });
    await dialog.getByRole("button", { name: "Transform with AI" }).click();
    await resultShown(dialog);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent[1]).toBe(sent[0]);
    await page.reload();
    await page.waitForSelector("html[data-hydrated=true]");
    await expect.poll(() => credits.textContent()).toBe("2");
    expect(await page.getByTestId("photo-open").count()).toBe(1);
    await ctx.close();
  });
});

describe("what the provider is sent and what comes back (docs/decisions/0151-provider-as-documented.md)", () => {
  it("removes the furniture from a photo and shows the emptied room, enlarged to listing size", async () => {
    await setProviderMode("ok");
    const user = await createUser({ credits: 1 });
    const [photoId] = await seedPhotos({ baseUrl: baseUrl(), sessionToken: user.sessionToken! }, 1, "Living room");
    const ctx = await signedInContext(b, user);
    const page = await b.newPage(ctx);
    const dialog = await openFirstPhoto(page);
    const before = (await providerRequests()).length;
    await dialog.getByLabel("Remove existing furniture").check();
    await dialog.getByRole("button", { name: "Process Photo" }).click();
    await dialog.getByTestId("quick-result").waitFor({ timeout: 60_000 });
    const item = dialog.getByTestId("version");
    await expect.poll(() => item.count(), { timeout: 60_000 }).toBe(1);
    expect(await item.first().textContent()).toContain("Furniture removed");
    // The provider's removal answers one 768x576 image (info.image); one enlargement takes it to 2304x1728.
    expect((await providerRequests()).slice(before).map((r) => r.path)).toEqual([
      "/remove_objects_from_room",
      "/upscale_image",
    ]);
    expect(await shownResultSize(dialog)).toEqual([2304, 1728]);
    expect(await item.first().getByTestId("version-size").count()).toBe(0);
    await expect.poll(() => page.getByTestId("credits").first().textContent()).toBe("0");
    const versions = (await (
      await fetch(`${baseUrl()}/api/photos/${photoId}/versions`, {
        headers: { Cookie: `sw_session=${user.sessionToken}` },
      })
    ).json()) as { versions: { kind: string; width: number; height: number }[] };
    expect(versions.versions.map((v) => [v.kind, v.width, v.height])).toEqual([["removal", 2304, 1728]]);
    page.assertClean();
    await ctx.close();
  }, 120_000);

  it("Christmas decor, a palette, creativity and an instruction reach the provider under its own codes", async () => {
    await setProviderMode("ok");
    const user = await createUser({ credits: 1, plan: "Starter plan" });
    await seedPhotos({ baseUrl: baseUrl(), sessionToken: user.sessionToken! }, 1, "Bedroom");
    const ctx = await signedInContext(b, user);
    const page = await b.newPage(ctx);
    const dialog = await openFirstPhoto(page);
    await dialog.getByLabel("Add furniture").check();
    await dialog.getByLabel("Room type").selectOption({ label: "Bedroom" });
    await dialog.getByLabel("Furniture style").selectOption({ label: "Modern" });
    const advanced = dialog.getByTestId("advanced-options");
    await advanced.locator("summary").click();
    // The provider's names, in its order: "Christmas" is SPECIALITY_DECOR_2, never another season.
    const decor = advanced.getByLabel("Seasonal decor");
    expect(await decor.locator("option").allTextContents()).toEqual([
      "None",
      "Halloween",
      "Christmas",
      "Thanksgiving",
      "Fall",
      "Spring",
      "Summer",
      "Winter",
    ]);
    await decor.selectOption({ label: "Christmas" });
    await advanced.getByLabel("Colour palette").selectOption({ label: "Blue, Beige" });
    await advanced.getByLabel("How far from the photo").selectOption({ label: "Keep the room as it is" });
    await advanced.getByLabel("Instruction (optional)").fill("A reading chair by the window");
    expect(await advanced.textContent()).toContain("Your instruction becomes the whole direction the AI follows");
    const before = (await providerRequests()).length;
    await dialog.getByRole("button", { name: "Process Photo", exact: true }).click();
    await dialog.getByTestId("quick-result").waitFor({ timeout: 60_000 });
    const calls = (await providerRequests()).slice(before);
    expect(calls.map((c) => c.path)).toEqual(["/generate_designs_for_room"]);
    expect(calls[0]).toMatchObject({
      room_type: "bedroom",
      design_style: "modern",
      speciality_decor: "SPECIALITY_DECOR_2",
      color_scheme: "COLOR_SCHEME_8",
      design_creativity: 0.15,
      scale_factor: 3,
      prompt:
        "A bedroom furnished in Modern style, real estate listing photo, walls, windows, doors and floor unchanged. A reading chair by the window",
    });
    expect(calls[0]).not.toHaveProperty("keep_original_floor");
    // Staged at 3x the provider's 768x512 in the same call: no enlargement needed.
    expect(await shownResultSize(dialog)).toEqual([2304, 1536]);
    await expect.poll(() => page.getByTestId("credits").first().textContent()).toBe("0");
    page.assertClean();
    await ctx.close();
  }, 120_000);
});
