import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { makeJpeg } from "../../fixtures/images.ts";

/**
 * A real room (766 x 512, from the structure check's labelled set, test/fixtures/structure/README.md): every job
 * checks its result against its room (docs/decisions/0162), and a synthetic gradient with noise has no walls or
 * windows to keep, so the check would judge noise and refuse or retry at random.
 */
export const ROOM_PHOTO: Uint8Array<ArrayBuffer> = new Uint8Array(
  readFileSync(join(import.meta.dirname, "../../fixtures/structure/photos/living-room.jpg")),
);

// Byte counts for the photo library, for `npm run bench` and the e2e suite:
// what an upload actually sends for a given file (after the browser's
// downscale), and what the grid loads for a library of N photos. Both drive
// the real UI in Chromium against a running stack and read Chromium's own
// request sizes.

export interface LibrarySession {
  baseUrl: string;
  /** A session token from POST /api/dev/users (the sw_session cookie). */
  sessionToken: string;
}

async function signedInPage(browser: Browser, s: LibrarySession, path: string): Promise<Page> {
  const ctx = await browser.newContext({ baseURL: s.baseUrl, viewport: { width: 1280, height: 900 } });
  await ctx.addCookies([{ name: "sw_session", value: s.sessionToken, url: s.baseUrl }]);
  const page = await ctx.newPage();
  await page.goto(path);
  await page.waitForSelector("html[data-hydrated=true]");
  return page;
}

export interface UploadBytes {
  fileBytes: number;
  /** Request bodies sent to /api/uploads (declaration, thumbnail, chunks, completion). */
  sentBodyBytes: number;
  /** The same plus request headers: what left the phone. */
  sentTotalBytes: number;
  photoBytes: number;
  thumbBytes: number;
  requests: number;
}

/** Uploads `file` through the dashboard's upload panel and counts the bytes the browser sent. */
export async function measureUploadBytes(
  browser: Browser,
  s: LibrarySession,
  file: { name: string; mimeType: string; buffer: Buffer },
): Promise<UploadBytes> {
  const page = await signedInPage(browser, s, "/dashboard?upload=1");
  const finished: Promise<void>[] = [];
  const totals = { body: 0, headers: 0, photo: 0, thumb: 0, requests: 0 };
  page.on("requestfinished", (req) => {
    if (!new URL(req.url()).pathname.startsWith("/api/uploads")) return;
    finished.push(
      Promise.all([req.sizes(), req.allHeaders()]).then(([sizes, headers]) => {
        // Chromium reports no body size for Blob bodies; their Content-Length is exact.
        const body = Math.max(sizes.requestBodySize, Number(headers["content-length"] ?? 0));
        totals.requests++;
        totals.body += body;
        totals.headers += sizes.requestHeadersSize;
        if (/\/chunks\/\d+$/.test(req.url())) totals.photo += body;
        if (req.url().endsWith("/thumb")) totals.thumb += body;
      }),
    );
  });
  await page.getByTestId("upload-input").setInputFiles(file);
  await page.waitForSelector("[data-testid=upload-panel][data-state=success]", { timeout: 120_000 });
  await Promise.all(finished);
  await page.context().close();
  return {
    fileBytes: file.buffer.byteLength,
    sentBodyBytes: totals.body,
    sentTotalBytes: totals.body + totals.headers,
    photoBytes: totals.photo,
    thumbBytes: totals.thumb,
    requests: totals.requests,
  };
}

/**
 * Adds `count` photos to a library through the upload API directly (no
 * browser): a real room photo (ROOM_PHOTO) by default and a 400 x 300 JPEG
 * thumbnail, as the browser would make them. Returns the photo ids, newest last.
 */
export async function seedPhotos(
  s: LibrarySession,
  count: number,
  namePrefix = "Room",
  photo: Uint8Array<ArrayBuffer> = ROOM_PHOTO,
): Promise<string[]> {
  const headers = { Cookie: `sw_session=${s.sessionToken}` };
  const ids: string[] = [];
  const thumb = makeJpeg(400, 300, 72, 30, 2);
  for (let i = 0; i < count; i++) {
    const created = await fetch(`${s.baseUrl}/api/uploads`, {
      method: "POST",
      headers: { ...headers, "Content-Type": "application/json" },
      body: JSON.stringify({ name: `${namePrefix} ${i + 1}.jpg`, size: photo.byteLength, type: "image/jpeg" }),
    });
    if (created.status !== 201) throw new Error(`seedPhotos: create answered ${created.status}`);
    const { id, chunkSize } = (await created.json()) as { id: string; chunkSize: number };
    await fetch(`${s.baseUrl}/api/uploads/${id}/thumb`, { method: "PUT", headers, body: thumb });
    for (let c = 0; c * chunkSize < photo.byteLength; c++) {
      const body = photo.subarray(c * chunkSize, (c + 1) * chunkSize);
      const res = await fetch(`${s.baseUrl}/api/uploads/${id}/chunks/${c}`, { method: "PUT", headers, body });
      if (res.status !== 200) throw new Error(`seedPhotos: chunk answered ${res.status}`);
    }
    const done = await fetch(`${s.baseUrl}/api/uploads/${id}/complete`, { method: "POST", headers });
    if (done.status !== 201) throw new Error(`seedPhotos: complete answered ${done.status}`);
    ids.push(((await done.json()) as { photo: { id: string } }).photo.id);
  }
  return ids;
}

export interface GridBytes {
  photosShown: number;
  imageRequests: number;
  /** Response bodies of every image the page loaded. */
  imageBytes: number;
  largestImageBytes: number;
  /** Requests for full-size originals or downloads: the grid must make none. */
  originalRequests: number;
  /** Everything the page loaded (document, scripts, styles, data, images). */
  totalBytes: number;
}

/** Opens /dashboard, scrolls to the end of the first page so every lazy thumbnail loads, and counts the bytes. */
export async function measureGridBytes(browser: Browser, s: LibrarySession): Promise<GridBytes> {
  const ctx = await browser.newContext({ baseURL: s.baseUrl, viewport: { width: 1280, height: 900 } });
  await ctx.addCookies([{ name: "sw_session", value: s.sessionToken, url: s.baseUrl }]);
  const page = await ctx.newPage();
  const sizes: Promise<{ url: string; image: boolean; body: number; headers: number }>[] = [];
  page.on("requestfinished", (req) => {
    sizes.push(
      req.sizes().then((z) => ({
        url: req.url(),
        image: req.resourceType() === "image",
        body: z.responseBodySize,
        headers: z.responseHeadersSize,
      })),
    );
  });
  await page.goto("/dashboard");
  await page.waitForSelector("html[data-hydrated=true]");
  // Every page of the library, as a person scrolling through it would load them.
  const more = page.getByRole("link", { name: "Load more" });
  for (let pages = 1; (await more.count()) > 0; pages++) {
    if (pages > 50) throw new Error("Load more never ran out");
    const before = await page.getByTestId("photo-card").count();
    await more.click();
    await page.waitForFunction((n) => document.querySelectorAll("[data-testid=photo-card]").length > n, before);
    // The next page's cards can show before its own "Load more" link: asked too soon, the loop would stop a page
    // early on a loaded machine.
    await page.waitForLoadState("networkidle");
  }
  const photosShown = await page.getByTestId("photo-card").count();
  // Bring every card into view so each lazy thumbnail loads, then wait for all of them.
  await page.evaluate(async () => {
    for (const el of Array.from(document.querySelectorAll("[data-testid=photo-card]"))) {
      el.scrollIntoView();
      await new Promise((r) => requestAnimationFrame(r));
    }
  });
  await page.waitForFunction(() =>
    Array.from(document.querySelectorAll<HTMLImageElement>("[data-testid=photo-card] img")).every(
      (img) => img.complete && img.naturalWidth > 0,
    ),
  );
  await page.waitForLoadState("networkidle");
  const all = await Promise.all(sizes);
  await ctx.close();
  const images = all.filter((r) => r.image);
  return {
    photosShown,
    imageRequests: images.length,
    imageBytes: images.reduce((n, r) => n + r.body, 0),
    largestImageBytes: Math.max(0, ...images.map((r) => r.body)),
    originalRequests: all.filter((r) => /\/api\/photos\/[^/]+\/(original|download)/.test(r.url)).length,
    totalBytes: all.reduce((n, r) => n + r.body + r.headers, 0),
  };
}

/** A 12 MP (4032 x 3024) JPEG of about 9.6 MB, like a phone camera's: the bench's upload input. */
export function phoneSizedJpeg(): Uint8Array<ArrayBuffer> {
  return makeJpeg(4032, 3024, 98, 60, 9);
}
