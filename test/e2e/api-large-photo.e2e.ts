import { describe, expect, it } from "vitest";
import { readImageInfo } from "../../app/shared/image-format.ts";
import { makeJpeg, solidJpeg } from "../fixtures/images.ts";
import { baseUrl, createUser, type OpenBrowser, openBrowser, signedInContext } from "./browser.ts";

// A 24-megapixel photo through the public API on the running stack (issue 45, part 4;
// docs/decisions/0210-api-photos-never-decoded-here.md): accepted, thumbnailed by the Images binding (locally
// miniflare's stand-in), shown in the library at 400 px; one pixel past the limit refused with its message and
// nothing stored. Before, the Worker decoded it with jpeg-js and refused it as unreadable.

/** MAX_PHOTO_EDGE of app/shared/upload-rules.ts (the Node side cannot import the app's modules that import others). */
const MAX_PHOTO_EDGE = 10_000;
/** The start of UPLOAD_MESSAGES.tooManyPixels, the words the integrator reads. */
const SIZE_MESSAGE = "This photo is too large in pixels (at most 10,000 px a side and 24 megapixels).";

async function upload(apiKey: string, bytes: Uint8Array, name: string) {
  const fd = new FormData();
  fd.set("file", new Blob([bytes as Uint8Array<ArrayBuffer>], { type: "image/jpeg" }), name);
  const res = await fetch(`${baseUrl()}/api/v1/photos`, {
    method: "POST",
    headers: { Authorization: `Bearer ${apiKey}` },
    body: fd,
  });
  // biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
  return { status: res.status, body: (await res.json()) as any };
}

describe("a 24-megapixel photo through POST /api/v1/photos", () => {
  it("is stored, thumbnailed at 400 px and shown in the library; one pixel past the limit is refused", {
    timeout: 120_000,
  }, async () => {
    const user = await createUser({ credits: 1, apiKey: true });
    // A photo-like JPEG (a gradient with noise, 2.3 MB), decoded in full by the binding, not by the Worker.
    const photo = makeJpeg(6000, 4000, 80, 12);
    const res = await upload(user.apiKey!, photo, "Whole floor.jpg");
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.photo).toMatchObject({ name: "Whole floor", width: 6000, height: 4000, bytes: photo.byteLength });
    const id: string = res.body.photo.id;
    const cookie = { Cookie: `sw_session=${user.sessionToken}` };
    const thumb = await fetch(`${baseUrl()}/api/photos/${id}/thumb`, { headers: cookie });
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get("Content-Type")).toBe("image/jpeg");
    const thumbBytes = new Uint8Array(await thumb.arrayBuffer());
    expect(readImageInfo(thumbBytes)).toEqual({ type: "image/jpeg", width: 400, height: 267 });
    expect(thumbBytes.byteLength).toBeLessThan(100 * 1024);
    const original = await fetch(`${baseUrl()}/api/photos/${id}/original`, { headers: cookie });
    expect(new Uint8Array(await original.arrayBuffer())).toEqual(photo);

    // The library shows it from its thumbnail.
    const b: OpenBrowser = await openBrowser();
    try {
      const page = await b.newPage(await signedInContext(b, user));
      await page.goto("/dashboard");
      const img = page.locator(`img[src*="/api/photos/${id}/thumb"]`).first();
      await img.waitFor();
      await expect
        .poll(() => img.evaluate((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth), {
          timeout: 20_000,
        })
        .toBe(400);
    } finally {
      await b.close();
    }

    // Past the limit: 5114 x 4693 is the smallest area over 24,000,000 px, then one pixel past the side.
    for (const [width, height] of [
      [5114, 4693],
      [MAX_PHOTO_EDGE + 1, 2399],
    ] as const) {
      const over = await upload(user.apiKey!, solidJpeg(width, height), "too-big.jpg");
      expect(over.status, `${width} x ${height}`).toBe(413);
      expect(over.body).toMatchObject({ ok: false, code: "too_large", error: expect.stringContaining(SIZE_MESSAGE) });
    }
    const list = (await (await fetch(`${baseUrl()}/api/photos`, { headers: cookie })).json()) as {
      photos: { id: string }[];
    };
    expect(list.photos.map((p) => p.id)).toEqual([id]);
    expect((await fetch(`${baseUrl()}/api/health`)).status).toBe(200);
  });
});
