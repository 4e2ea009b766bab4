import { env } from "cloudflare:workers";
import { creditReservations, jobs, photoVersions } from "@db/schema";
import { makeJpeg, makeMaskPng, makePng } from "@test/fixtures/images";
import { db, signedIn } from "@test/support/factories";
import { api, balance, expectSettled, rowsOf, settleJob } from "@test/support/listing";
import { makePhoto, storedKeys } from "@test/support/photos";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { signedMaskOf } from "@test/support/signed";
import { workerFetch } from "@test/support/worker";
import { signedImageUrl } from "@workers/lib/signed-urls";
import { deletePhotoForever, trashPhoto } from "@workers/services/library";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { MASK_MESSAGES } from "~/shared/masks";
import { VERSION_NOT_FOUND } from "~/shared/version-view";

// The removal brush's masks (issue 33, part 5; docs/decisions/0195-removal-brush-masks.md): stored and checked by
// POST /api/photos/:id/masks, named by a removal's job request, and sent to the provider as mask_image_url, a signed
// address it can fetch without a cookie. The provider is stubbed at the isolate's fetch and fetches that address.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

/** makePhoto's original is 40 x 30: a mask painted on it, white over its left half. */
const MASK = makeMaskPng(40, 30, (x) => x < 20);

async function hex(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(d, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function postMask(
  cookie: string | null,
  photoId: string,
  body: BodyInit,
  opts: { type?: string; source?: string } = {},
) {
  const query = opts.source === undefined ? "" : `?source=${encodeURIComponent(opts.source)}`;
  const res = await workerFetch(`/api/photos/${photoId}/masks${query}`, {
    method: "POST",
    headers: {
      ...(cookie ? { Cookie: cookie } : {}),
      Origin: "http://localhost",
      "Content-Type": opts.type ?? "image/png",
    },
    body,
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: test answers are read field by field
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as any };
}

function masksOf(keys: string[]) {
  return keys.filter((k) => k.endsWith("/mask.png") || k.includes("/masks/"));
}

describe("storing a mask", () => {
  it("a PNG of the photo's size is stored under the photo, named by its SHA-256; the same bytes again store once", async () => {
    const user = await signedIn({ credits: 1 });
    const photo = await makePhoto(user.id);
    const first = await postMask(user.cookie, photo.id, MASK);
    expect(first.status).toBe(201);
    const id = await hex(MASK);
    expect(first.body.mask).toEqual({ id, width: 40, height: 30, source: "original" });
    // One mask per photo (ADR 0211): its id and size in the object's metadata.
    const stored = await env.PHOTOS.get(`photos/${user.id}/${photo.id}/mask.png`);
    expect(new Uint8Array(await stored!.arrayBuffer())).toEqual(MASK);
    expect(stored!.httpMetadata?.contentType).toBe("image/png");
    expect(stored!.customMetadata).toEqual({ id, width: "40", height: "30" });
    const again = await postMask(user.cookie, photo.id, MASK, { source: "original" });
    expect(again.status).toBe(201);
    expect(again.body.mask.id).toBe(id);
    expect(masksOf(await storedKeys(user.id))).toHaveLength(1);
    // It goes with the photo: deleting the photo for good leaves nothing of it.
    await trashPhoto(db, user.id, photo.id);
    expect(await deletePhotoForever(db, env.PHOTOS, user.id, photo.id)).toBeTruthy();
    expect(await storedKeys(user.id)).toEqual([]);
  });

  it("refuses what is not a PNG of the right size, too large, or not the person's photo, and writes nothing", async () => {
    const user = await signedIn({ credits: 1 });
    const photo = await makePhoto(user.id);
    const stranger = await signedIn({ credits: 1 });
    const theirs = await makePhoto(stranger.id);
    const trashed = await makePhoto(user.id, { trashedAt: Date.now() });
    const truncated = MASK.slice(0, MASK.byteLength - 12);
    const cases: { name: string; run: () => ReturnType<typeof postMask>; status: number; error: string | RegExp }[] = [
      {
        name: "a JPEG",
        run: () => postMask(user.cookie, photo.id, makeJpeg(40, 30)),
        status: 415,
        error: MASK_MESSAGES.notPng,
      },
      {
        name: "text",
        run: () => postMask(user.cookie, photo.id, "not an image"),
        status: 415,
        error: MASK_MESSAGES.notPng,
      },
      {
        name: "declared as JSON",
        run: () => postMask(user.cookie, photo.id, MASK, { type: "application/json" }),
        status: 415,
        error: "This endpoint takes a image/png body.",
      },
      {
        name: "cut off",
        run: () => postMask(user.cookie, photo.id, truncated),
        status: 422,
        error: MASK_MESSAGES.damaged,
      },
      {
        name: "over 2 MB",
        run: () => postMask(user.cookie, photo.id, new Uint8Array(2 * 1024 * 1024 + 1).fill(7)),
        status: 413,
        error: MASK_MESSAGES.tooLarge,
      },
      {
        name: "the wrong size",
        run: () => postMask(user.cookie, photo.id, makeMaskPng(41, 30)),
        status: 422,
        error: "The mask is 41 x 30 px; it must be the size of the image it is painted on, 40 x 30 px.",
      },
      {
        name: "a PNG photo of the wrong size",
        run: () => postMask(user.cookie, photo.id, makePng(30, 40)),
        status: 422,
        error: /must be the size of the image it is painted on, 40 x 30 px/,
      },
      {
        name: "a stranger's photo",
        run: () => postMask(user.cookie, theirs.id, MASK),
        status: 404,
        error: "Not found.",
      },
      {
        name: "a photo in the trash",
        run: () => postMask(user.cookie, trashed.id, MASK),
        status: 404,
        error: "Not found.",
      },
      { name: "no such photo", run: () => postMask(user.cookie, "nope", MASK), status: 404, error: "Not found." },
      {
        name: "a version that is not there",
        run: () => postMask(user.cookie, photo.id, MASK, { source: "no-such-version" }),
        status: 404,
        error: VERSION_NOT_FOUND,
      },
      {
        name: "without a session",
        run: () => postMask(null, photo.id, MASK),
        status: 401,
        error: "User not authenticated",
      },
    ];
    for (const c of cases) {
      const res = await c.run();
      expect(res.status, c.name).toBe(c.status);
      expect(res.body.ok, c.name).toBe(false);
      if (typeof c.error === "string") expect(res.body.error, c.name).toBe(c.error);
      else expect(res.body.error, c.name).toMatch(c.error);
    }
    expect(masksOf(await storedKeys(user.id))).toEqual([]);
    expect(masksOf(await storedKeys(stranger.id))).toEqual([]);
  });
});

describe("a removal with a mask", () => {
  it("sends mask_image_url, which serves the stored PNG without a cookie; one credit reserved, then committed", async () => {
    const user = await signedIn({ credits: 2 });
    const photo = await makePhoto(user.id);
    const { body } = await postMask(user.cookie, photo.id, MASK);
    const maskId: string = body.mask.id;
    const res = await api(user.cookie, "POST", `/api/photos/${photo.id}/jobs`, {
      kind: "removal",
      sourceVersionId: "original",
      maskId,
    });
    expect(res.status).toBe(202);
    expect(res.body.credits).toBe(1);
    // Kept with the job, so a re-run of it (an interrupted job, ADR 0085) sends the same mask.
    const row = await db.select().from(jobs).where(eq(jobs.id, res.body.job.id)).get();
    expect(row!.params).toMatchObject({ source: "original", mask: maskId });
    const job = await settleJob(user.cookie, res.body.job.id);
    expect(job.status).toBe("succeeded");
    expect(provider.calls.map((c) => c.path)).toEqual(["/remove_objects_from_room"]);
    const call = provider.calls[0]!;
    expect(call.body.mask_image_url).toMatch(
      new RegExp(
        `^http://localhost/api/signed/photos/${photo.id}/masks/${maskId}\\?key=[^&]+&exp=\\d+&sig=[a-z0-9]+\\.[0-9a-f]{64}$`,
      ),
    );
    expect(call.mask).toEqual({ status: 200, type: "image/png", bytes: MASK });
    expect(await balance(user.id)).toBe(1);
    await expectSettled(user.id);
  });

  it("a failed brushed removal is refunded like any removal", async () => {
    const user = await signedIn({ credits: 1 });
    const photo = await makePhoto(user.id);
    const { body } = await postMask(user.cookie, photo.id, MASK);
    provider.failEvery = 1;
    const res = await api(user.cookie, "POST", `/api/photos/${photo.id}/jobs`, {
      kind: "removal",
      maskId: body.mask.id,
    });
    expect(res.status).toBe(202);
    expect(res.body.credits).toBe(0);
    const job = await settleJob(user.cookie, res.body.job.id);
    expect(job.status).toBe("failed");
    expect(provider.calls[0]!.body.mask_image_url).toBeTypeOf("string");
    expect(await balance(user.id)).toBe(1);
    const held = await db.select().from(creditReservations).where(eq(creditReservations.userId, user.id)).all();
    expect(held.map((r) => r.status)).toEqual(["refunded"]);
    await expectSettled(user.id);
  });

  it("a mask that does not fit the job is refused before a credit is reserved", async () => {
    const user = await signedIn({ credits: 3 });
    const photo = await makePhoto(user.id);
    const stranger = await signedIn({ credits: 1 });
    const theirs = await makePhoto(stranger.id);
    const onOriginal: string = (await postMask(user.cookie, photo.id, MASK)).body.mask.id;
    // Bob's own mask (other bytes, so another id): it names nothing under Alice's photo.
    const theirMask: string = (
      await postMask(
        stranger.cookie,
        theirs.id,
        makeMaskPng(40, 30, (x) => x > 30),
      )
    ).body.mask.id;
    // A version of another size (the stub's enlargement): a mask painted on the original does not fit it.
    const plain = await api(user.cookie, "POST", `/api/photos/${photo.id}/jobs`, { kind: "removal" });
    const version = (await settleJob(user.cookie, plain.body.job.id)).versionId!;
    const v = await db.select().from(photoVersions).where(eq(photoVersions.id, version)).get();
    expect([v!.width, v!.height]).not.toEqual([40, 30]);
    const before = await rowsOf(user.id);
    const credits = await balance(user.id);
    const callsBefore = provider.calls.length;
    const job = (extra: Record<string, unknown>) =>
      api(user.cookie, "POST", `/api/photos/${photo.id}/jobs`, { kind: "removal", ...extra });
    const cases = [
      {
        name: "on staging",
        res: await job({ kind: "stage", roomType: "Bedroom", designStyle: "Modern", maskId: onOriginal }),
        status: 400,
        error: MASK_MESSAGES.onlyRemoval,
      },
      { name: "not an id", res: await job({ maskId: "../../etc" }), status: 400, error: MASK_MESSAGES.badId },
      { name: "never stored", res: await job({ maskId: "0".repeat(64) }), status: 404, error: MASK_MESSAGES.notFound },
      { name: "a stranger's mask", res: await job({ maskId: theirMask }), status: 404, error: MASK_MESSAGES.notFound },
      {
        name: "painted on the original, for the version (the default source now)",
        res: await job({ maskId: onOriginal }),
        status: 422,
        error: `The mask is 40 x 30 px; it must be the size of the image it is painted on, ${v!.width} x ${v!.height} px.`,
      },
      {
        name: "painted on the original, for the version named",
        res: await job({ maskId: onOriginal, sourceVersionId: version }),
        status: 422,
        error: /must be the size of the image it is painted on/,
      },
    ];
    for (const c of cases) {
      expect(c.res.status, c.name).toBe(c.status);
      if (typeof c.error === "string") expect(c.res.body.error, c.name).toBe(c.error);
      else expect(c.res.body.error, c.name).toMatch(c.error);
    }
    expect(await rowsOf(user.id)).toEqual(before);
    expect(await balance(user.id)).toBe(credits);
    expect(provider.calls.length).toBe(callsBefore);
    // Painted on the version (named when stored), it fits a removal from that version.
    const onVersion = await postMask(
      user.cookie,
      photo.id,
      makeMaskPng(v!.width, v!.height, (x) => x < 4),
      {
        source: version,
      },
    );
    expect(onVersion.status).toBe(201);
    expect(onVersion.body.mask.source).toBe(version);
    const fits = await job({ maskId: onVersion.body.mask.id, sourceVersionId: version });
    expect(fits.status).toBe(202);
    expect((await settleJob(user.cookie, fits.body.job.id)).status).toBe("succeeded");
    expect(provider.calls.at(-1)!.mask?.bytes).toEqual(makeMaskPng(v!.width, v!.height, (x) => x < 4));
  });
});

describe("the mask's signed address", () => {
  it("serves only with its own signature: a forged one, or a photo's signature on the mask path, is 403", async () => {
    const user = await signedIn({ credits: 1 });
    const photo = await makePhoto(user.id);
    const maskId: string = (await postMask(user.cookie, photo.id, MASK)).body.mask.id;
    const now = Date.now();
    const good = await signedMaskOf(photo.id, maskId, now);
    const served = await workerFetch(good);
    expect(served.status).toBe(200);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(MASK);
    // The signature is `<key id>.<hex>` (ADR 0182): the key's id kept, the HMAC replaced.
    const forged = good.replace(/(sig=[a-z0-9]+\.)[0-9a-f]{64}/, `$1${"0".repeat(64)}`);
    expect(forged).not.toBe(good);
    expect((await workerFetch(forged)).status).toBe(403);
    // The photo's signature for a variant named like the mask does not open the mask's address.
    const photoSig = new URL(
      await signedImageUrl(env, { photoId: photo.id, variant: maskId, key: photo.originalKey }, now),
    ).search;
    expect((await workerFetch(`/api/signed/photos/${photo.id}/masks/${maskId}${photoSig}`)).status).toBe(403);
    const expired = await signedMaskOf(photo.id, maskId, now - 60 * 60 * 1000);
    expect((await workerFetch(expired)).status).toBe(403);
    // The key is signed: the same signature does not open another photo's mask, nor the photo's original.
    const elsewhere = new URL(good);
    elsewhere.searchParams.set("key", photo.originalKey);
    expect((await workerFetch(elsewhere.href)).status).toBe(403);
    // A stranger's real photo id in the path, under this address's signature and key: 403, not their mask.
    const stranger = await signedIn({ credits: 1 });
    const theirs = await makePhoto(stranger.id);
    await postMask(stranger.cookie, theirs.id, MASK);
    const swapped = new URL(good);
    swapped.pathname = swapped.pathname.replace(photo.id, theirs.id);
    expect((await workerFetch(swapped.href)).status).toBe(403);
  });
});
