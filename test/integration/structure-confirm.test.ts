import { env } from "cloudflare:workers";
import { photoVersions } from "@db/schema";
import { db } from "@test/support/factories";
import { api, folderOf, onPlan, photosOf, settleJob } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { roomAnswer, useRoomAsOriginal, windowGoneAnswer } from "@test/support/structure-room";
import { workerFetch } from "@test/support/worker";
import { createApiKey } from "@workers/services/api-keys";
import { ONLY_FLAGGED } from "@workers/services/jobs/versions";
import { unconfirmedInPack } from "@workers/services/mls/pack";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { FLAGGED_NOT_CONFIRMED } from "~/shared/version-view";

// A flagged result on its way to the MLS (issue 43 item 6, docs/decisions/0215-flag-when-unsure.md): its download for
// MLS, its original page and its listing's pack wait until its owner confirms "I checked the walls and windows"; the
// confirmation is stored with the version. The result is made by a real job: the provider stubbed at the isolate's
// fetch answers the living room with its window painted over, which production's limits flag.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

/** A user with one photo of the living room in a listing folder, and a staging of it: flagged or passed. */
async function stagedRoom(answer: "flagged" | "passed") {
  const user = await onPlan("Starter plan", 3);
  const folderId = await folderOf(user.id);
  const [photo] = await photosOf(user.id, 1, folderId);
  await useRoomAsOriginal(photo!);
  provider.answer = () => [answer === "flagged" ? windowGoneAnswer("stage") : roomAnswer("stage")];
  const res = await api(user.cookie, "POST", `/api/photos/${photo!.id}/jobs`, {
    kind: "stage",
    roomType: "Living Room",
    designStyle: "Modern",
  });
  const job = await settleJob(user.cookie, res.body.job.id);
  expect(job.status).toBe("succeeded");
  const base = `/api/photos/${photo!.id}/versions/${job.versionId}`;
  return { user, folderId, photo: photo!, versionId: job.versionId!, base };
}

async function row(versionId: string) {
  return (await db.select().from(photoVersions).where(eq(photoVersions.id, versionId)).get())!;
}

describe("a flagged result and the MLS", () => {
  it("its MLS download, original page and pack are 409 until its owner confirms; then 200, the confirmation stored", async () => {
    const { user, folderId, versionId, base } = await stagedRoom("flagged");
    expect((await row(versionId)).structureVerdict).toBe("flagged");

    const labelled = await api(user.cookie, "GET", `${base}/labelled`);
    expect([labelled.status, labelled.body.error]).toEqual([409, FLAGGED_NOT_CONFIRMED]);
    const disclosure = await api(user.cookie, "GET", `${base}/disclosure`);
    expect(disclosure.body.disclosure).toMatchObject({ exportable: false, needsConfirmation: true });
    const page = await api(user.cookie, "POST", `${base}/link`, {});
    expect([page.status, page.body.error]).toEqual([409, FLAGGED_NOT_CONFIRMED]);
    const pack = await api(user.cookie, "GET", `/api/folders/${folderId}/pack`);
    expect([pack.status, pack.body.error]).toEqual([409, unconfirmedInPack(["Room 1.jpg"])]);
    // Its own copy (the plain download) was charged and is the owner's meanwhile.
    expect((await workerFetch(`${base}/download`, { headers: { Cookie: user.cookie } })).status).toBe(200);

    const before = Date.now();
    const confirmed = await api(user.cookie, "POST", `${base}/confirm-structure`, {});
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.versionId).toBe(versionId);
    const stored = await row(versionId);
    expect(stored.structureConfirmedBy).toBe(user.id);
    expect(stored.structureConfirmedAt).toBeGreaterThanOrEqual(before);
    expect(confirmed.body.confirmedAt).toBe(stored.structureConfirmedAt);
    // Said again: the first confirmation stands.
    const again = await api(user.cookie, "POST", `${base}/confirm-structure`, {});
    expect([again.status, again.body.confirmedAt]).toEqual([200, stored.structureConfirmedAt]);

    // The account's profile (California) labels with the original page's address: published first, on purpose.
    expect((await api(user.cookie, "POST", `${base}/link`, {})).status).toBe(200);
    const after = await workerFetch(`${base}/labelled`, { headers: { Cookie: user.cookie } });
    expect(after.status).toBe(200);
    expect(after.headers.get("Content-Type")).toMatch(/^image\//);
    const packAfter = await workerFetch(`/api/folders/${folderId}/pack`, { headers: { Cookie: user.cookie } });
    expect(packAfter.status).toBe(200);
    expect(packAfter.headers.get("Content-Type")).toBe("application/zip");
    await packAfter.arrayBuffer();
    const view = await api(user.cookie, "GET", `/api/photos/${base.split("/")[3]}/versions`);
    expect(view.body.versions[0].structure.confirmedAt).toBe(stored.structureConfirmedAt);
  });

  it("another user's confirmation is a 404 and changes nothing; a result that passed asks for none (409)", async () => {
    const { user, photo, versionId, base } = await stagedRoom("flagged");
    const stranger = await onPlan("Starter plan", 1);
    const [theirs] = await photosOf(stranger.id, 1);
    const onOwners = await api(stranger.cookie, "POST", `${base}/confirm-structure`, {});
    expect(onOwners.status).toBe(404);
    const onTheirs = await api(
      stranger.cookie,
      "POST",
      `/api/photos/${theirs!.id}/versions/${versionId}/confirm-structure`,
      {},
    );
    expect(onTheirs.status).toBe(404);
    const made = await createApiKey({ db, env, clock: () => Date.now() }, stranger.id, {
      name: "t",
      scopes: ["stage"],
    });
    if (!made.ok) throw new Error(made.error);
    const byApi = await workerFetch(`/api/v1/photos/${photo.id}/versions/${versionId}/confirm-structure`, {
      method: "POST",
      headers: { Authorization: `Bearer ${made.token}` },
    });
    expect(byApi.status).toBe(404);
    const stored = await row(versionId);
    expect([stored.structureConfirmedAt, stored.structureConfirmedBy]).toEqual([null, null]);
    expect((await api(user.cookie, "GET", `${base}/labelled`)).status).toBe(409);

    const passed = await stagedRoom("passed");
    const notFlagged = await api(passed.user.cookie, "POST", `${passed.base}/confirm-structure`, {});
    expect([notFlagged.status, notFlagged.body.error]).toEqual([409, ONLY_FLAGGED]);
  });

  it("through the public API: the download for the listing is 409, confirm-structure lets it out", async () => {
    const { user, photo, versionId } = await stagedRoom("flagged");
    const made = await createApiKey({ db, env, clock: () => Date.now() }, user.id, {
      name: "t",
      scopes: ["stage", "read"],
    });
    if (!made.ok) throw new Error(made.error);
    const auth = { Authorization: `Bearer ${made.token}` };
    const path = `/api/v1/photos/${photo.id}/versions/${versionId}`;
    const refused = await workerFetch(`${path}/download`, { headers: auth });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: string }).error).toBe(FLAGGED_NOT_CONFIRMED);
    // Its own copy, not for advertising, is the owner's: it was charged.
    const own = await workerFetch(`${path}/download?disclosure=none`, { headers: auth });
    expect(own.status).toBe(200);
    await own.arrayBuffer();
    const confirmed = await workerFetch(`${path}/confirm-structure`, { method: "POST", headers: auth });
    expect(confirmed.status).toBe(200);
    const body = (await confirmed.json()) as { versionId: string; confirmedAt: number };
    expect(body.versionId).toBe(versionId);
    expect((await row(versionId)).structureConfirmedAt).toBe(body.confirmedAt);
    const published = await workerFetch(`${path}/original-page`, { method: "POST", headers: auth });
    expect(published.status).toBe(200);
    await published.arrayBuffer();
    const listed = await workerFetch(`${path}/download`, { headers: auth });
    expect(listed.status).toBe(200);
    await listed.arrayBuffer();
    const version = await workerFetch(`/api/v1/photos/${photo.id}/versions`, { headers: auth });
    const { versions } = (await version.json()) as { versions: { structure: { confirmedAt: number } }[] };
    expect(versions[0]!.structure.confirmedAt).toBe(body.confirmedAt);
  });
});
