import { env } from "cloudflare:workers";
import { folders, jobs, photos, photoVersions } from "@db/schema";
import { db } from "@test/support/factories";
import { api, folderOf, onPlan, photosOf, settleBatch, settleJob } from "@test/support/listing";
import { type ProviderCall, type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { workerFetch } from "@test/support/worker";
import { checkFields } from "@workers/http/body";
import { createApiKey } from "@workers/services/api-keys";
import { libraryActionInput, runLibraryAction } from "@workers/services/library-actions";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_LOOK_STRENGTH, LOOK_NEEDS_FOLDER, LOOK_NOT_STAGED } from "~/shared/listing-look";

// One look across a listing (issue 33, part 4; docs/decisions/0190-one-look-for-a-listing.md): a staged version
// made its folder's look is sent as the provider's style reference (a signed address of that version, with its
// strength) by every staging of the folder's photos asked for while it is set: a single job, a batch, a re-roll
// and the public API; a batch may leave it out or change its strength; clearing it stops it; a stranger's or a
// non-staged version is refused; a look whose photo is trashed or deleted is not sent.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const STAGE = { kind: "stage", roomType: "Bedroom", designStyle: "Modern" };

type User = Awaited<ReturnType<typeof onPlan>>;

/** A form of /dashboard as its action reads it (the pages are tested end to end; here the service behind them). */
async function dashboardForm(user: { id: string }, fields: Record<string, string>) {
  const parsed = checkFields(libraryActionInput, fields);
  if (!parsed.ok) return parsed;
  return runLibraryAction({ db, bucket: env.PHOTOS }, user.id, parsed.data);
}

async function stagedVersion(user: User, photoId: string): Promise<{ jobId: string; versionId: string }> {
  const res = await api(user.cookie, "POST", `/api/photos/${photoId}/jobs`, STAGE);
  expect(res.status).toBe(202);
  const job = await settleJob(user.cookie, res.body.job.id);
  expect(job.status).toBe("succeeded");
  return { jobId: job.id, versionId: job.versionId! };
}

/** A listing of `n` photos whose first is staged and made the look; the reference's bytes. */
async function listingWithLook(credits = 10, n = 3, strength?: number) {
  const user = await onPlan(null, credits);
  const folderId = await folderOf(user.id);
  const shots = await photosOf(user.id, n, folderId);
  const ref = await stagedVersion(user, shots[0]!.id);
  const set = await api(
    user.cookie,
    "POST",
    `/api/photos/${shots[0]!.id}/versions/${ref.versionId}/look`,
    strength === undefined ? {} : { strength },
  );
  expect(set.status).toBe(200);
  const version = await db.select().from(photoVersions).where(eq(photoVersions.id, ref.versionId)).get();
  const bytes = new Uint8Array(await (await env.PHOTOS.get(version!.key))!.arrayBuffer());
  provider.calls.length = 0;
  return { user, folderId, shots, ref, refPhotoId: shots[0]!.id, bytes };
}

/** The staging calls (not enlargements) made since the list was emptied. */
const stagingCalls = () => provider.calls.filter((c) => c.path === "/generate_designs_for_room");

function expectReference(call: ProviderCall, refPhotoId: string, refVersionId: string, bytes: Uint8Array, s: number) {
  const url = new URL(String(call.body.design_style_image_url));
  expect(url.pathname).toBe(`/api/signed/photos/${refPhotoId}/${refVersionId}`);
  // Signed by the current key, named in the signature (ADR 0182).
  expect(url.searchParams.get("sig")).toMatch(/^[a-z0-9]+\.[0-9a-f]{64}$/);
  expect(call.body.design_style_image_strength).toBe(s);
  // The provider fetched the reference's own bytes through its signed address.
  expect(call.reference).toEqual(bytes);
}

function expectNoReference(call: ProviderCall) {
  expect(call.body).not.toHaveProperty("design_style_image_url");
  expect(call.body).not.toHaveProperty("design_style_image_strength");
}

describe("use this look for the listing", () => {
  it("sets the folder's look (Close by default) and a single staging of another photo sends it", async () => {
    const { user, folderId, shots, ref, refPhotoId, bytes } = await listingWithLook();
    const folder = await db.select().from(folders).where(eq(folders.id, folderId)).get();
    expect(folder).toMatchObject({ lookVersionId: ref.versionId, lookStrength: DEFAULT_LOOK_STRENGTH });
    const versions = await api(user.cookie, "GET", `/api/photos/${refPhotoId}/versions`);
    expect(versions.body.listing).toEqual({ folderId, lookVersionId: ref.versionId, strength: DEFAULT_LOOK_STRENGTH });

    const res = await api(user.cookie, "POST", `/api/photos/${shots[1]!.id}/jobs`, STAGE);
    expect(res.status).toBe(202);
    expect(res.body.job.params.styleReference).toEqual({
      photoId: refPhotoId,
      versionId: ref.versionId,
      strength: DEFAULT_LOOK_STRENGTH,
    });
    expect((await settleJob(user.cookie, res.body.job.id)).status).toBe("succeeded");
    expect(stagingCalls()).toHaveLength(1);
    expectReference(stagingCalls()[0]!, refPhotoId, ref.versionId, bytes, DEFAULT_LOOK_STRENGTH);
  });

  it("a batch sends it for every photo, at the batch's strength; 'none' leaves it out; clearing stops it", async () => {
    const { user, folderId, shots, ref, refPhotoId, bytes } = await listingWithLook(14, 3);
    const items = shots.map((p) => ({ photoId: p.id, roomType: "bedroom" }));
    const batch = async (extra: Record<string, unknown> = {}) => {
      const res = await api(user.cookie, "POST", "/api/batches", { folderId, designStyle: "modern", items, ...extra });
      expect(res.status).toBe(202);
      const done = await settleBatch(user.cookie, res.body.batch.id);
      expect(done.counts.done).toBe(3);
      const calls = stagingCalls();
      provider.calls.length = 0;
      expect(calls).toHaveLength(3);
      return calls;
    };
    for (const call of await batch()) expectReference(call, refPhotoId, ref.versionId, bytes, DEFAULT_LOOK_STRENGTH);
    for (const call of await batch({ lookStrength: 0.85 }))
      expectReference(call, refPhotoId, ref.versionId, bytes, 0.85);
    for (const call of await batch({ look: "none" })) expectNoReference(call);

    // Cleared from the folder's page (a form without JavaScript): the next batch goes without it.
    const cleared = await dashboardForm(user, { intent: "clear-look", folderId });
    expect(cleared).toMatchObject({ ok: true, message: expect.stringContaining("look is cleared") });
    expect((await db.select().from(folders).where(eq(folders.id, folderId)).get())!.lookVersionId).toBeNull();
    for (const call of await batch()) expectNoReference(call);
  });

  it("a re-roll takes the listing's look as it is when asked: set since the staging, then cleared", async () => {
    const user = await onPlan(null, 10);
    const folderId = await folderOf(user.id);
    const [a, b] = await photosOf(user.id, 2, folderId);
    // Staged before the listing had a look.
    const early = await stagedVersion(user, b!.id);
    expectNoReference(stagingCalls()[0]!);
    const ref = await stagedVersion(user, a!.id);
    expect((await api(user.cookie, "POST", `/api/photos/${a!.id}/versions/${ref.versionId}/look`, {})).status).toBe(
      200,
    );
    provider.calls.length = 0;
    const rerolled = await api(user.cookie, "POST", `/api/jobs/${early.jobId}/reroll`, {});
    expect(rerolled.status).toBe(202);
    expect((await settleJob(user.cookie, rerolled.body.job.id)).status).toBe("succeeded");
    const version = await db.select().from(photoVersions).where(eq(photoVersions.id, ref.versionId)).get();
    const bytes = new Uint8Array(await (await env.PHOTOS.get(version!.key))!.arrayBuffer());
    expectReference(stagingCalls()[0]!, a!.id, ref.versionId, bytes, DEFAULT_LOOK_STRENGTH);

    // The strength changed on the folder's page, then the look cleared: re-rolls follow each.
    const page = (fields: Record<string, string>) => dashboardForm(user, { folderId, ...fields });
    expect(await page({ intent: "look-strength", strength: "0.5" })).toMatchObject({ ok: true });
    provider.calls.length = 0;
    const loose = await api(user.cookie, "POST", `/api/jobs/${early.jobId}/reroll`, { acceptCharge: true });
    expect((await settleJob(user.cookie, loose.body.job.id)).status).toBe("succeeded");
    expectReference(stagingCalls()[0]!, a!.id, ref.versionId, bytes, 0.5);

    expect(await page({ intent: "clear-look" })).toMatchObject({ ok: true });
    provider.calls.length = 0;
    const plain = await api(user.cookie, "POST", `/api/jobs/${early.jobId}/reroll`, { acceptCharge: true });
    expect((await settleJob(user.cookie, plain.body.job.id)).status).toBe("succeeded");
    expectNoReference(stagingCalls()[0]!);
  });

  it("the public API's job sends it and its job view shows it", async () => {
    const { user, shots, ref, refPhotoId, bytes } = await listingWithLook();
    const made = await createApiKey({ db, env, clock: () => Date.now() }, user.id, {
      name: "t",
      scopes: ["stage", "read"],
    });
    if (!made.ok) throw new Error(made.error);
    const auth = { Authorization: `Bearer ${made.token}`, "Content-Type": "application/json" };
    const res = await workerFetch(`/api/v1/photos/${shots[2]!.id}/jobs`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify(STAGE),
    });
    expect(res.status).toBe(202);
    const { job } = (await res.json()) as { job: { id: string } };
    for (let i = 0; i < 400; i++) {
      const row = await db.select().from(jobs).where(eq(jobs.id, job.id)).get();
      if (row?.status === "succeeded" || row?.status === "failed") break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const view = (await (await workerFetch(`/api/v1/jobs/${job.id}`, { headers: auth })).json()) as {
      job: { status: string; params: Record<string, unknown> };
    };
    expect(view.job.status).toBe("succeeded");
    expect(view.job.params.styleReference).toEqual({
      photoId: refPhotoId,
      versionId: ref.versionId,
      strength: DEFAULT_LOOK_STRENGTH,
    });
    expectReference(stagingCalls()[0]!, refPhotoId, ref.versionId, bytes, DEFAULT_LOOK_STRENGTH);
  });
});

describe("what cannot be a listing's look", () => {
  it("a stranger's version (or photo) is 404; a removal is 400; a photo outside a folder is 400; bad strengths 400", async () => {
    const { user, folderId, shots, ref } = await listingWithLook(10, 2);
    const stranger = await onPlan(null, 5);
    const strangerFolder = await folderOf(stranger.id);
    const [theirs] = await photosOf(stranger.id, 1, strangerFolder);
    const theirVersion = await stagedVersion(stranger, theirs!.id);
    const before = await db.select().from(folders).where(eq(folders.id, folderId)).get();
    const look = (who: User, photoId: string, versionId: string, body: unknown = {}) =>
      api(who.cookie, "POST", `/api/photos/${photoId}/versions/${versionId}/look`, body);

    // The stranger's version under the owner's photo, the stranger's photo, and the owner's ids by the stranger.
    expect((await look(user, shots[1]!.id, theirVersion.versionId)).status).toBe(404);
    expect((await look(user, theirs!.id, theirVersion.versionId)).status).toBe(404);
    expect((await look(stranger, shots[0]!.id, ref.versionId)).status).toBe(404);
    // Another photo's version is not this photo's.
    expect((await look(user, shots[1]!.id, ref.versionId)).status).toBe(404);

    // A removal is not a look.
    const removal = await api(user.cookie, "POST", `/api/photos/${shots[1]!.id}/jobs`, { kind: "removal" });
    const removed = await settleJob(user.cookie, removal.body.job.id);
    const notStaged = await look(user, shots[1]!.id, removed.versionId!);
    expect(notStaged.status).toBe(400);
    expect(notStaged.body.error).toBe(LOOK_NOT_STAGED);

    // Strengths off the named steps, and not a number.
    for (const strength of [0, 0.6, 1.5, -1, "0.7", null]) {
      const res = await look(user, shots[0]!.id, ref.versionId, { strength });
      expect(res.status, String(strength)).toBe(400);
    }
    expect(
      (
        await api(user.cookie, "POST", "/api/batches", {
          folderId,
          designStyle: "modern",
          items: [{ photoId: shots[1]!.id, roomType: "bedroom" }],
          lookStrength: 0.6,
        })
      ).status,
    ).toBe(400);

    // A photo outside any folder has no listing to give a look to.
    const [loose] = await photosOf(user.id, 1);
    const looseVersion = await stagedVersion(user, loose!.id);
    const outside = await look(user, loose!.id, looseVersion.versionId);
    expect(outside.status).toBe(400);
    expect(outside.body.error).toBe(LOOK_NEEDS_FOLDER);

    // The stranger's look forms on the owner's folder: nothing found, nothing changed.
    const strangerForms: Record<string, string>[] = [
      { intent: "clear-look" },
      { intent: "look-strength", strength: "0.5" },
    ];
    for (const fields of strangerForms) {
      expect(await dashboardForm(stranger, { folderId, ...fields })).toMatchObject({ ok: false, code: "not_found" });
    }
    // The owner's own form with a strength off the steps, or on a folder without a look.
    expect(await dashboardForm(user, { folderId, intent: "look-strength", strength: "0.6" })).toMatchObject({
      ok: false,
      code: "invalid",
    });
    const bare = await folderOf(user.id);
    expect(await dashboardForm(user, { folderId: bare, intent: "look-strength", strength: "0.5" })).toMatchObject({
      ok: false,
      code: "conflict",
    });
    expect(await dashboardForm(user, { folderId: "../x", intent: "clear-look" })).toMatchObject({ ok: false });
    expect(await db.select().from(folders).where(eq(folders.id, folderId)).get()).toEqual(before);
  });

  it("a look whose photo is in the trash is not sent; deleted for good, the folder's look is cleared", async () => {
    const { user, folderId, shots, refPhotoId } = await listingWithLook(10, 2);
    await db.update(photos).set({ trashedAt: Date.now() }).where(eq(photos.id, refPhotoId));
    const res = await api(user.cookie, "POST", `/api/photos/${shots[1]!.id}/jobs`, STAGE);
    expect(res.body.job.params).not.toHaveProperty("styleReference");
    await settleJob(user.cookie, res.body.job.id);
    expectNoReference(stagingCalls()[0]!);

    // Deleted for good from the trash; a photo with versions says so too (D1's `changes` counts the cascaded rows,
    // which once made it answer "not found").
    const deleted = await dashboardForm(user, { intent: "delete-forever", photoId: refPhotoId });
    expect(deleted).toEqual({ ok: true, message: "Photo deleted for good." });
    expect(await db.select().from(photos).where(eq(photos.id, refPhotoId)).get()).toBeUndefined();
    const folder = await db.select().from(folders).where(eq(folders.id, folderId)).get();
    expect(folder!.lookVersionId).toBeNull();
  });

  it("a queued job asked with the look goes without it when the look's photo is trashed before its call", async () => {
    const { user, shots, ref, refPhotoId, bytes } = await listingWithLook(12, 6);
    // Four calls at once fill the plan's concurrency and wait; the fifth job is asked with the look and queued.
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    provider.hold = () => held;
    const running = [];
    for (const p of shots.slice(1, 5)) running.push(await api(user.cookie, "POST", `/api/photos/${p.id}/jobs`, STAGE));
    for (let i = 0; i < 200 && stagingCalls().length < 4; i++) await new Promise((r) => setTimeout(r, 10));
    expect(stagingCalls()).toHaveLength(4);
    const queued = await api(user.cookie, "POST", `/api/photos/${shots[5]!.id}/jobs`, STAGE);
    expect(queued.body.job.params.styleReference).toMatchObject({ versionId: ref.versionId });
    await db.update(photos).set({ trashedAt: Date.now() }).where(eq(photos.id, refPhotoId));
    release();
    for (const r of [...running, queued])
      expect((await settleJob(user.cookie, r.body.job.id)).status).toBe("succeeded");
    const calls = stagingCalls();
    expect(calls).toHaveLength(5);
    for (const call of calls.slice(0, 4))
      expectReference(call, refPhotoId, ref.versionId, bytes, DEFAULT_LOOK_STRENGTH);
    expectNoReference(calls[4]!);
  });
});
