import { gzipSync } from "node:zlib";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { makeJpeg } from "../fixtures/images.ts";
import { baseUrl, browserForFile, createUser, type FixtureUser, openPhotoEditor, signedInContext } from "./browser.ts";
import {
  type Api,
  api,
  csvRows,
  downloaded,
  escapeRe,
  folderWith,
  pixels,
  qrOf,
  readZip,
  stage,
  upload,
} from "./mls-helpers.ts";

// Disclosure that fits the agent's MLS (issue 34, docs/decisions/0170-mls-profiles.md) in Chromium against the
// production build: a listing's profile chosen with its form (without JavaScript), Download for MLS and the pack
// laid out as the profile says, no public page made by a GET, a listing that still advertises keeping its pages
// unless its owner insists, and a sold listing's pages closing by themselves once the clock has moved.

const b = browserForFile();
beforeAll(async () => {
  await fetch(`http://127.0.0.1:${inject("ports").provider}/_emulator/mode`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ mode: "ok" }),
  });
});

async function stagedListing(user: FixtureUser, names: string[]) {
  const call = api(user);
  const photos: { id: string; versionId: string; bytes: Uint8Array; name: string }[] = [];
  for (const [i, name] of names.entries()) {
    const bytes = makeJpeg(640, 480, 85, 24, i + 3);
    const id = await upload(call, bytes, name);
    photos.push({ id, versionId: await stage(call, id), bytes, name });
  }
  const folderId = await folderWith(
    call,
    "12 Oak Lane",
    photos.map((p) => p.id),
  );
  return { call, photos, folderId };
}

/** The listing's form posted as a browser without JavaScript posts it. */
async function listingForm(
  user: FixtureUser,
  folderId: string,
  form: "listing-form" | "status-form",
  fill: Record<string, string>,
) {
  const ctx = await signedInContext(b, user, { javaScriptEnabled: false });
  const page = await b.newPage(ctx);
  await page.goto(`${baseUrl()}/dashboard?folder=${folderId}`);
  await page.getByTestId("listing-pack").locator("summary").click();
  const f = page.getByTestId(form);
  for (const [label, value] of Object.entries(fill)) {
    const field = f.getByLabel(label, { exact: false });
    if ((await field.evaluate((el) => el.tagName)) === "SELECT") await field.selectOption({ label: value });
    else await field.fill(value);
  }
  await f.getByRole("button").click();
  await page.getByTestId("action-message").waitFor();
  const message = (await page.getByTestId("action-message").textContent()) ?? "";
  await ctx.close();
  return message;
}

async function openVersion(user: FixtureUser, folderId: string) {
  const ctx = await signedInContext(b, user, { acceptDownloads: true });
  const page = await b.newPage(ctx);
  await page.goto(`${baseUrl()}/dashboard?folder=${folderId}`);
  await page.waitForSelector("html[data-hydrated=true]");
  await page.getByTestId("photo-open").first().focus();
  await page.keyboard.press("Enter");
  await openPhotoEditor(page);
  const controls = page.getByTestId("quick-dialog").getByTestId("original-link").first();
  await controls.getByTestId("mls-profile").waitFor();
  return { ctx, page, controls };
}

async function publicPageStatus(url: string): Promise<number> {
  return (await fetch(url)).status;
}

describe("MLS profiles", () => {
  it("SDMLS (chosen in the listing's form without JavaScript): Download for MLS is the stored result, pixel for pixel; the pack's captions say Digitally Altered with each original's address", async () => {
    const user = await createUser({ credits: 2 });
    const { call, photos, folderId } = await stagedListing(user, ["Kitchen.jpg", "Den.jpg"]);
    expect(await listingForm(user, folderId, "listing-form", { "MLS profile": "SDMLS (San Diego)" })).toContain(
      "Listing details saved.",
    );

    const { ctx, page, controls } = await openVersion(user, folderId);
    expect(await controls.getByTestId("mls-profile").textContent()).toContain("SDMLS");
    const link = controls.getByTestId("download-labelled");
    expect(await link.textContent()).toBe("Download for MLS");
    const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
    const bytes = await downloaded(download);
    const shown = photos.find((p) => download.suggestedFilename().startsWith(p.name.replace(".jpg", "")))!;
    const stored = new Uint8Array(
      await (
        (await call("GET", `/api/photos/${shown.id}/versions/${shown.versionId}/image`, undefined, true)) as Response
      ).arrayBuffer(),
    );
    expect(Buffer.from(bytes).equals(Buffer.from(stored))).toBe(true);
    expect(pixels(bytes).data).toEqual(pixels(stored).data);
    await ctx.close();

    // The pack through its form without JavaScript: "Publish 2 original pages and download the pack".
    const noJs = await signedInContext(b, user, { javaScriptEnabled: false, acceptDownloads: true });
    const plain = await b.newPage(noJs);
    await plain.goto(`${baseUrl()}/dashboard?folder=${folderId}`);
    await plain.getByTestId("listing-pack").locator("summary").click();
    const publish = plain.getByTestId("publish-pack").getByRole("button");
    expect(await publish.textContent()).toContain("Publish 2 original pages");
    const [packDownload] = await Promise.all([plain.waitForEvent("download"), publish.click()]);
    const { text, files } = readZip(await downloaded(packDownload));
    await noJs.close();
    const rows = csvRows(text("captions.csv"));
    expect(rows[0]).toEqual(["file", "caption", "kind", "original_link"]);
    expect(rows.slice(1)).toHaveLength(2);
    for (const [file, caption, kind, original] of rows.slice(1)) {
      expect(caption).toMatch(
        new RegExp(`^Digitally Altered \\(virtually staged\\)\\. Original: ${escapeRe(baseUrl())}/o/[a-z2-7]{26}$`),
      );
      expect(caption).toContain(original);
      expect(kind).toBe("stage");
      expect(await publicPageStatus(original!)).toBe(200);
      // Nothing burned in: the file in the pack is the stored result.
      const p = photos.find((x) => file!.includes(x.name.replace(".jpg", "")))!;
      const storedP = new Uint8Array(
        await (
          (await call("GET", `/api/photos/${p.id}/versions/${p.versionId}/image`, undefined, true)) as Response
        ).arrayBuffer(),
      );
      expect(Buffer.from(files[file!]!).equals(Buffer.from(storedP))).toBe(true);
    }
    expect(JSON.parse(text("captions.json")).photos).toHaveLength(2);
  });

  it("CRMLS: in the pack each original is next to its staged photo in file order", async () => {
    const user = await createUser({ credits: 2 });
    const { call, photos, folderId } = await stagedListing(user, ["Living room.jpg", "Bedroom.jpg"]);
    expect(
      (await call("PUT", `/api/folders/${folderId}/listing`, { address: null, mlsNumber: null, profile: "crmls" }))
        .status,
    ).toBe(200);
    const res = (await call("GET", `/api/folders/${folderId}/pack`, undefined, true)) as Response;
    const { files, manifest } = readZip(new Uint8Array(await res.arrayBuffer()));
    const upload = Object.keys(files)
      .filter((n) => n.startsWith("photos/"))
      .sort();
    expect(upload).toHaveLength(4);
    for (const p of photos) {
      const base = p.name.replace(".jpg", "");
      const original = upload.indexOf(upload.find((n) => n.endsWith(`${base} - original.jpg`))!);
      const staged = upload.indexOf(upload.find((n) => n.endsWith(`${base} - virtual staging.jpg`))!);
      expect(original).toBeGreaterThanOrEqual(0);
      // Adjacent, the original first: the pair a buyer sees one after the other.
      expect(staged - original).toBe(1);
      expect(Buffer.from(files[upload[original]!]!).equals(Buffer.from(p.bytes))).toBe(true);
    }
    expect(manifest.profile).toMatchObject({ id: "crmls", labelOnPhoto: false });
  });

  it("California: the QR code decodes to the original page and the manifest's label says where the original is; revoking on an active listing asks first and says why; afterwards no download or pack publishes again", async () => {
    const user = await createUser({ credits: 1 });
    const { call, photos, folderId } = await stagedListing(user, ["Bath.jpg"]);
    const [photo] = photos;
    const { ctx, page, controls } = await openVersion(user, folderId);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      controls.getByTestId("download-labelled").click(),
    ]);
    const url = qrOf(await downloaded(download));
    expect(url).toMatch(new RegExp(`^${escapeRe(baseUrl())}/o/[a-z2-7]{26}$`));
    expect(await publicPageStatus(url!)).toBe(200);
    const pack = readZip(
      new Uint8Array(
        await ((await call("GET", `/api/folders/${folderId}/pack`, undefined, true)) as Response).arrayBuffer(),
      ),
    );
    const row = pack.manifest.photos[0];
    expect(row.labelText).toBe(
      `Virtually staged: digitally altered photo / Unaltered original: ${url!.replace(/^https?:\/\//, "")}`,
    );
    expect(row.originalPage).toBe(url);

    // Revoke: asked first, naming the law.
    await expect.poll(() => controls.getByTestId("original-link-url").textContent(), { timeout: 10_000 }).toBe(url);
    await controls.getByRole("button", { name: "Revoke link" }).click();
    const warning = controls.getByTestId("withdraw-warning");
    await warning.waitFor();
    expect(await warning.textContent()).toContain("California law (Business and Professions Code 10140.8)");
    expect(await publicPageStatus(url!)).toBe(200);
    await warning.getByRole("button", { name: "Withdraw it anyway" }).click();
    await controls.getByText("Link revoked").waitFor();
    expect(await publicPageStatus(url!)).toBe(410);

    // Download for MLS and both packs now: nothing is published, the old link stays withdrawn.
    await controls.getByTestId("mls-message").waitFor();
    expect(await controls.getByTestId("download-labelled").count()).toBe(0);
    const single = await call("GET", `/api/photos/${photo!.id}/versions/${photo!.versionId}/labelled`);
    expect(single.status).toBe(409);
    expect(single.body.error).toContain("You withdrew this photo's original page");
    for (const res of [
      (await call("GET", `/api/folders/${folderId}/pack`, undefined, true)) as Response,
      (await call("POST", `/api/folders/${folderId}/pack`, new URLSearchParams({ publish: "new" }), true)) as Response,
    ]) {
      const { manifest, files } = readZip(new Uint8Array(await res.arrayBuffer()));
      expect(manifest.leftOut[0].reason).toContain("You withdrew");
      expect(Object.keys(files).filter((n) => n.startsWith("photos/"))).toEqual(["photos/01 Bath.jpg"]);
    }
    const state = await call("GET", `/api/photos/${photo!.id}/versions/${photo!.versionId}/disclosure`);
    expect(state.body.disclosure.page).toMatchObject({ state: "withdrawn", url: null });
    expect(await publicPageStatus(url!)).toBe(410);

    // Until its owner publishes it again.
    await controls.getByRole("button", { name: "Publish the original page again" }).click();
    await expect.poll(() => controls.getByTestId("original-link-url").count(), { timeout: 10_000 }).toBe(1);
    const again = await controls.getByTestId("original-link-url").textContent();
    expect(again).not.toBe(url);
    expect(await publicPageStatus(again!)).toBe(200);
    await ctx.close();
  });

  it("marked sold in its form (without JavaScript), a listing's original pages close after the chosen days: 410 once the clock has moved", async () => {
    const user = await createUser({ credits: 1 });
    const { call, photos, folderId } = await stagedListing(user, ["Porch.jpg"]);
    const [photo] = photos;
    const made = await call("POST", `/api/photos/${photo!.id}/versions/${photo!.versionId}/link`);
    const url = made.body.url as string;
    const message = await listingForm(user, folderId, "status-form", {
      Status: "Sold / off market",
      "Close original pages after": "3",
    });
    expect(message).toMatch(/Marked sold \/ off market: its original pages close on \d{4}-\d{2}-\d{2}\./);
    expect(await publicPageStatus(url)).toBe(200);
    const cron = (now: number) =>
      fetch(`${baseUrl()}/api/dev/cron/listings`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ now }),
      }).then((r) => r.json() as Promise<{ closed: number }>);
    const DAY = 24 * 60 * 60 * 1000;
    expect((await cron(Date.now() + 2 * DAY)).closed).toBe(0);
    expect(await publicPageStatus(url)).toBe(200);
    expect((await cron(Date.now() + 3 * DAY + 60_000)).closed).toBe(1);
    expect(await publicPageStatus(url)).toBe(410);
    expect(await publicPageStatus(`${baseUrl()}/api${new URL(url).pathname}/original`)).toBe(410);
  });

  it("the original page lists every altered version with its kind and date, loads no JavaScript bundle and works without JavaScript", async () => {
    const user = await createUser({ credits: 2 });
    const call: Api = api(user);
    const photoId = await upload(call, makeJpeg(800, 600, 85), "Lounge.jpg");
    await stage(call, photoId, "removal");
    const staged = await stage(call, photoId);
    const made = await call("POST", `/api/photos/${photoId}/versions/${staged}/link`);
    const url = made.body.url as string;
    const html = await (await fetch(url)).text();
    expect(html).not.toMatch(/<script[^>]+src=|type="module"|rel="modulepreload"/);
    const page = await b.newPage(await b.newContext({ javaScriptEnabled: false }));
    expect((await page.goto(url))?.status()).toBe(200);
    const figures = page.getByTestId("altered-version");
    expect(await figures.count()).toBe(2);
    expect(await figures.nth(0).textContent()).toMatch(/^Virtual staging, \d{4}-\d{2}-\d{2} \(the advertised photo\)$/);
    expect(await figures.nth(1).textContent()).toMatch(/^Furniture removal, \d{4}-\d{2}-\d{2}$/);
    await page.waitForLoadState("load");
    const images = await page.$$eval("img", (imgs) =>
      imgs.map((i) => ({ complete: (i as HTMLImageElement).complete, width: (i as HTMLImageElement).naturalWidth })),
    );
    expect(images).toHaveLength(3);
    expect(images.every((i) => i.complete && i.width > 0)).toBe(true);
    // Small on a phone: one document (its stylesheet inlined, as on every page) and 400 px thumbnails.
    const gzipped = gzipSync(html).byteLength;
    console.log(`original page: ${Buffer.byteLength(html)} bytes of HTML, ${gzipped} gzipped, no script`);
    expect(gzipped).toBeLessThan(16_000);
  });
});
