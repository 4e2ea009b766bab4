import { describe, expect, it } from "vitest";
import { GIF_BYTES, makeJpeg, makePng } from "../fixtures/images.ts";
import {
  baseUrl,
  browserForFile,
  createUser,
  type FixtureUser,
  type OpenBrowser,
  phoneContext,
  signedInContext,
} from "./browser.ts";
import { api, folderWith, stage, upload } from "./mls-helpers.ts";
import { measureGridBytes, measureUploadBytes, seedPhotos } from "./support/library-bytes.ts";

// The photo library in Chromium against the production build: uploads with
// progress, pause and resume under throttling, folders, trash, refusals.

const b = browserForFile();

const session = (u: FixtureUser) => ({ baseUrl: baseUrl(), sessionToken: u.sessionToken! });

async function dashboard(user: FixtureUser, path = "/dashboard", opts: Parameters<OpenBrowser["newContext"]>[0] = {}) {
  const ctx = await signedInContext(b, user, opts);
  const page = await b.newPage(ctx);
  await page.goto(path);
  await page.waitForSelector("html[data-hydrated=true]");
  return page;
}

type Page = Awaited<ReturnType<typeof dashboard>>;

/** Every value the progress bar showed, recorded in the page. */
async function recordProgress(page: Page) {
  await page.evaluate(() => {
    const seen: number[] = [];
    (window as unknown as { progress: number[] }).progress = seen;
    new MutationObserver(() => {
      const bar = document.querySelector("[role=progressbar]");
      const v = Number(bar?.getAttribute("aria-valuenow"));
      if (bar && seen.at(-1) !== v) seen.push(v);
    }).observe(document.body, { subtree: true, childList: true, attributes: true });
  });
}

async function uploadFile(page: Page, file: { name: string; mimeType: string; buffer: Buffer }) {
  await page.getByTestId("upload-input").setInputFiles(file);
  await page.waitForSelector("[data-testid=upload-panel][data-state=success]", { timeout: 60_000 });
}

/** Creates a folder with the sidebar's form and waits for its link: the link. */
async function createFolder(page: Page, name: string) {
  await page.getByText("Create Folder").click();
  await page.getByLabel("Folder name").fill(name);
  await page.getByRole("button", { name: "Create", exact: true }).click();
  const link = page.getByRole("link", { name });
  await link.waitFor();
  return link;
}

function gridNames(page: Page): Promise<string[]> {
  return page.getByTestId("photo-name").allInnerTexts();
}

describe("uploading photos", () => {
  it("uploads a real JPEG and a real PNG with progress, shows their thumbnails, and keeps them after a reload", async () => {
    const user = await createUser({ credits: 3 });
    const page = await dashboard(user);
    await page.getByRole("link", { name: "Upload Photo (3 credits left)" }).click();
    await page.getByText("Drag & drop or click to browse • Max 10MB • JPG, PNG").waitFor();
    await recordProgress(page);

    await uploadFile(page, {
      name: "Living room.jpg",
      mimeType: "image/jpeg",
      buffer: Buffer.from(makeJpeg(2400, 1600, 92, 40)),
    });
    const progress = await page.evaluate(() => (window as unknown as { progress: number[] }).progress);
    expect(progress.at(-1)).toBe(100);
    expect(progress.some((v) => v > 0 && v < 100)).toBe(true);
    expect(progress.every((v, i) => i === 0 || v >= progress[i - 1]!)).toBe(true);

    await uploadFile(page, { name: "Floor plan.png", mimeType: "image/png", buffer: Buffer.from(makePng(500, 400)) });
    await page.getByTestId("photo-name").filter({ hasText: "Floor plan" }).waitFor();
    expect(await gridNames(page)).toEqual(["Floor plan", "Living room"]);

    await page.reload();
    await page.waitForSelector("html[data-hydrated=true]");
    expect(await gridNames(page)).toEqual(["Floor plan", "Living room"]);
    const thumbs = await page.locator("[data-testid=photo-card] img").evaluateAll((imgs) =>
      (imgs as HTMLImageElement[]).map((img) => ({
        src: img.getAttribute("src"),
        w: img.naturalWidth,
        h: img.naturalHeight,
      })),
    );
    for (const t of thumbs) {
      expect(t.src).toMatch(/^\/api\/photos\/[a-z0-9]+\/thumb\?v=0$/);
      expect(Math.max(t.w, t.h)).toBe(400);
    }
    page.assertClean();
  });

  it("refuses a 12 MB file, a GIF and a renamed text file with messages, before sending a byte", async () => {
    const user = await createUser({ credits: 1 });
    const page = await dashboard(user, "/dashboard?upload=1");
    const sent: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/api/uploads")) sent.push(r.url());
    });
    const message = page.getByTestId("upload-message");

    const big = Buffer.alloc(12 * 1024 * 1024, 0x41);
    big.set([0xff, 0xd8, 0xff, 0xe0]);
    await page.getByTestId("upload-input").setInputFiles({ name: "huge.jpg", mimeType: "image/jpeg", buffer: big });
    expect(await message.textContent()).toBe("This file is larger than 10 MB. Please choose a photo of 10 MB or less.");

    await page
      .getByTestId("upload-input")
      .setInputFiles({ name: "anim.gif", mimeType: "image/gif", buffer: Buffer.from(GIF_BYTES) });
    expect(await message.textContent()).toBe(
      "Only JPG and PNG images can be uploaded. Please choose a .jpg or .png file.",
    );

    const text = Buffer.from("not a photo at all\n".repeat(50));
    await page.getByTestId("upload-input").setInputFiles({ name: "notes.jpg", mimeType: "image/jpeg", buffer: text });
    await message.filter({ hasText: "not a JPG or PNG image" }).waitFor();

    expect(sent).toEqual([]);
    page.assertClean();
  });

  it("pauses and resumes under network throttling, sending again only what had not arrived", async () => {
    const user = await createUser({ credits: 1 });
    const page = await dashboard(user, "/dashboard?upload=1");
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.emulateNetworkConditions", {
      offline: false,
      latency: 150,
      downloadThroughput: 256 * 1024,
      uploadThroughput: 96 * 1024,
    });

    const stored: number[] = [];
    const sent: { phase: "before" | "after"; index: number }[] = [];
    const statusChecks: string[] = [];
    let phase: "before" | "after" = "before";
    let uploadId = "";
    let firstChunk: () => void = () => undefined;
    const gotChunk = new Promise<void>((r) => {
      firstChunk = r;
    });
    page.on("request", (r) => {
      const m = /\/api\/uploads\/([a-z0-9]+)\/chunks\/(\d+)$/.exec(r.url());
      if (m && r.method() === "PUT") {
        uploadId = m[1]!;
        sent.push({ phase, index: Number(m[2]) });
      }
      if (/\/api\/uploads\/[a-z0-9]+$/.test(r.url()) && r.method() === "GET") statusChecks.push(phase);
    });
    page.on("requestfinished", async (r) => {
      const m = /\/chunks\/(\d+)$/.exec(r.url());
      if (m && (await r.response())?.status() === 200 && phase === "before") {
        stored.push(Number(m[1]));
        firstChunk();
      }
    });

    const photo = makeJpeg(2400, 1600, 92, 40, 5);
    await page
      .getByTestId("upload-input")
      .setInputFiles({ name: "Porch.jpg", mimeType: "image/jpeg", buffer: Buffer.from(photo) });
    await gotChunk;
    await page.getByRole("button", { name: "Pause" }).click();
    await page.waitForSelector("[data-testid=upload-panel][data-state=paused]");
    const pausedAt = Number(await page.getByRole("progressbar").getAttribute("aria-valuenow"));
    expect(pausedAt).toBeGreaterThan(0);
    expect(pausedAt).toBeLessThan(100);

    // The server holds exactly the chunks that finished before the pause.
    const status = await fetch(`${baseUrl()}/api/uploads/${uploadId}`, {
      headers: { Cookie: `sw_session=${user.sessionToken}` },
    });
    const held = ((await status.json()) as { received: number[] }).received;
    expect(held).toEqual([...stored].sort((a, b) => a - b));

    phase = "after";
    await page.getByRole("button", { name: "Resume" }).click();
    await page.waitForSelector("[data-testid=upload-panel][data-state=success]", { timeout: 90_000 });
    expect(statusChecks).toContain("after");
    const resent = sent.filter((s) => s.phase === "after").map((s) => s.index);
    expect(resent.length).toBeGreaterThan(0);
    for (const i of held) expect(resent).not.toContain(i);
    await page.getByTestId("photo-name").filter({ hasText: "Porch" }).waitFor();
    await cdp.send("Network.emulateNetworkConditions", {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1,
    });
    page.assertClean();
  });

  it("takes the first of several dropped files", async () => {
    const user = await createUser({ credits: 1 });
    const page = await dashboard(user, "/dashboard?upload=1");
    const first = [...makePng(300, 200)];
    const second = [...makeJpeg(300, 200)];
    const drop = await page.evaluateHandle(
      ([a, b]: number[][]) => {
        const dt = new DataTransfer();
        dt.items.add(new File([new Uint8Array(a ?? [])], "Dropped first.png", { type: "image/png" }));
        dt.items.add(new File([new Uint8Array(b ?? [])], "Dropped second.jpg", { type: "image/jpeg" }));
        return dt;
      },
      [first, second],
    );
    await page
      .getByText("Drag & drop or click to browse • Max 10MB • JPG, PNG")
      .dispatchEvent("drop", { dataTransfer: drop });
    await page.waitForSelector("[data-testid=upload-panel][data-state=success]");
    await page.getByTestId("photo-name").first().waitFor();
    expect(await gridNames(page)).toEqual(["Dropped first"]);
    page.assertClean();
  });

  it("cancels an upload under throttling and the server keeps nothing", async () => {
    const user = await createUser({ credits: 1 });
    const page = await dashboard(user, "/dashboard?upload=1");
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.emulateNetworkConditions", {
      offline: false,
      latency: 150,
      downloadThroughput: 256 * 1024,
      uploadThroughput: 64 * 1024,
    });
    let uploadId = "";
    const started = new Promise<void>((resolve) => {
      page.on("request", (r) => {
        const m = /\/api\/uploads\/([a-z0-9]+)\/chunks\/\d+$/.exec(r.url());
        if (m) {
          uploadId = m[1]!;
          resolve();
        }
      });
    });
    await page.getByTestId("upload-input").setInputFiles({
      name: "Attic.jpg",
      mimeType: "image/jpeg",
      buffer: Buffer.from(makeJpeg(2400, 1600, 92, 40, 11)),
    });
    await started;
    await page.getByRole("button", { name: "Cancel" }).click();
    await page.waitForSelector("[data-testid=upload-panel][data-state=canceled]");
    const status = await fetch(`${baseUrl()}/api/uploads/${uploadId}`, {
      headers: { Cookie: `sw_session=${user.sessionToken}` },
    });
    expect(await status.json()).toMatchObject({ status: "aborted", received: [], thumb: false });
    expect(await page.getByTestId("photo-card").count()).toBe(0);
    page.assertClean();
  });

  it("has no upload button without credits", async () => {
    const user = await createUser({ credits: 0 });
    const page = await dashboard(user, "/dashboard?upload=1");
    expect(await page.getByRole("link", { name: /Upload Photo/ }).count()).toBe(0);
    expect(await page.getByTestId("upload-panel").count()).toBe(0);
    await page.getByRole("heading", { name: "No Active Plan" }).waitFor();
    page.assertClean();
  });
});

describe("organising the library", () => {
  it("creates a folder, moves a photo in, deletes the folder and finds the photo under Unassigned Photos", async () => {
    const user = await createUser({ credits: 1 });
    await seedPhotos(session(user), 2, "Kitchen");
    const page = await dashboard(user);

    const folderLink = await createFolder(page, "12 Elm Street");

    await page.getByLabel("Move Kitchen 1 to").selectOption({ label: "12 Elm Street" });
    await folderLink.click();
    await page.getByRole("heading", { level: 1, name: "12 Elm Street" }).waitFor();
    await page.getByTestId("photo-name").first().waitFor();
    expect(await gridNames(page)).toEqual(["Kitchen 1"]);

    // Only what is shown is the current page, for a screen reader too: the folder, none of the views.
    const current = () => page.locator('#library-folders [aria-current="page"]');
    expect(await current().allTextContents()).toEqual(["12 Elm Street"]);
    await page.getByRole("link", { name: "Unassigned Photos" }).click();
    await page.getByRole("heading", { level: 1, name: "Unassigned Photos" }).waitFor();
    expect(await gridNames(page)).toEqual(["Kitchen 2"]);
    expect(await current().allTextContents()).toEqual(["Unassigned Photos"]);

    await page.getByRole("button", { name: "Delete folder 12 Elm Street" }).click();
    await folderLink.waitFor({ state: "detached" });
    await page.getByTestId("photo-name").filter({ hasText: "Kitchen 1" }).waitFor();
    expect(await gridNames(page)).toEqual(["Kitchen 2", "Kitchen 1"]);
    page.assertClean();
  });

  it("deletes a photo to the Trash, restores it, deletes it again and empties the Trash", async () => {
    const user = await createUser({ credits: 1 });
    await seedPhotos(session(user), 2, "Bath");
    const page = await dashboard(user);
    page.on("dialog", (d) => void d.accept());

    await page.getByRole("button", { name: "Delete Bath 1" }).click();
    await page.getByTestId("photo-name").filter({ hasText: "Bath 1" }).waitFor({ state: "detached" });
    await page.getByRole("link", { name: "Trash" }).click();
    await page.getByRole("heading", { level: 1, name: "Trash" }).waitFor();
    // The card hides as soon as the delete is sent; the Trash may be read before the server has answered, and shows
    // the photo when the page reloads its data. Wait for it, as the steps below do.
    await page.getByTestId("photo-name").filter({ hasText: "Bath 1" }).waitFor();
    expect(await gridNames(page)).toEqual(["Bath 1"]);

    await page.getByRole("button", { name: "Restore Bath 1" }).click();
    await page.getByTestId("grid-empty").waitFor();
    await page.getByRole("link", { name: "All Photos" }).click();
    await page.getByTestId("photo-name").filter({ hasText: "Bath 1" }).waitFor();
    expect(await gridNames(page)).toEqual(["Bath 2", "Bath 1"]);

    await page.getByRole("button", { name: "Delete Bath 2" }).click();
    await page.getByTestId("photo-name").filter({ hasText: "Bath 2" }).waitFor({ state: "detached" });
    await page.getByRole("link", { name: "Trash" }).click();
    await page.getByTestId("photo-name").filter({ hasText: "Bath 2" }).waitFor();
    await page.getByRole("button", { name: "Empty Trash" }).click();
    await page.getByTestId("grid-empty").waitFor();
    expect(await page.getByTestId("action-message").textContent()).toBe("1 photo deleted for good.");

    await page.reload();
    expect(await page.getByTestId("grid-empty").textContent()).toContain("The trash is empty");
    page.assertClean();
  });

  it("shows a photo in the Trash when the Trash is opened while its delete is on the way", async () => {
    const user = await createUser({ credits: 1 });
    await seedPhotos(session(user), 2, "Loft");
    const page = await dashboard(user);
    page.on("dialog", (d) => void d.accept());

    // The server has the delete, and its answer is slow to come back (a phone on one bar): the agent opens the Trash
    // meanwhile, whose own load already finds the photo there.
    const held: (() => void)[] = [];
    await page.route("**/dashboard.data*", async (route) => {
      if (route.request().method() !== "POST") return route.continue();
      const answer = await route.fetch();
      await new Promise<void>((resume) => held.push(resume));
      await route.fulfill({ response: answer }).catch(() => {});
    });

    await page.getByRole("button", { name: "Delete Loft 1" }).click();
    await expect.poll(() => held.length).toBe(1);
    await page.getByRole("link", { name: "Trash" }).click();
    await page.getByRole("heading", { level: 1, name: "Trash" }).waitFor();
    await page.getByTestId("photo-name").filter({ hasText: "Loft 1" }).waitFor({ timeout: 10_000 });
    for (const resume of held) resume();
    // Still shown once the delete's answer is back and the page has reloaded its data.
    await page.waitForLoadState("networkidle");
    expect(await gridNames(page)).toEqual(["Loft 1"]);
    page.assertClean();
  });

  it("creates a folder without JavaScript", async () => {
    const user = await createUser({ credits: 1 });
    const ctx = await signedInContext(b, user, { javaScriptEnabled: false });
    const page = await b.newPage(ctx);
    await page.goto("/dashboard");
    await createFolder(page, "Open house");
    expect(await page.getByTestId("action-message").textContent()).toBe('Folder "Open house" created.');
  });
});

describe("the grid's one form (docs/decisions/0332-one-form-for-the-grid.md)", () => {
  it("moves a photo into a folder and deletes another from the grid without JavaScript", async () => {
    const user = await createUser({ credits: 1 });
    await seedPhotos(session(user), 2, "Porch");
    const page = await b.newPage(await signedInContext(b, user, { javaScriptEnabled: false }));
    await page.goto("/dashboard");
    await createFolder(page, "Open house");

    // Each card's choice is posted with the form; the Move button says which card's counts.
    await page.getByLabel("Move Porch 1 to").selectOption({ label: "Open house" });
    await page.getByLabel("Move Porch 2 to").selectOption({ label: "Open house" });
    await page.getByTestId("photo-card").filter({ hasText: "Porch 1" }).getByRole("button", { name: "Move" }).click();
    expect(await page.getByTestId("action-message").textContent()).toBe("Photo moved.");
    await page.getByRole("link", { name: "Open house" }).click();
    await page.getByRole("heading", { level: 1, name: "Open house" }).waitFor();
    expect(await gridNames(page)).toEqual(["Porch 1"]);

    await page.getByRole("link", { name: "All Photos" }).click();
    await page.getByRole("button", { name: "Delete Porch 2" }).click();
    expect(await page.getByTestId("action-message").textContent()).toBe("Photo moved to the trash.");
    expect(await gridNames(page)).toEqual(["Porch 1"]);
    await page.getByRole("link", { name: "Trash" }).click();
    await page.getByRole("heading", { level: 1, name: "Trash" }).waitFor();
    expect(await gridNames(page)).toEqual(["Porch 2"]);
  });

  it("asks on the card before trashing a photo whose page advertises a listing, and trashes it when told to", async () => {
    const user = await createUser({ credits: 3 });
    const call = api(user);
    const photoId = await upload(call, makeJpeg(640, 480, 85, 24, 7), "Garden.jpg");
    const versionId = await stage(call, photoId);
    await folderWith(call, "12 Oak Lane", [photoId]);
    const published = (await call(
      "POST",
      `/api/photos/${photoId}/versions/${versionId}/labelled`,
      new URLSearchParams({ publish: "first" }),
      true,
    )) as Response;
    expect(published.status).toBe(200);
    const page = await dashboard(user);

    await page.getByRole("button", { name: "Delete Garden" }).click();
    const card = page.getByTestId("photo-card").filter({ hasText: "Garden" });
    await card.getByTestId("action-message").waitFor();
    expect(await card.getByTestId("action-message").textContent()).toContain("10140.8");
    await card.getByRole("button", { name: "Move to the trash anyway" }).click();
    await card.waitFor({ state: "detached" });
    await page.getByRole("link", { name: "Trash" }).click();
    await page.getByRole("heading", { level: 1, name: "Trash" }).waitFor();
    await page.getByTestId("photo-name").filter({ hasText: "Garden" }).waitFor();
    // The first request's answer is the 409 that asks.
    page.assertClean([/status of 409 \(Conflict\)/]);
  });
});

describe("viewing and downloading", () => {
  it("shows Download and Delete on hover with a mouse and at all times on a touch screen", async () => {
    const user = await createUser({ credits: 1 });
    await seedPhotos(session(user), 1, "Den");
    const opacity = (page: Page) =>
      page
        .getByTestId("photo-actions")
        .first()
        .evaluate((el) => Number(getComputedStyle(el).opacity));

    const desk = await dashboard(user);
    expect(await opacity(desk)).toBe(0);
    await desk.getByTestId("photo-card").first().hover();
    expect(await opacity(desk)).toBe(1);

    const phone = await dashboard(user, "/dashboard", phoneContext({ width: 390, height: 844 }));
    expect(await opacity(phone)).toBe(1);
    expect(await phone.getByRole("button", { name: "Delete Den 1" }).isVisible()).toBe(true);

    const [download] = await Promise.all([
      desk.waitForEvent("download"),
      desk.getByRole("link", { name: "Download Den 1" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("Den 1.jpg");
    desk.assertClean();
    phone.assertClean();
  });

  it("answers 404 for another user's photo and folder", async () => {
    const owner = await createUser({ credits: 1 });
    const [photoId] = await seedPhotos(session(owner), 1);
    const stranger = await createUser({ credits: 1 });
    const page = await dashboard(stranger);
    for (const path of ["thumb", "original", "download"]) {
      const res = await page.request.get(`/api/photos/${photoId}/${path}`);
      expect(res.status()).toBe(404);
    }
    const ownerPage = await dashboard(owner);
    await ownerPage.getByText("Create Folder").click();
    await ownerPage.getByRole("button", { name: "Create", exact: true }).click();
    const href = await ownerPage.getByRole("link", { name: "New Folder" }).getAttribute("href");
    const res = await page.goto(href!);
    expect(res?.status()).toBe(404);
  });

  /** PAGE_SIZE of app/shared/upload-rules.ts (the Node side cannot import the app's modules). */
  const PAGE_SIZE = 24;
  it(`shows ${PAGE_SIZE} photos, then the rest with Load more; signed-out visitors go to /login`, async () => {
    const user = await createUser({ credits: 1 });
    const total = 2 * PAGE_SIZE + 3;
    await seedPhotos(session(user), total, "Unit");
    const page = await dashboard(user);
    expect(await page.getByTestId("photo-card").count()).toBe(PAGE_SIZE);
    await page.getByRole("link", { name: "Load more" }).click();
    // The next page is a navigation of its own: on a loaded two-core machine it can take longer than the default 5 s.
    await expect.poll(() => page.getByTestId("photo-card").count(), { timeout: 30_000 }).toBe(2 * PAGE_SIZE);
    await page.getByRole("link", { name: "Load more" }).click();
    await page
      .getByTestId("photo-name")
      .filter({ hasText: /^Unit 1$/ })
      .waitFor();
    expect(await page.getByTestId("photo-card").count()).toBe(total);
    expect(await page.getByRole("link", { name: "Load more" }).count()).toBe(0);
    expect(page.url()).toBe(`${baseUrl()}/dashboard`);
    page.assertClean();

    const anonymous = await fetch(`${baseUrl()}/dashboard`, { redirect: "manual" });
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get("Location")).toBe("/login?redirectTo=%2Fdashboard");
  });

  it("loads only thumbnails for a grid of 50 photos, each well under 100 KB", async () => {
    const user = await createUser({ credits: 1 });
    await seedPhotos(session(user), 50);
    const grid = await measureGridBytes(b.browser, session(user));
    console.log("grid of 50 photos:", JSON.stringify(grid));
    expect(grid.photosShown).toBe(50);
    expect(grid.originalRequests).toBe(0);
    expect(grid.imageRequests).toBeGreaterThanOrEqual(50);
    expect(grid.largestImageBytes).toBeLessThan(100 * 1024);
  });

  it("sends fewer bytes than the file for a large phone photo (downscaled to 2560 px)", async () => {
    const user = await createUser({ credits: 1 });
    const file = makeJpeg(4032, 3024, 90, 30, 9);
    const sent = await measureUploadBytes(b.browser, session(user), {
      name: "Phone photo.jpg",
      mimeType: "image/jpeg",
      buffer: Buffer.from(file),
    });
    console.log(`upload of a ${file.byteLength} byte 12 MP JPEG:`, JSON.stringify(sent));
    expect(sent.photoBytes).toBeGreaterThan(0);
    expect(sent.photoBytes).toBeLessThan(file.byteLength);
    expect(sent.thumbBytes).toBeLessThan(100 * 1024);
    expect(sent.sentTotalBytes).toBeGreaterThan(sent.photoBytes);
  });
});
