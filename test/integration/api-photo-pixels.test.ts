import { env } from "cloudflare:workers";
import { photos } from "@db/schema";
import { makePng, solidJpeg } from "@test/fixtures/images";
import { db, makeUser } from "@test/support/factories";
import { storedKeys } from "@test/support/photos";
import { workerFetch } from "@test/support/worker";
import { createApiKey } from "@workers/services/api-keys";
import { eq } from "drizzle-orm";
import jpeg from "jpeg-js";
import { describe, expect, it, vi } from "vitest";
import { readImageInfo } from "~/shared/image-format";
import { MAX_PHOTO_EDGE, MAX_PHOTO_PIXELS, UPLOAD_MESSAGES } from "~/shared/upload-rules";

// Photos sent through the public API up to the product's own pixel limit (issue 45, part 4;
// docs/decisions/0210-api-photos-never-decoded-here.md): described from their header and thumbnailed by the Images
// binding, never decoded by jpeg-js on the request. A 24-megapixel photo used to be refused as unreadable (jpeg-js
// ran out of its 256 MB) after growing the runtime by hundreds of MB; in production a Worker has 128 MB.

async function keyFor(userId: string): Promise<string> {
  const made = await createApiKey({ db, env, clock: () => Date.now() }, userId, {
    name: "pixels",
    scopes: ["stage", "read"],
  });
  if (!made.ok) throw new Error(made.error);
  return made.token;
}

async function upload(token: string, bytes: Uint8Array, name: string, type = "image/jpeg") {
  const fd = new FormData();
  fd.set("file", new File([bytes as Uint8Array<ArrayBuffer>], name, { type }));
  const res = await workerFetch("/api/v1/photos", {
    method: "POST",
    headers: { Authorization: `Bearer ${token}` },
    body: fd,
  });
  // biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
  return { status: res.status, body: (await res.json()) as any };
}

async function storedThumb(userId: string, photoId: string) {
  const obj = await env.PHOTOS.get(`photos/${userId}/${photoId}/thumb`);
  if (!obj) throw new Error("no thumbnail stored");
  const bytes = new Uint8Array(await obj.arrayBuffer());
  return { bytes, type: obj.httpMetadata?.contentType, info: readImageInfo(bytes), meta: obj.customMetadata };
}

describe("POST /api/v1/photos at the pixel limit", () => {
  it("accepts a 24-megapixel JPEG and a 10,000 px side, thumbnailed by the binding, jpeg-js never decoding", async () => {
    const user = await makeUser();
    const token = await keyFor(user.id);
    const decode = vi.spyOn(jpeg, "decode");
    try {
      for (const [width, height, thumb] of [
        [6000, 4000, [400, 267]],
        [MAX_PHOTO_EDGE, MAX_PHOTO_PIXELS / MAX_PHOTO_EDGE, [400, 96]],
      ] as const) {
        expect(width * height).toBe(MAX_PHOTO_PIXELS);
        const res = await upload(token, solidJpeg(width, height), `${width}x${height}.jpg`);
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        expect(res.body.photo).toMatchObject({ contentType: "image/jpeg", width, height });
        const row = await db.select().from(photos).where(eq(photos.id, res.body.photo.id)).get();
        expect([row!.width, row!.height, row!.thumbWidth, row!.thumbHeight]).toEqual([width, height, ...thumb]);
        const stored = await storedThumb(user.id, res.body.photo.id);
        expect(stored.type).toBe("image/jpeg");
        expect(stored.info).toEqual({ type: "image/jpeg", width: thumb[0], height: thumb[1] });
        expect(stored.meta).toEqual({ width: String(thumb[0]), height: String(thumb[1]) });
        expect(stored.bytes.byteLength).toBeLessThan(100 * 1024);
      }
      expect(decode).not.toHaveBeenCalled();
    } finally {
      decode.mockRestore();
    }
  });

  it("refuses a photo one pixel past the limit, or one pixel past a side, with 413 and the size message", async () => {
    const user = await makeUser();
    const token = await keyFor(user.id);
    // 24,000,001 has no shape within 10,000 px a side: 24,000,002 = 5114 x 4693 is the smallest area over the limit.
    const cases = [
      [5114, 4693],
      [MAX_PHOTO_EDGE + 1, 2399],
      [2399, MAX_PHOTO_EDGE + 1],
    ] as const;
    for (const [width, height] of cases) {
      const res = await upload(token, solidJpeg(width, height), "too-big.jpg");
      expect(res.status, `${width} x ${height}`).toBe(413);
      expect(res.body).toMatchObject({ ok: false, code: "too_large", error: UPLOAD_MESSAGES.tooManyPixels });
    }
    expect(await db.select().from(photos).where(eq(photos.userId, user.id)).all()).toEqual([]);
    expect(await storedKeys(user.id)).toEqual([]);
  });

  it("thumbnails a PNG too (its thumbnail used to be the whole photo) and refuses bytes the binding cannot read", async () => {
    const user = await makeUser();
    const token = await keyFor(user.id);
    const png = await upload(token, makePng(800, 600), "plan.png", "image/png");
    expect(png.status).toBe(201);
    const thumb = await storedThumb(user.id, png.body.photo.id);
    expect(thumb.type).toBe("image/jpeg");
    expect(thumb.info).toEqual({ type: "image/jpeg", width: 400, height: 300 });
    // A whole JPEG (start, frame header, end) whose scan is noise: its header passes, the binding cannot decode it.
    const good = solidJpeg(640, 480);
    const broken = good.slice();
    const sos = broken.findIndex((b, i) => b === 0xff && broken[i + 1] === 0xda);
    broken.fill(0x5a, sos + 14, broken.length - 2);
    const res = await upload(token, broken, "broken.jpg");
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ ok: false, code: "invalid", error: UPLOAD_MESSAGES.unreadable });
    expect(await db.select().from(photos).where(eq(photos.userId, user.id)).all()).toHaveLength(1);
    expect(await storedKeys(user.id)).toHaveLength(2);
  });
});
