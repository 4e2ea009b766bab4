import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { photos } from "@db/schema";
import { db } from "@test/support/factories";
import { chunkedOversized, sendAs, stateNow } from "@test/support/hostile";
import { api, onPlan, photosOf, settleJob } from "@test/support/listing";
import { stubProvider } from "@test/support/provider-stub";
import { pathOf, signedAddressOf, signedMaskOf } from "@test/support/signed";
import { apiV1, workerFetch } from "@test/support/worker";
import { api as apiApp } from "@workers/api";
import { randomToken } from "@workers/lib/crypto";
import { aroundD1 } from "@workers/lib/injected-latency";
import { createApiKey } from "@workers/services/api-keys";
import { deletePhotoForever, trashPhoto } from "@workers/services/library";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";

// The routes of workers/api/versions.ts (moved out of the job route's file), attacked by hand beside the generated
// suite: a stranger's real photo and version, the provider's signed addresses forged, expired or signed for another
// photo, a hostile version id, a wrong media type, a chunked oversized body, odd methods and a hostile photo name in
// the download's file name. Each is a 4xx (never a 5xx), the same 404 as for a made-up id where the caller may not
// know the thing exists, and D1 and R2 stay as they were.

beforeEach(() => {
  stubProvider();
});

/** Bob with a staged photo (a version), its name hostile; Alice, a stranger to it, with a photo of her own. */
async function world() {
  const bob = await onPlan("Starter plan", 3);
  const [theirs] = await photosOf(bob.id, 1);
  await db
    .update(photos)
    .set({ name: '"; filename="evil.exe\r\nX-Injected: 1\u202e.jpg' })
    .where(eq(photos.id, theirs!.id));
  const started = await api(bob.cookie, "POST", `/api/photos/${theirs!.id}/jobs`, {
    kind: "stage",
    roomType: "Bedroom",
    designStyle: "Modern",
  });
  expect(started.status).toBe(202);
  const job = await settleJob(bob.cookie, started.body.job.id);
  expect(job.status).toBe("succeeded");
  const alice = await onPlan("Starter plan", 3);
  const [own] = await photosOf(alice.id, 1);
  return { bob, photoId: theirs!.id, versionId: job.versionId!, alice, own: own! };
}

describe("the version routes under attack", () => {
  it("a stranger's real photo and version answer the 404 of made-up ones, on every variant", async () => {
    const w = await world();
    const before = await stateNow();
    const made = await sendAs(w.alice.cookie, "/api/photos/made-up/versions");
    expect(made.status).toBe(404);
    const notFound = await made.text();
    for (const path of [
      `/api/photos/${w.photoId}/versions`,
      `/api/photos/${w.photoId}/versions/${w.versionId}/changes`,
      `/api/photos/${w.photoId}/versions/${w.versionId}/image`,
      `/api/photos/${w.photoId}/versions/${w.versionId}/thumb`,
      `/api/photos/${w.photoId}/versions/${w.versionId}/download`,
      // Her own photo with his version id: a version is read under the photo's owner.
      `/api/photos/${w.own.id}/versions/${w.versionId}/image`,
    ]) {
      const res = await sendAs(w.alice.cookie, path);
      expect(res.status, path).toBe(404);
      expect(await res.text(), path).toBe(notFound);
    }
    // Signed out: 401 before anything is read.
    expect((await workerFetch(`/api/photos/${w.photoId}/versions/${w.versionId}/image`)).status).toBe(401);
    expect(await stateNow()).toEqual(before);
  });

  it("a hostile version id or variant is a 404; the download's file name carries no header of its own", async () => {
    const w = await world();
    for (const id of ["..%2F..%2Foriginal", "x".repeat(2000), "%00", "'%20OR%201=1--"]) {
      const res = await sendAs(w.bob.cookie, `/api/photos/${w.photoId}/versions/${id}/image`);
      expect(res.status, id.slice(0, 20)).toBe(404);
    }
    expect((await sendAs(w.bob.cookie, `/api/photos/${w.photoId}/versions/${w.versionId}/original`)).status).toBe(404);
    const download = await sendAs(w.bob.cookie, `/api/photos/${w.photoId}/versions/${w.versionId}/download`);
    expect(download.status).toBe(200);
    expect(download.headers.get("X-Injected")).toBeNull();
    const disposition = download.headers.get("Content-Disposition") ?? "";
    expect(disposition).toMatch(/^attachment; filename="[^"\r\n]*"; filename\*=UTF-8''/);
    expect(disposition).not.toMatch(/[\r\n]/);
    await download.arrayBuffer();
  });

  it("the signed addresses: forged, expired, or signed for another photo or as a mask, are 403 and read nothing", async () => {
    const w = await world();
    const before = await stateNow();
    const now = Date.now();
    const good = await signedAddressOf(w.photoId, "original", now);
    expect((await workerFetch(pathOf(good))).status).toBe(200);
    const forged = pathOf(good).replace(/sig=[^&]+/, `sig=${"0".repeat(64)}`);
    const expired = pathOf(await signedAddressOf(w.photoId, "original", now - 60 * 60 * 1000, 1000));
    // Alice's own signed address, pointed at Bob's photo: by its path, and by its key.
    const ownGood = await signedAddressOf(w.own.id, "original", now);
    const otherPhoto = pathOf(ownGood).replace(`/${w.own.id}/`, `/${w.photoId}/`);
    const bobKey = new URL(good).searchParams.get("key")!;
    const otherKey = new URL(ownGood);
    otherKey.searchParams.set("key", bobKey);
    // A mask's signature is not an image's.
    const mask = new URL(await signedMaskOf(w.photoId, "original", now));
    const maskAsImage = `/api/signed/photos/${w.photoId}/original${mask.search}`;
    const otherVariant = pathOf(good).replace("/original?", `/${w.versionId}?`);
    const noKey = pathOf(good).replace(/key=[^&]+&/, "");
    // Hostile keys under the good signature: a traversal, another user's prefix, a huge one, a second key.
    const withKey = (key: string) => pathOf(good).replace(/key=[^&]+&/, `key=${encodeURIComponent(key)}&`);
    const hostileKeys = [
      withKey("../../photos/x/y/original"),
      withKey(`photos/${w.alice.id}/${w.own.id}/original`),
      withKey("k".repeat(8000)),
      withKey(""),
    ];
    // A second key after the signed one changes nothing: the signed object, or nothing, is what is served.
    const second = await workerFetch(`${pathOf(good)}&key=${encodeURIComponent(`photos/${w.alice.id}/x`)}`);
    const first = await workerFetch(pathOf(good));
    expect([200, 403]).toContain(second.status);
    if (second.status === 200) expect(await second.arrayBuffer()).toEqual(await first.arrayBuffer());
    else await second.arrayBuffer();
    for (const path of [
      forged,
      expired,
      otherPhoto,
      pathOf(otherKey.href),
      maskAsImage,
      otherVariant,
      noKey,
      ...hostileKeys,
      `/api/signed/photos/${w.photoId}/original`,
    ]) {
      const res = await workerFetch(path);
      expect(res.status, path).toBe(403);
      expect(res.headers.get("Content-Type") ?? "", path).toContain("application/json");
    }
    // A signature for a photo that does not exist: 404, not a 5xx.
    expect((await workerFetch(pathOf(await signedAddressOf("made-up", "original", now)))).status).toBe(404);
    expect(await stateNow()).toEqual(before);
  });

  it("hostile names in a signed address's path, under a good signature, are a 4xx and read nothing", async () => {
    const w = await world();
    const before = await stateNow();
    const now = Date.now();
    const image = new URL(await signedAddressOf(w.photoId, "original", now));
    const mask = new URL(await signedMaskOf(w.photoId, "m1", now));
    const hostile = ["..%2F..%2Foriginal", "x".repeat(2000), "%00", "'%20OR%201=1--", "%2F%2Fevil.example"];
    const paths = hostile.flatMap((name) => [
      `/api/signed/photos/${w.photoId}/${name}${image.search}`,
      `/api/signed/photos/${name}/original${image.search}`,
      `/api/signed/photos/${w.photoId}/masks/${name}${mask.search}`,
      `/api/signed/photos/${name}/masks/m1${mask.search}`,
    ]);
    for (const path of paths) {
      const res = await workerFetch(path);
      expect(res.status, path.slice(0, 80)).toBeGreaterThanOrEqual(400);
      expect(res.status, path.slice(0, 80)).toBeLessThan(500);
      expect(res.headers.get("Location"), path.slice(0, 80)).toBeNull();
      await res.arrayBuffer();
    }
    expect(await stateNow()).toEqual(before);
  });

  it("the provider's fetch of a signed image or mask address reads no D1 row; a deleted photo's is a 404", async () => {
    const w = await world();
    const trips: string[] = [];
    const counted = { ...env, DB: aroundD1(env.DB, (what) => void trips.push(what)) };
    const fetchSigned = async (url: string) => {
      const ctx = createExecutionContext();
      const res = await apiApp.fetch(new Request(url), counted, ctx);
      await waitOnExecutionContext(ctx);
      return res;
    };
    for (const variant of ["original", w.versionId]) {
      const res = await fetchSigned(await signedAddressOf(w.photoId, variant));
      expect(res.status, variant).toBe(200);
      expect((await res.arrayBuffer()).byteLength, variant).toBeGreaterThan(0);
    }
    // A mask's address too (a photo without one: 404, found without a row read).
    const noMask = await fetchSigned(await signedMaskOf(w.photoId, randomToken()));
    expect(noMask.status).toBe(404);
    await noMask.arrayBuffer();
    expect(trips).toEqual([]);
    // Deleted for good: the bytes go before the row, so an address signed before answers 404.
    const address = await signedAddressOf(w.photoId);
    expect(await trashPhoto(db, w.bob.id, w.photoId), "trashed").toBe(true);
    expect(await deletePhotoForever(db, env.PHOTOS, w.bob.id, w.photoId), "deleted").toBe(true);
    const gone = await fetchSigned(address);
    expect(gone.status).toBe(404);
    await gone.arrayBuffer();
  });

  it("a wrong media type, a chunked oversized body and odd methods on the version routes change nothing", async () => {
    const w = await world();
    const before = await stateNow();
    const paths = [
      `/api/photos/${w.photoId}/versions`,
      `/api/photos/${w.photoId}/versions/${w.versionId}/image`,
      `/api/photos/${w.photoId}/versions/${w.versionId}/changes`,
      `/api/signed/photos/${w.photoId}/original`,
      `/api/signed/photos/${w.photoId}/masks/${"0".repeat(64)}`,
    ];
    for (const path of paths) {
      const wrongType = await sendAs(w.bob.cookie, path, {
        method: "POST",
        headers: { "Content-Type": "text/plain" },
        body: "hello",
      });
      expect(wrongType.status, path).toBeGreaterThanOrEqual(400);
      expect(wrongType.status, path).toBeLessThan(500);
      const oversized = await sendAs(w.bob.cookie, path, chunkedOversized(""));
      expect(oversized.status, path).toBeGreaterThanOrEqual(400);
      expect(oversized.status, path).toBeLessThan(500);
      for (const method of ["PUT", "PATCH", "DELETE"]) {
        expect([404, 405], `${method} ${path}`).toContain((await sendAs(w.bob.cookie, path, { method })).status);
      }
    }
    expect(await stateNow()).toEqual(before);
  });

  it("the public API's version routes: a stranger's real ids are the 404 of made-up ones; odd bodies change nothing", async () => {
    const w = await world();
    const made = await createApiKey({ db, env, clock: () => Date.now() }, w.alice.id, {
      name: "crm",
      scopes: ["read", "stage"],
    });
    if (!made.ok) throw new Error(made.error);
    const before = await stateNow();
    const calls: [string, string][] = [
      ["GET", "/versions"],
      ["GET", "/versions/{v}/download"],
      ["POST", "/versions/{v}/original-page"],
      ["POST", "/versions/{v}/confirm-structure"],
      ["POST", "/versions/{v}/keep"],
    ];
    for (const [method, tail] of calls) {
      const at = (photo: string, version: string) => `/photos/${photo}${tail.replace("{v}", version)}`;
      const ask = (path: string, init: RequestInit = {}) =>
        apiV1(made.token, path, { method, idem: crypto.randomUUID(), ...init });
      // Made-up ids of the right shape (a malformed one is refused before any read, with the plain 404).
      const fake = await ask(at(randomToken(), randomToken()));
      expect(fake.status, tail).toBe(404);
      const notFound = await fake.text();
      // Her own photo with his version id too: a version is read under the photo's owner.
      const strangers = tail.includes("{v}") ? [w.photoId, w.own.id] : [w.photoId];
      for (const path of strangers.map((photo) => at(photo, w.versionId))) {
        const res = await ask(path);
        expect(res.status, path).toBe(404);
        expect(await res.text(), path).toBe(notFound);
      }
      if (method === "POST") {
        const path = at(w.photoId, w.versionId);
        const wrongType = await ask(path, { headers: { "Content-Type": "text/plain" }, body: "keep=1" });
        expect(wrongType.status, path).toBeGreaterThanOrEqual(400);
        expect(wrongType.status, path).toBeLessThan(500);
        const oversized = await ask(path, chunkedOversized('{"keep":"'));
        expect(oversized.status, path).toBeGreaterThanOrEqual(400);
        expect(oversized.status, path).toBeLessThan(500);
      }
      for (const odd of ["PUT", "PATCH", "DELETE"]) {
        const res = await apiV1(made.token, at(w.photoId, w.versionId), { method: odd });
        expect([404, 405], `${odd} ${tail}`).toContain(res.status);
      }
    }
    expect(await stateNow()).toEqual(before);
  });
});
