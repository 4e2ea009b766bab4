import { env } from "cloudflare:workers";
import { originalLinks, photoVersions } from "@db/schema";
import { db } from "@test/support/factories";
import { api, folderOf, onPlan, photosOf, settleJob } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { roomAnswer, useRoomAsOriginal, windowGoneAnswer } from "@test/support/structure-room";
import { workerFetch } from "@test/support/worker";
import { createApiKey } from "@workers/services/api-keys";
import { ALTERED_WITHDRAWN, resolveLink } from "@workers/services/mls/original-page";
import { eq } from "drizzle-orm";
import { unzipSync } from "fflate";
import { beforeEach, describe, expect, it } from "vitest";
import { RETURNED_NOT_FOR_MLS } from "~/shared/version-view";

// A result its owner returned ("This result changed the room", docs/decisions/0261, 0263) never leaves for a
// listing again: its MLS download, the listing pack, the public API's download for the listing, its original page and
// the "I checked the walls and windows" confirmation all refuse it in one message and write nothing, while a result
// of the same listing that was not returned still goes, and the owner's own copy stays downloadable. Results are made
// by real jobs through the queue and the check Worker; the credit goes back through the user's object.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

/** A user with two photos of the living room in one listing folder (the account's profile: California), both staged. */
async function listingStaged(answer: "passed" | "flagged") {
  const user = await onPlan("Starter plan", 5);
  const folderId = await folderOf(user.id);
  const photos = await photosOf(user.id, 2, folderId);
  const made = [];
  for (const photo of photos) {
    await useRoomAsOriginal(photo);
    provider.answer = () => [answer === "flagged" ? windowGoneAnswer("stage") : roomAnswer("stage")];
    const res = await api(user.cookie, "POST", `/api/photos/${photo.id}/jobs`, {
      kind: "stage",
      roomType: "Living Room",
      designStyle: "Modern",
    });
    const job = await settleJob(user.cookie, res.body.job.id);
    expect(job.status).toBe("succeeded");
    made.push({ photo, versionId: job.versionId!, base: `/api/photos/${photo.id}/versions/${job.versionId}` });
  }
  const [returned, kept] = made as [(typeof made)[number], (typeof made)[number]];
  return { user, folderId, returned, kept };
}

async function row(versionId: string) {
  return (await db.select().from(photoVersions).where(eq(photoVersions.id, versionId)).get())!;
}

async function linksOf(versionId: string) {
  return db.select().from(originalLinks).where(eq(originalLinks.versionId, versionId)).all();
}

async function keyFor(userId: string, scopes: ("read" | "stage")[]) {
  const made = await createApiKey({ db, env, clock: () => Date.now() }, userId, { name: "t", scopes });
  if (!made.ok) throw new Error(made.error);
  return { Authorization: `Bearer ${made.token}` };
}

async function errorOf(res: Response) {
  return [res.status, ((await res.json()) as { error: string }).error];
}

describe("a returned result and the MLS", () => {
  it("its MLS download, pack entry, v1 download and original page refuse it and write nothing; the other result goes", async () => {
    const { user, folderId, returned, kept } = await listingStaged("passed");
    const back = await api(user.cookie, "POST", `${returned.base}/changed-room`, {});
    expect(back.status).toBe(200);
    expect((await row(returned.versionId)).structureReturnedAt).not.toBeNull();

    // The page's Download for MLS (GET, and the POST that would publish its page first) and its original page.
    const labelled = await api(user.cookie, "GET", `${returned.base}/labelled`);
    expect([labelled.status, labelled.body.error]).toEqual([409, RETURNED_NOT_FOR_MLS]);
    const first = await workerFetch(`${returned.base}/labelled`, {
      method: "POST",
      headers: {
        Cookie: user.cookie,
        Origin: "http://localhost",
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "publish=first",
    });
    expect(await errorOf(first)).toEqual([409, RETURNED_NOT_FOR_MLS]);
    const page = await api(user.cookie, "POST", `${returned.base}/link`, {});
    expect([page.status, page.body.error]).toEqual([409, RETURNED_NOT_FOR_MLS]);
    const disclosure = await api(user.cookie, "GET", `${returned.base}/disclosure`);
    expect(disclosure.body.disclosure).toMatchObject({
      exportable: false,
      needsConfirmation: false,
      reason: RETURNED_NOT_FOR_MLS,
    });

    // The public API: the download for the listing and the original page refuse it; its own copy is the owner's.
    const auth = await keyFor(user.id, ["read", "stage"]);
    const v1 = `/api/v1/photos/${returned.photo.id}/versions/${returned.versionId}`;
    expect(await errorOf(await workerFetch(`${v1}/download`, { headers: auth }))).toEqual([409, RETURNED_NOT_FOR_MLS]);
    expect(await errorOf(await workerFetch(`${v1}/original-page`, { method: "POST", headers: auth }))).toEqual([
      409,
      RETURNED_NOT_FOR_MLS,
    ]);
    const own = await workerFetch(`${v1}/download?disclosure=none`, { headers: auth });
    expect(own.status).toBe(200);
    expect(own.headers.get("Content-Type")).toMatch(/^image\//);
    await own.arrayBuffer();
    const plain = await workerFetch(`${returned.base}/download`, { headers: { Cookie: user.cookie } });
    expect(plain.status).toBe(200);
    await plain.arrayBuffer();
    expect(await linksOf(returned.versionId)).toEqual([]);

    // The pack that publishes the pages it needs: the returned photo goes as its original, saying why; the other
    // photo's result goes labelled with its page, the only page made.
    const pack = await workerFetch(`/api/folders/${folderId}/pack`, {
      method: "POST",
      headers: { Cookie: user.cookie, Origin: "http://localhost", "Content-Type": "application/x-www-form-urlencoded" },
      body: "publish=new",
    });
    expect(pack.status).toBe(200);
    const files = unzipSync(new Uint8Array(await pack.arrayBuffer()));
    const manifest = JSON.parse(new TextDecoder().decode(files["manifest.json"]));
    expect(manifest.leftOut).toEqual([{ photo: returned.photo.name, kind: "stage", reason: RETURNED_NOT_FOR_MLS }]);
    expect(Object.keys(files).filter((n) => n.startsWith("photos/"))).toEqual([
      "photos/01 Room 1.jpg",
      "photos/02 Room 2 - virtual staging.jpg",
    ]);
    expect(files["photos/01 Room 1.jpg"]).toEqual(
      new Uint8Array(await (await env.PHOTOS.get(returned.photo.originalKey))!.arrayBuffer()),
    );
    expect(await linksOf(returned.versionId)).toEqual([]);
    expect(await linksOf(kept.versionId)).toHaveLength(1);

    // The result that was not returned still goes, to the page and through the API.
    const keptLabelled = await workerFetch(`${kept.base}/labelled`, { headers: { Cookie: user.cookie } });
    expect(keptLabelled.status).toBe(200);
    expect(keptLabelled.headers.get("Content-Type")).toMatch(/^image\//);
    await keptLabelled.arrayBuffer();
    const keptV1 = await workerFetch(`/api/v1/photos/${kept.photo.id}/versions/${kept.versionId}/download`, {
      headers: auth,
    });
    expect(keptV1.status).toBe(200);
    await keptV1.arrayBuffer();
  });

  it("a flagged result, returned: no confirmation is taken (409, nothing stored), and the pack leaves it out rather than waiting", async () => {
    const { user, folderId, returned } = await listingStaged("flagged");
    expect((await row(returned.versionId)).structureVerdict).toBe("flagged");
    expect((await api(user.cookie, "POST", `${returned.base}/changed-room`, {})).status).toBe(200);

    const confirm = await api(user.cookie, "POST", `${returned.base}/confirm-structure`, {});
    expect([confirm.status, confirm.body.error]).toEqual([409, RETURNED_NOT_FOR_MLS]);
    const auth = await keyFor(user.id, ["stage"]);
    const byApi = await workerFetch(
      `/api/v1/photos/${returned.photo.id}/versions/${returned.versionId}/confirm-structure`,
      { method: "POST", headers: auth },
    );
    expect(await errorOf(byApi)).toEqual([409, RETURNED_NOT_FOR_MLS]);
    const stored = await row(returned.versionId);
    expect([stored.structureConfirmedAt, stored.structureConfirmedBy]).toEqual([null, null]);

    // Not the flagged message (which says how to confirm): the returned one, everywhere.
    const labelled = await api(user.cookie, "GET", `${returned.base}/labelled`);
    expect([labelled.status, labelled.body.error]).toEqual([409, RETURNED_NOT_FOR_MLS]);
    // The other photo's result is flagged and unconfirmed: the pack still waits for that one, and names it alone.
    const pack = await api(user.cookie, "GET", `/api/folders/${folderId}/pack`);
    expect(pack.status).toBe(409);
    expect(pack.body.error).toContain("Room 2.jpg");
    expect(pack.body.error).not.toContain("Room 1.jpg");
  });

  it("a page published before the return stays up for the original, says the altered photo was withdrawn, and serves it no more", async () => {
    const { user, returned } = await listingStaged("passed");
    const published = await api(user.cookie, "POST", `${returned.base}/link`, {});
    expect(published.status).toBe(200);
    const token = String(published.body.url).split("/o/")[1]!;
    const before = await workerFetch(`/api/o/${token}/staged`);
    expect(before.status).toBe(200);
    await before.arrayBuffer();
    const shown = await resolveLink(db, token, Date.now());
    if (!shown.ok) throw new Error(shown.error);
    const pageBefore = shown.page;
    expect([pageBefore.returned, pageBefore.versions.map((v) => [v.id, v.linked])]).toEqual([
      null,
      [[returned.versionId, true]],
    ]);

    expect((await api(user.cookie, "POST", `${returned.base}/changed-room`, {})).status).toBe(200);
    const staged = await workerFetch(`/api/o/${token}/staged`);
    expect(await errorOf(staged)).toEqual([410, ALTERED_WITHDRAWN]);
    const byId = await workerFetch(`/api/o/${token}/versions/${returned.versionId}`);
    expect(byId.status).toBe(404);
    await byId.arrayBuffer();
    const original = await workerFetch(`/api/o/${token}/original`);
    expect(original.status).toBe(200);
    expect(new Uint8Array(await original.arrayBuffer())).toEqual(
      new Uint8Array(await (await env.PHOTOS.get(returned.photo.originalKey))!.arrayBuffer()),
    );
    // What the page (/o/<token>) is drawn from: the original, no altered photo, and the line that says why.
    const found = await resolveLink(db, token, Date.now());
    if (!found.ok) throw new Error(found.error);
    expect(found.page.versions).toEqual([]);
    expect(found.page.returned).toEqual({ kind: "stage", createdAt: (await row(returned.versionId)).createdAt });
    expect(found.page.etag).not.toBe(pageBefore.etag);
    // Publishing it again hands back no page: the same refusal, and no new link.
    const again = await api(user.cookie, "POST", `${returned.base}/link`, {});
    expect([again.status, again.body.error]).toEqual([409, RETURNED_NOT_FOR_MLS]);
    expect(await linksOf(returned.versionId)).toHaveLength(1);
  });

  it("another user's version id is a 404 everywhere, and nothing is written", async () => {
    const { user, returned } = await listingStaged("flagged");
    const stranger = await onPlan("Starter plan", 1);
    const [theirs] = await photosOf(stranger.id, 1);
    const paths = [returned.base, `/api/photos/${theirs!.id}/versions/${returned.versionId}`];
    for (const base of paths) {
      expect((await api(stranger.cookie, "GET", `${base}/labelled`)).status).toBe(404);
      expect((await api(stranger.cookie, "POST", `${base}/link`, {})).status).toBe(404);
      expect((await api(stranger.cookie, "POST", `${base}/changed-room`, {})).status).toBe(404);
      expect((await api(stranger.cookie, "POST", `${base}/confirm-structure`, {})).status).toBe(404);
    }
    const auth = await keyFor(stranger.id, ["read", "stage"]);
    for (const photoId of [returned.photo.id, theirs!.id]) {
      const v1 = `/api/v1/photos/${photoId}/versions/${returned.versionId}`;
      const download = await workerFetch(`${v1}/download`, { headers: auth });
      const page = await workerFetch(`${v1}/original-page`, { method: "POST", headers: auth });
      expect([download.status, page.status]).toEqual([404, 404]);
      await Promise.all([download.arrayBuffer(), page.arrayBuffer()]);
    }
    const stored = await row(returned.versionId);
    expect([stored.structureReturnedAt, stored.structureConfirmedAt]).toEqual([null, null]);
    expect(await linksOf(returned.versionId)).toEqual([]);
    expect(user.id).not.toBe(stranger.id);
  });
});
