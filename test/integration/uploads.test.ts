import { env } from "cloudflare:workers";
import { photos, uploadSessions } from "@db/schema";
import { claimJpeg, claimPng, makeJpeg, makePng } from "@test/fixtures/images";
import { db, signedIn } from "@test/support/factories";
import { photoRows, storedKeys, uploadClient, uploadWhole } from "@test/support/photos";
import { workerFetch } from "@test/support/worker";
import { completeUpload } from "@workers/services/upload-complete";
import { putChunk, putThumb } from "@workers/services/uploads";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { CHUNK_SIZE, MAX_UPLOAD_BYTES, UPLOAD_MESSAGES } from "~/shared/upload-rules";

// These move megabytes through workerd; on a busy 2-core machine that can pass the 5 s default.
vi.setConfig({ testTimeout: 20_000 });

// A JPEG of about 600 KB: three chunks.
const BIG_JPEG = makeJpeg(1200, 900, 95, 60, 7);
const THUMB = makeJpeg(400, 300, 70, 10, 3);

/** Proves a refusal left nothing behind: no R2 object under the user's prefix and no photo row. */
async function expectNothingStored(userId: string) {
  expect(await storedKeys(userId)).toEqual([]);
  expect(await photoRows(userId)).toBe(0);
}

/** A signed-in user's upload of BIG_JPEG with its thumbnail and every part sent, ready to complete. */
async function readyToComplete() {
  const user = await signedIn();
  const api = uploadClient(user.cookie);
  const id = (await api.create({ size: BIG_JPEG.byteLength, type: "image/jpeg" })).body.id as string;
  await api.thumb(id, THUMB);
  for (let i = 0; i * CHUNK_SIZE < BIG_JPEG.byteLength; i++) {
    await api.chunk(id, i, BIG_JPEG.subarray(i * CHUNK_SIZE, (i + 1) * CHUNK_SIZE));
  }
  return { user, api, id, deps: { db, bucket: env.PHOTOS } };
}

describe("uploading a photo", () => {
  it("stores a real JPEG sent in chunks, then serves its thumbnail and download from our origin", async () => {
    expect(BIG_JPEG.byteLength).toBeGreaterThan(2 * CHUNK_SIZE);
    const user = await signedIn();
    const res = await uploadWhole(user.cookie, BIG_JPEG, { name: "Living room.jpg", thumb: THUMB });
    expect(res.status).toBe(201);
    const photo = res.body.photo as { id: string; name: string; thumbWidth: number; thumbUrl: string };
    expect(photo).toMatchObject({ name: "Living room", thumbWidth: 400, thumbHeight: 300 });

    const row = await db.select().from(photos).where(eq(photos.id, photo.id)).get();
    expect(row).toMatchObject({ userId: user.id, width: 1200, height: 900, bytes: BIG_JPEG.byteLength });
    // The chunks are gone; the original and the thumbnail stay under photos/{userId}/.
    expect((await storedKeys(user.id)).sort()).toEqual([
      `photos/${user.id}/${photo.id}/original`,
      `photos/${user.id}/${photo.id}/thumb`,
    ]);
    const stored = await env.PHOTOS.get(`photos/${user.id}/${photo.id}/original`);
    expect(new Uint8Array(await stored!.arrayBuffer())).toEqual(BIG_JPEG);

    const thumb = await workerFetch(photo.thumbUrl, { headers: { Cookie: user.cookie } });
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get("Content-Type")).toBe("image/jpeg");
    expect(thumb.headers.get("Cache-Control")).toBe("private, max-age=31536000, immutable");
    expect((await thumb.arrayBuffer()).byteLength).toBe(THUMB.byteLength);

    const download = await workerFetch(`/api/photos/${photo.id}/download`, { headers: { Cookie: user.cookie } });
    expect(download.status).toBe(200);
    expect(download.headers.get("Content-Disposition")).toBe(
      `attachment; filename="Living room.jpg"; filename*=UTF-8''Living%20room.jpg`,
    );
    expect(download.headers.get("Cache-Control")).toContain("private");
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(BIG_JPEG);

    const again = await workerFetch(photo.thumbUrl, {
      headers: { Cookie: user.cookie, "If-None-Match": thumb.headers.get("ETag")! },
    });
    expect(again.status).toBe(304);
    // Malformed conditions are ignored, never a 500 (R2 throws on an entity-tag list it cannot parse); a write's
    // conditions are not asked of a read.
    for (const [path, header, value] of [
      [photo.thumbUrl, "If-None-Match", "abc"],
      [photo.thumbUrl, "If-None-Match", '"unclosed'],
      [`/api/photos/${photo.id}/original`, "If-Match", '"x'],
      [`/api/photos/${photo.id}/download`, "If-Modified-Since", "yesterday-ish"],
      [`/api/photos/${photo.id}/original`, "If-Unmodified-Since", "Thu, 01 Jan 1970 00:00:00 GMT"],
    ] as const) {
      const odd = await workerFetch(path, { headers: { Cookie: user.cookie, [header]: value } });
      expect(odd.status, `${header}: ${value}`).toBe(200);
      await odd.arrayBuffer();
    }
    const since = await workerFetch(photo.thumbUrl, {
      headers: { Cookie: user.cookie, "If-Modified-Since": new Date(Date.now() + 60_000).toUTCString() },
    });
    expect(since.status).toBe(304);
  });

  it("stores a real PNG in one chunk", async () => {
    const user = await signedIn();
    const png = makePng(120, 80);
    const res = await uploadWhole(user.cookie, png, { type: "image/png", name: "plan.png" });
    expect(res.status).toBe(201);
    const id = (res.body.photo as { id: string }).id;
    const row = await db.select().from(photos).where(eq(photos.id, id)).get();
    expect(row).toMatchObject({ contentType: "image/png", width: 120, height: 80 });
    const original = await workerFetch(`/api/photos/${id}/original`, { headers: { Cookie: user.cookie } });
    expect(original.headers.get("Content-Type")).toBe("image/png");
    expect(original.headers.get("Content-Disposition")).toContain('inline; filename="plan.png"');
  });

  it("resumes: status lists the stored chunks and only the missing ones are sent again", async () => {
    const user = await signedIn();
    const api = uploadClient(user.cookie);
    const created = await api.create({ size: BIG_JPEG.byteLength, type: "image/jpeg" });
    const id = created.body.id as string;
    const count = created.body.chunkCount as number;
    expect(count).toBe(Math.ceil(BIG_JPEG.byteLength / CHUNK_SIZE));
    const part = (i: number) => BIG_JPEG.subarray(i * CHUNK_SIZE, (i + 1) * CHUNK_SIZE);
    expect((await api.chunk(id, 0, part(0))).status).toBe(200);
    expect((await api.chunk(id, 2, part(2))).status).toBe(200);
    // Sending a chunk twice (a retry after a lost answer) is harmless.
    expect((await api.chunk(id, 2, part(2))).status).toBe(200);

    const status = await api.status(id);
    expect(status.body).toMatchObject({ status: "open", received: [0, 2], thumb: false, chunkCount: count });
    const early = await api.complete(id);
    expect(early.status).toBe(409);
    expect(early.body.missing).toEqual([1]);

    await api.chunk(id, 1, part(1));
    await api.thumb(id, THUMB);
    const done = await api.complete(id);
    expect(done.status).toBe(201);
    // A retried completion whose answer was lost gets the same photo, not a second one.
    const retried = await api.complete(id);
    expect(retried.status).toBe(201);
    expect(retried.body.photo).toEqual(done.body.photo);
    expect(await photoRows(user.id)).toBe(1);
  });

  it("cancelling deletes every stored byte", async () => {
    const user = await signedIn();
    const api = uploadClient(user.cookie);
    const id = (await api.create({ size: BIG_JPEG.byteLength, type: "image/jpeg" })).body.id as string;
    await api.chunk(id, 0, BIG_JPEG.subarray(0, CHUNK_SIZE));
    await api.thumb(id, THUMB);
    expect((await storedKeys(user.id)).length).toBe(2);
    expect((await api.abort(id)).body).toEqual({ status: "aborted" });
    await expectNothingStored(user.id);
    expect((await api.chunk(id, 1, BIG_JPEG.subarray(CHUNK_SIZE, 2 * CHUNK_SIZE))).status).toBe(409);
    await expectNothingStored(user.id);
  });
});

describe("limits and races", () => {
  it("allows ten unfinished uploads per user at once", async () => {
    const user = await signedIn();
    const api = uploadClient(user.cookie);
    const made = [];
    for (let i = 0; i < 10; i++) made.push(await api.create({ size: 1000, type: "image/jpeg" }));
    expect(made.every((r) => r.status === 201)).toBe(true);
    const eleventh = await api.create({ size: 1000, type: "image/jpeg" });
    expect(eleventh.status).toBe(429);
    expect(eleventh.body.error).toBe(UPLOAD_MESSAGES.tooManyOpen);
    await api.abort(made[0]!.body.id as string);
    expect((await api.create({ size: 1000, type: "image/jpeg" })).status).toBe(201);
  });

  it("uploads created at once never pass the ten", async () => {
    const user = await signedIn();
    const api = uploadClient(user.cookie);
    const answers = await Promise.all(Array.from({ length: 25 }, () => api.create({ size: 1000, type: "image/jpeg" })));
    const made = answers.filter((r) => r.status === 201).length;
    expect(made).toBeGreaterThan(0);
    expect(made).toBeLessThanOrEqual(10);
    for (const r of answers) if (r.status !== 201) expect(r.body.error).toBe(UPLOAD_MESSAGES.tooManyOpen);
    const open = await db.select().from(uploadSessions).where(eq(uploadSessions.userId, user.id)).all();
    expect(open).toHaveLength(made);
  });

  it("two completions at once store one photo", async () => {
    const { user, api, id } = await readyToComplete();
    const both = await Promise.all([api.complete(id), api.complete(id)]);
    expect(both.map((r) => r.status).sort()).toContain(201);
    for (const r of both) expect([201, 409]).toContain(r.status);
    expect(await photoRows(user.id)).toBe(1);
    expect(await storedKeys(user.id)).toHaveLength(2);
  });
});

describe("a part or a thumbnail that lands while the upload completes (ADR 0347)", () => {
  /** A body that lets `first` run (the completion) before it gives its bytes, as a slow request would. */
  function bodyAfter(first: () => Promise<unknown>, bytes: Uint8Array): ReadableStream<Uint8Array> {
    return new ReadableStream({
      async pull(controller) {
        await first();
        controller.enqueue(bytes);
        controller.close();
      },
    });
  }

  async function expectWholePhoto(userId: string, photoId: string) {
    expect(await photoRows(userId)).toBe(1);
    expect((await storedKeys(userId)).sort()).toEqual([
      `photos/${userId}/${photoId}/original`,
      `photos/${userId}/${photoId}/thumb`,
    ]);
    const thumb = await env.PHOTOS.get(`photos/${userId}/${photoId}/thumb`);
    expect(new Uint8Array(await thumb!.arrayBuffer())).toEqual(THUMB);
  }

  it("a second thumbnail is taken back without touching the finished photo's", async () => {
    const { user, id, deps } = await readyToComplete();
    let completed: Awaited<ReturnType<typeof completeUpload>> | undefined;
    const late = makeJpeg(200, 150, 70, 10, 9);
    const answer = await putThumb(
      deps,
      user.id,
      id,
      bodyAfter(async () => {
        completed = await completeUpload(deps, user.id, id);
      }, late),
    );
    expect(completed?.ok).toBe(true);
    expect(answer).toMatchObject({ ok: false, code: "conflict" });
    if (!completed?.ok) throw new Error("not completed");
    await expectWholePhoto(user.id, completed.photo.id);
  });

  // Too short for its part, or not an image: each would close the upload and delete its bytes while it is open.
  it.each([
    ["a part too short", "chunk"],
    ["a thumbnail that is no image", "thumb"],
  ] as const)("%s refused while the upload completes deletes nothing of the finished photo", async (_, what) => {
    const { user, id, deps } = await readyToComplete();
    let photoId = "";
    const complete = async () => {
      const done = await completeUpload(deps, user.id, id);
      if (done.ok) photoId = done.photo.id;
    };
    const answer =
      what === "chunk"
        ? await putChunk(deps, user.id, id, 0, bodyAfter(complete, new Uint8Array(10)))
        : await putThumb(deps, user.id, id, bodyAfter(complete, new TextEncoder().encode("not an image")));
    expect(answer).toMatchObject({ ok: false, code: "conflict" });
    expect(photoId).not.toBe("");
    const session = await db.select().from(uploadSessions).where(eq(uploadSessions.id, id)).get();
    expect(session?.status).toBe("completed");
    await expectWholePhoto(user.id, photoId);
  });
});

describe("refusals leave no object and no row", () => {
  it("a text file renamed .jpg is refused at its first chunk", async () => {
    const user = await signedIn();
    const text = new TextEncoder().encode("This is a shopping list, not a photo.\n".repeat(20));
    const res = await uploadWhole(user.cookie, text, { name: "kitchen.jpg", type: "image/jpeg" });
    expect(res.status).toBe(415);
    expect(res.body.error).toBe(UPLOAD_MESSAGES.notAnImage);
    await expectNothingStored(user.id);
    const after = await uploadClient(user.cookie).complete(res.id!);
    expect(after.status).toBe(409);
    await expectNothingStored(user.id);
  });

  it("a file with a JPEG signature but no image inside is refused at completion", async () => {
    const user = await signedIn();
    const fake = new Uint8Array(CHUNK_SIZE + 1000).fill(0x41);
    fake.set([0xff, 0xd8, 0xff, 0xe0]);
    const res = await uploadWhole(user.cookie, fake, { name: "fake.jpg" });
    expect(res.status).toBe(415);
    await expectNothingStored(user.id);
  });

  it("a PNG declared as a JPEG is refused", async () => {
    const user = await signedIn();
    const res = await uploadWhole(user.cookie, makePng(20, 20), { type: "image/jpeg", name: "x.jpg" });
    expect(res.status).toBe(415);
    expect(res.body.error).toBe(UPLOAD_MESSAGES.mismatch);
    await expectNothingStored(user.id);
  });

  it("a truncated JPEG (its end missing) is refused", async () => {
    const user = await signedIn();
    const truncated = BIG_JPEG.subarray(0, Math.floor(BIG_JPEG.byteLength * 0.6));
    const res = await uploadWhole(user.cookie, truncated, { name: "cut.jpg", thumb: THUMB });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe(UPLOAD_MESSAGES.damaged);
    await expectNothingStored(user.id);
  });

  it("a chunk shorter than declared is refused and the upload closed", async () => {
    const user = await signedIn();
    const api = uploadClient(user.cookie);
    const id = (await api.create({ size: BIG_JPEG.byteLength, type: "image/jpeg" })).body.id as string;
    await api.thumb(id, THUMB);
    const res = await api.chunk(id, 0, BIG_JPEG.subarray(0, CHUNK_SIZE - 10));
    expect(res.status).toBe(422);
    await expectNothingStored(user.id);
  });

  it("an oversized declaration, chunk or thumbnail is refused", async () => {
    const user = await signedIn();
    const api = uploadClient(user.cookie);
    const tooBig = await api.create({ size: MAX_UPLOAD_BYTES + 1, type: "image/jpeg" });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error).toBe(UPLOAD_MESSAGES.tooLarge);
    const sessions = await db.select().from(uploadSessions).where(eq(uploadSessions.userId, user.id)).all();
    expect(sessions).toEqual([]);

    // Declares a small photo, then sends a body far larger than the chunk.
    const small = await api.create({ size: 1000, type: "image/jpeg" });
    const oversized = new Uint8Array(3 * CHUNK_SIZE);
    oversized.set(BIG_JPEG.subarray(0, 3 * CHUNK_SIZE));
    const res = await api.chunk(small.body.id as string, 0, oversized);
    expect(res.status).toBe(413);
    await expectNothingStored(user.id);

    const id = (await api.create({ size: BIG_JPEG.byteLength, type: "image/jpeg" })).body.id as string;
    await api.chunk(id, 0, BIG_JPEG.subarray(0, CHUNK_SIZE));
    const thumb = await api.thumb(id, BIG_JPEG);
    expect(thumb.status).toBe(413);
    await expectNothingStored(user.id);
  });

  it("a GIF and an unknown type are refused before any byte is stored", async () => {
    const user = await signedIn();
    const api = uploadClient(user.cookie);
    expect((await api.create({ size: 100, type: "image/gif", name: "a.gif" })).status).toBe(415);
    expect((await api.create({ size: 100, type: "application/pdf", name: "a.pdf" })).status).toBe(415);
    await expectNothingStored(user.id);
  });

  it("a stranger's upload and photo ids answer 404 and store nothing", async () => {
    const owner = await signedIn();
    const stranger = await signedIn();
    const done = await uploadWhole(owner.cookie, BIG_JPEG, { thumb: THUMB });
    const photoId = (done.body.photo as { id: string }).id;
    const open = await uploadClient(owner.cookie).create({ size: BIG_JPEG.byteLength, type: "image/jpeg" });
    const openId = open.body.id as string;
    const ownerKeys = await storedKeys(owner.id);

    const s = uploadClient(stranger.cookie);
    for (const r of [
      await s.status(openId),
      await s.chunk(openId, 0, BIG_JPEG.subarray(0, CHUNK_SIZE)),
      await s.thumb(openId, THUMB),
      await s.complete(openId),
      await s.abort(openId),
      await s.complete(done.id!),
    ]) {
      expect(r.status).toBe(404);
    }
    for (const path of ["thumb", "original", "download"]) {
      const res = await workerFetch(`/api/photos/${photoId}/${path}`, { headers: { Cookie: stranger.cookie } });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ ok: false, code: "not_found", error: "Not found." });
    }
    await expectNothingStored(stranger.id);
    expect(await storedKeys(owner.id)).toEqual(ownerKeys);
    expect((await uploadClient(owner.cookie).status(openId)).body).toMatchObject({ status: "open", received: [] });
  });

  it("answers 401 without a session", async () => {
    expect((await workerFetch("/api/uploads", { method: "POST", body: "{}" })).status).toBe(401);
    expect((await workerFetch("/api/photos/abc/thumb")).status).toBe(401);
  });

  it("refuses a signed-in but unverified user", async () => {
    const user = await signedIn({ verified: false });
    expect((await uploadClient(user.cookie).create({ size: 100, type: "image/jpeg" })).status).toBe(401);
  });
});

describe("photos with absurd dimensions", () => {
  it("are refused from their header with the size message, and nothing is stored", async () => {
    for (const [name, bytes] of [
      ["60000x60000 PNG", claimPng(60000, 60000)],
      ["4294967295x1 PNG", claimPng(4294967295, 1)],
      ["65535x65535 JPEG", claimJpeg(65535, 65535)],
      ["10001x10 PNG", claimPng(10_001, 10)],
      ["6000x4001 PNG (24 MP and a bit)", claimPng(6000, 4001)],
    ] as const) {
      const user = await signedIn();
      const type = name.includes("JPEG") ? "image/jpeg" : "image/png";
      const res = await uploadWhole(user.cookie, bytes, { name, type, thumb: THUMB });
      expect(res.status, name).toBeGreaterThanOrEqual(400);
      expect(res.status, name).toBeLessThan(500);
      expect(JSON.stringify(res.body), name).toContain(UPLOAD_MESSAGES.tooManyPixels);
      await expectNothingStored(user.id);
    }
  });
});
