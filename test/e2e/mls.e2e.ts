import { beforeAll, describe, expect, inject, it } from "vitest";
import { makeJpeg } from "../fixtures/images.ts";
import { baseUrl, browserForFile, createUser, openPhotoEditor, signedInContext } from "./browser.ts";
import { api, downloaded, escapeRe, folderWith, qrOf, readZip, stage, upload } from "./mls-helpers.ts";

// MLS output (issues 16 and 34) in Chromium against the production build and the provider emulator: the first
// Download for MLS of a new account (California's law) publishes the original page it says it publishes, its QR code
// opens that page, revoked to 410; a listing pack of 5 staged photos; the disclosure settings and account deletion.
// The profiles themselves: test/e2e/mls-profiles.e2e.ts.

const b = browserForFile();
beforeAll(async () => {
  await fetch(`http://127.0.0.1:${inject("ports").provider}/_emulator/mode`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ mode: "ok" }),
  });
});

describe("MLS output", () => {
  it("the first Download for MLS publishes the original page it says it publishes; its QR code opens it; revoked, it answers 410", async () => {
    const user = await createUser({ credits: 2 });
    const call = api(user);
    const photoId = await upload(call, makeJpeg(900, 600, 88), "Living room.jpg");
    await stage(call, photoId);

    const ctx = await signedInContext(b, user, { acceptDownloads: true });
    const page = await b.newPage(ctx);
    await page.goto(`${baseUrl()}/dashboard`);
    await page.waitForSelector("html[data-hydrated=true]");
    await page.getByTestId("photo-open").first().focus();
    await page.keyboard.press("Enter");
    // The thumbnail opens the photo view; its "Versions and AI options" opens the photo's editor.
    await openPhotoEditor(page);
    const quick = page.getByTestId("quick-dialog");
    const link = quick.getByTestId("download-labelled").first();
    await link.waitFor();
    expect(await link.textContent()).toContain("publishes its original page");
    const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
    const bytes = await downloaded(download);
    expect(download.suggestedFilename()).toMatch(/labelled\)\.jpg$/);

    const url = qrOf(bytes);
    expect(url).toMatch(new RegExp(`^${escapeRe(baseUrl())}/o/[a-z2-7]{26}$`));
    // Published: the dialog now offers the plain download (a GET), which gives the same bytes.
    const controls = quick.getByTestId("original-link").first();
    await expect.poll(() => controls.getByTestId("original-link-url").textContent(), { timeout: 10_000 }).toBe(url);
    const versionId = (await call("GET", `/api/photos/${photoId}/versions`)).body.versions[0].id;
    const again = (await call(
      "GET",
      `/api/photos/${photoId}/versions/${versionId}/labelled`,
      undefined,
      true,
    )) as Response;
    expect(new Uint8Array(await again.arrayBuffer())).toEqual(bytes);

    const visitor = await b.newPage(await b.newContext());
    const res = await visitor.goto(url!);
    expect(res?.status()).toBe(200);
    expect(res?.headers()["cache-control"]).toContain("s-maxage=60");
    await expect.poll(() => visitor.getByTestId("disclosure").textContent()).toMatch(/virtually staged/);
    const imageSrc = `${baseUrl()}/api${new URL(url!).pathname}/original`;
    expect((await fetch(imageSrc)).status).toBe(200);
    // Nothing about the agent on the page.
    expect(await visitor.content()).not.toContain(user.email);

    // Revoked from the version list (the photo is in no listing: nothing to warn of); page and images answer 410.
    await controls.getByRole("button", { name: "Revoke link" }).click();
    await controls.getByText("Link revoked").waitFor();
    const after = await visitor.goto(url!);
    expect(after?.status()).toBe(410);
    await visitor.getByTestId("original-gone").waitFor();
    expect((await fetch(imageSrc)).status).toBe(410);
    await ctx.close();
  });

  it("a folder of 5 staged photos as one pack (California): 5 labelled photos whose QR codes open their 5 pages, 5 originals byte-identical", async () => {
    const user = await createUser({ credits: 5 });
    const call = api(user);
    const uploads: { id: string; bytes: Uint8Array }[] = [];
    for (let i = 0; i < 5; i++) {
      const bytes = makeJpeg(640, 480, 85, 24, i + 7);
      uploads.push({ id: await upload(call, bytes, `Room ${i + 1}.jpg`), bytes });
    }
    for (const u of uploads) await stage(call, u.id);
    const folderId = await folderWith(
      call,
      "12 Maple St",
      uploads.map((u) => u.id),
    );
    const listing = (await call("PUT", `/api/folders/${folderId}/listing`, {
      address: "12 Maple St, Springfield",
      mlsNumber: "ML-81234",
    })) as { status: number };
    expect(listing.status).toBe(200);

    // Asked for with the POST that publishes the pages the pack needs.
    const res = (await call(
      "POST",
      `/api/folders/${folderId}/pack`,
      new URLSearchParams({ publish: "new" }),
      true,
    )) as Response;
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/zip");
    const { files, text, manifest } = readZip(new Uint8Array(await res.arrayBuffer()));
    expect(manifest.listing).toMatchObject({ address: "12 Maple St, Springfield", mlsNumber: "ML-81234" });
    expect(manifest.profile).toMatchObject({ id: "california", labelOnPhoto: true });
    expect(manifest.photos).toHaveLength(5);
    expect(text("manifest.csv").trim().split("\r\n")).toHaveLength(6);
    expect(text("captions.csv").trim().split("\r\n")).toHaveLength(6);
    const links = new Set(manifest.photos.map((p: { originalPage: string }) => p.originalPage));
    expect(links.size).toBe(5);
    for (const [i, p] of (
      manifest.photos as { file: string; originalFile: string; originalPage: string; done: string }[]
    ).entries()) {
      expect(p.done).toBe("Virtual staging");
      expect(p.file).toMatch(/^photos\/0\d Room \d - virtual staging\.jpg$/);
      expect(p.originalFile).toMatch(/^originals\/0\d Room \d - original\.jpg$/);
      // Pixel check: the original is the upload, byte for byte.
      expect(Buffer.from(files[p.originalFile]!).equals(Buffer.from(uploads[i]!.bytes))).toBe(true);
      // The staged version carries the label and its QR points at this photo's original page.
      expect(qrOf(files[p.file]!)).toBe(p.originalPage);
      const page = await fetch(p.originalPage);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("12 Maple St, Springfield");
    }
    expect(Object.keys(files).filter((n) => n.startsWith("originals/"))).toHaveLength(5);
    expect(Object.keys(files).filter((n) => n.startsWith("photos/"))).toHaveLength(5);
  });

  it("saves the disclosure on /settings without JavaScript, and deletes the account after the password is typed again", async () => {
    const password = "mls-delete-me-1";
    const user = await createUser({ credits: 1, password });
    const noJs = await signedInContext(b, user, { javaScriptEnabled: false });
    const plain = await b.newPage(noJs);
    await plain.goto(`${baseUrl()}/settings`);
    const form = plain.getByTestId("label-form");
    // A new account follows California's law.
    expect(await form.getByRole("radio", { name: /California \(AB 723\)/ }).isChecked()).toBe(true);
    await form.getByRole("radio", { name: /Link only, nothing on the photo/ }).check();
    await form.getByLabel("Text", { exact: true }).fill("Digitally staged");
    await form.getByLabel("Corner").selectOption({ label: "Top left" });
    await form.getByRole("button", { name: "Save disclosure" }).click();
    await plain.getByText("Disclosure saved.").waitFor();
    await plain.goto(`${baseUrl()}/settings`);
    expect(
      await plain
        .getByTestId("label-form")
        .getByRole("radio", { name: /Link only/ })
        .isChecked(),
    ).toBe(true);
    expect(await plain.getByTestId("label-form").getByLabel("Text", { exact: true }).inputValue()).toBe(
      "Digitally staged",
    );
    await noJs.close();

    const ctx = await signedInContext(b, user);
    const page = await b.newPage(ctx);
    await page.goto(`${baseUrl()}/settings`);
    await page.waitForSelector("html[data-hydrated=true]");
    const del = page.getByTestId("delete-account-form");
    await del.getByLabel("Your password").fill("not my password");
    await del.getByRole("button", { name: "Delete my account" }).click();
    await page.getByText("The password is not correct.").first().waitFor();
    await del.getByLabel("Your password").fill(password);
    await del.getByRole("button", { name: "Delete my account" }).click();
    await page.waitForURL(/\/\?deleted=1$/);
    // Signed out everywhere: the old session cookie no longer opens the dashboard.
    const old = await fetch(`${baseUrl()}/dashboard`, {
      headers: { Cookie: `sw_session=${user.sessionToken}` },
      redirect: "manual",
    });
    expect(old.status).toBe(302);
    await ctx.close();
  });
});
