import type { Locator } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { makeJpeg } from "../fixtures/images.ts";
import { baseUrl, createUser, loseFirstAnswer, type OpenBrowser, openBrowser, signedInContext } from "./browser.ts";

// AI staging in Chromium against the production build and the provider
// emulator: stage, replace the sky, then a provider failure that costs nothing.

let b: OpenBrowser;
beforeAll(async () => {
  b = await openBrowser();
});
afterAll(async () => {
  await setProviderMode("ok");
  await b?.close();
});

async function setProviderMode(mode: string) {
  const res = await fetch(`http://127.0.0.1:${inject("ports").provider}/_emulator/mode`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ mode }),
  });
  expect(res.ok).toBe(true);
}

/** Picks a photo in the AI Designer dialog and waits for its preview. */
async function uploadToDesigner(dialog: Locator, name: string) {
  await dialog
    .getByTestId("upload-input")
    .setInputFiles({ name, mimeType: "image/jpeg", buffer: Buffer.from(makeJpeg(640, 480, 85)) });
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
    expect(await dialog.getByTestId("job-error").count()).toBe(0);
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
    // Keyboard: on devices that hover, the card's action bar lies over the top of the thumbnail.
    await page.getByTestId("photo-open").first().focus();
    await page.keyboard.press("Enter");
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
