import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { creditLedger, folders, photos, photoVersions, teamMembers, teamReservations, teams } from "@db/schema";
import { db, signedIn } from "@test/support/factories";
import { api, onPlan, photosOf, settleJob } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { allow, fakeStripe } from "@test/support/stripe";
import { addMember, makeTeam, teamFolder } from "@test/support/teams";
import { workerFetch } from "@test/support/worker";
import { teamObject, userObject } from "@workers/objects/client";
import { exportJson } from "@workers/objects/user/background";
import { stateDigest } from "@workers/services/fixtures";
import { looksOf } from "@workers/services/jobs/looks";
import { emptyTrash, foldersQuery, listPhotos } from "@workers/services/library";
import { runLibraryAction, TEAM_LISTING_NOT_DELETED } from "@workers/services/library-actions";
import { deleteAccount } from "@workers/services/mls/account-data";
import { publishOriginal } from "@workers/services/mls/links";
import { advertisedPages, closeSoldListings, setListingStatus } from "@workers/services/mls/listing-status";
import { resolveLink } from "@workers/services/mls/original-page";
import { and, eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";

// Shared listings (issue 47 item 4, docs/decisions/0280-shared-team-listings.md): a team's listing is every active
// member's to see and stage in, whoever uploaded its photos, on the team's pool; a personal folder stays its owner's;
// a removed member or a stranger finds nothing; the uploader's account deletion leaves the team's photos.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const PASSWORD = "correct horse 42";
const STAGE = { kind: "stage", roomType: "Bedroom", designStyle: "Modern" };
const digest = () => stateDigest({ env, bucket: env.PHOTOS });

/** An owner, member A (who uploads) and member B, a team listing with A's photo, and the pool. */
async function listing(credits = 5) {
  const owner = await onPlan(null, 0);
  const teamId = await makeTeam(owner.id, { credits });
  const a = await signedIn({ password: PASSWORD, credits: 3 });
  const b = await onPlan(null, 7);
  await addMember(teamId, a.id);
  await addMember(teamId, b.id);
  const folderId = await teamFolder(teamId, a.id);
  const [photo] = await photosOf(a.id, 1, folderId);
  return { owner, teamId, a, b, folderId, photo: photo! };
}

async function poolCredits(teamId: string) {
  return (await db.select({ credits: teams.credits }).from(teams).where(eq(teams.id, teamId)).get())!.credits;
}

/** Every read of a team listing's photo a member makes, as status codes. */
async function reads(cookie: string, photoId: string, versionId: string | null) {
  const paths = [`/api/photos/${photoId}/thumb`, `/api/photos/${photoId}/original`, `/api/photos/${photoId}/versions`];
  if (versionId) paths.push(`/api/photos/${photoId}/versions/${versionId}/image`);
  const out: number[] = [];
  for (const p of paths) {
    const res = await workerFetch(p, { headers: { Cookie: cookie } });
    await res.arrayBuffer();
    out.push(res.status);
  }
  return out;
}

describe("a team's shared listing", { timeout: 120_000 }, () => {
  it("member B sees A's photo in the listing, stages it, and the pool (not B's credits) is charged once", async () => {
    const { teamId, a, b, folderId, photo } = await listing(5);
    // In B's library: the listing, marked as the team's, and A's photo in it.
    const folderRows = await foldersQuery(db, b.id).all();
    expect(folderRows).toEqual([expect.objectContaining({ id: folderId, teamName: "Harbor Realty" })]);
    const page = await listPhotos(db, b.id, { kind: "folder", folderId });
    expect(page.photos.map((p) => p.id)).toEqual([photo.id]);
    expect(await reads(b.cookie, photo.id, null)).toEqual([200, 200, 200]);

    const started = await api(b.cookie, "POST", `/api/photos/${photo.id}/jobs`, STAGE, { "Idempotency-Key": "b-1" });
    expect(started.status).toBe(202);
    const job = await settleJob(b.cookie, started.body.job.id);
    expect(job.status).toBe("succeeded");
    await teamObject(env, teamId).reconcile(teamId);
    // Sent again with the same key: the same job, nothing more charged.
    const again = await api(b.cookie, "POST", `/api/photos/${photo.id}/jobs`, STAGE, { "Idempotency-Key": "b-1" });
    expect(again.body.job.id).toBe(started.body.job.id);

    expect(provider.calls).toHaveLength(1);
    expect(await poolCredits(teamId)).toBe(4);
    const held = await db.select().from(teamReservations).where(eq(teamReservations.teamId, teamId)).all();
    expect(held.map((r) => [r.memberId, r.status])).toEqual([[b.id, "committed"]]);
    // B's own credits and A's untouched.
    expect(await userObject(env, b.id).balance(b.id)).toBe(7);
    expect(await userObject(env, a.id).balance(a.id)).toBe(3);
    const bLedger = await db.select().from(creditLedger).where(eq(creditLedger.userId, b.id)).all();
    expect(bLedger.filter((r) => r.amount !== 0 && r.kind !== "grant")).toEqual([]);

    // The version is the photo's (A's scope), made by B, under the team's prefix; A and B both read it.
    const version = await db.select().from(photoVersions).where(eq(photoVersions.id, job.versionId!)).get();
    expect(version).toMatchObject({ photoId: photo.id, userId: a.id, createdBy: b.id });
    expect(version!.key.startsWith(`photos/team-${teamId}/${photo.id}/`)).toBe(true);
    const listed = await api(a.cookie, "GET", `/api/photos/${photo.id}/versions`);
    expect(listed.status).toBe(200);
    expect(listed.body.versions).toEqual([
      expect.objectContaining({ id: job.versionId, createdBy: b.id, createdAt: version!.createdAt }),
    ]);
    expect(await reads(b.cookie, photo.id, job.versionId)).toEqual([200, 200, 200, 200]);
  });

  it("a stranger and a removed member get 404 for the listing, its photos and a job on them, with nothing written", async () => {
    const { teamId, a, b, folderId, photo } = await listing(5);
    const stranger = await onPlan(null, 5);
    // A is removed: their own upload in the listing is the team's, no longer theirs to reach.
    await db
      .update(teamMembers)
      .set({ removedAt: Date.now() })
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, a.id)));
    for (const who of [stranger, a]) {
      expect(await foldersQuery(db, who.id).all()).toEqual([]);
      expect((await listPhotos(db, who.id, { kind: "folder", folderId })).photos).toEqual([]);
      expect((await listPhotos(db, who.id, { kind: "all" })).photos).toEqual([]);
      const before = await digest();
      expect(await reads(who.cookie, photo.id, null)).toEqual([404, 404, 404]);
      const job = await api(who.cookie, "POST", `/api/photos/${photo.id}/jobs`, STAGE, { "Idempotency-Key": "x" });
      expect(job.status).toBe(404);
      const chosen = await api(who.cookie, "POST", `/api/photos/${photo.id}/versions/none/choose`, {});
      expect(chosen.status).toBe(404);
      for (const fields of [
        { intent: "trash", photoId: photo.id },
        { intent: "move", photoId: photo.id, folderId: "" },
        { intent: "create-folder", name: "Mine now", teamId },
      ] as const) {
        const res = await runLibraryAction({ db, bucket: env.PHOTOS }, who.id, fields);
        expect(res).toMatchObject({ ok: false, code: "not_found" });
      }
      expect(await digest()).toEqual(before);
    }
    expect(provider.calls).toHaveLength(0);
    // B still reaches it all.
    expect(await reads(b.cookie, photo.id, null)).toEqual([200, 200, 200]);
  });

  it("a team admin gets 404 on a member's personal folder and its photos", async () => {
    const owner = await onPlan(null, 0);
    const teamId = await makeTeam(owner.id, { credits: 5 });
    const admin = await onPlan(null, 0);
    const agent = await onPlan(null, 2);
    await addMember(teamId, admin.id, "team_admin");
    await addMember(teamId, agent.id);
    const personal = (await runLibraryAction({ db, bucket: env.PHOTOS }, agent.id, { intent: "create-folder" })).ok;
    expect(personal).toBe(true);
    const folder = await db.select().from(folders).where(eq(folders.userId, agent.id)).get();
    const [photo] = await photosOf(agent.id, 1, folder!.id);
    const before = await digest();
    for (const who of [admin, owner]) {
      expect(await foldersQuery(db, who.id).all()).toEqual([]);
      expect((await listPhotos(db, who.id, { kind: "folder", folderId: folder!.id })).photos).toEqual([]);
      expect(await reads(who.cookie, photo!.id, null)).toEqual([404, 404, 404]);
      const job = await api(who.cookie, "POST", `/api/photos/${photo!.id}/jobs`, STAGE);
      expect(job.status).toBe(404);
    }
    expect(await digest()).toEqual(before);
    // Moving it into the team is the owner's or a team admin's, of their own folder only: the agent is refused.
    const moved = await runLibraryAction({ db, bucket: env.PHOTOS }, agent.id, {
      intent: "folder-to-team",
      folderId: folder!.id,
      teamId,
    });
    expect(moved).toMatchObject({ ok: false, code: "forbidden" });
    const byAdmin = await runLibraryAction({ db, bucket: env.PHOTOS }, admin.id, {
      intent: "folder-to-team",
      folderId: folder!.id,
      teamId,
    });
    expect(byAdmin).toMatchObject({ ok: false, code: "not_found" });
    expect(await digest()).toEqual(before);
  });

  it("a member creates a team listing and an admin moves a personal folder in: every member then sees it", async () => {
    const owner = await onPlan(null, 0);
    const teamId = await makeTeam(owner.id, { credits: 5 });
    const agent = await onPlan(null, 0);
    await addMember(teamId, agent.id);
    const made = await runLibraryAction({ db, bucket: env.PHOTOS }, agent.id, {
      intent: "create-folder",
      name: "9 Pier Road",
      teamId,
    });
    expect(made.ok).toBe(true);
    const ownerFolder = await db.select().from(folders).where(eq(folders.userId, owner.id)).get();
    expect(ownerFolder).toBeUndefined();
    expect((await foldersQuery(db, owner.id).all()).map((f) => f.name)).toEqual(["9 Pier Road"]);
    await runLibraryAction({ db, bucket: env.PHOTOS }, owner.id, { intent: "create-folder", name: "Owner's own" });
    const own = await db.select().from(folders).where(eq(folders.userId, owner.id)).get();
    expect(own?.teamId).toBeNull();
    expect((await foldersQuery(db, agent.id).all()).map((f) => f.name)).toEqual(["9 Pier Road"]);
    const moved = await runLibraryAction({ db, bucket: env.PHOTOS }, owner.id, {
      intent: "folder-to-team",
      folderId: own!.id,
      teamId,
    });
    expect(moved.ok).toBe(true);
    expect((await foldersQuery(db, agent.id).all()).map((f) => f.name).sort()).toEqual(["9 Pier Road", "Owner's own"]);
  });

  it("deleting member A's account leaves the listing's photos, versions and original page readable by B", async () => {
    const { owner, teamId, a, b, folderId, photo } = await listing(5);
    const [personal] = await photosOf(a.id, 1);
    const started = await api(b.cookie, "POST", `/api/photos/${photo.id}/jobs`, STAGE);
    const job = await settleJob(b.cookie, started.body.job.id);
    expect(job.status).toBe("succeeded");
    await teamObject(env, teamId).reconcile(teamId);
    const aStaged = await api(a.cookie, "POST", `/api/photos/${photo.id}/jobs`, STAGE);
    const aJob = await settleJob(a.cookie, aStaged.body.job.id);
    expect(aJob.status).toBe("succeeded");

    // A published the listing's original page: it is the team's, and stays up.
    const published = await publishOriginal(db, a.id, photo.id, aJob.versionId!, "again", Date.now());
    if (!published.ok) throw new Error(published.error);
    const res = await deleteAccount({ db, env, stripe: fakeStripe().stripe, clock: Date.now, rateLimit: allow }, a.id, {
      password: PASSWORD,
    });
    expect(res).toEqual({ ok: true });
    const stub = userObject(env, a.id);
    for (let i = 0; i < 50 && (await runDurableObjectAlarm(stub)); i++);

    // A's personal photo is gone, rows and bytes; the team's stays, with both versions and their bytes.
    expect(await db.select().from(photos).where(eq(photos.id, personal!.id)).get()).toBeUndefined();
    expect((await env.PHOTOS.list({ prefix: `photos/${a.id}/${personal!.id}/` })).objects).toEqual([]);
    expect(await db.select().from(photos).where(eq(photos.id, photo.id)).get()).toBeDefined();
    expect(await db.select().from(folders).where(eq(folders.id, folderId)).get()).toBeDefined();
    const versions = await api(b.cookie, "GET", `/api/photos/${photo.id}/versions`);
    expect(versions.status).toBe(200);
    expect(versions.body.versions.map((v: { createdBy: string }) => v.createdBy).sort()).toEqual([a.id, b.id].sort());
    expect(await resolveLink(db, published.token, Date.now())).toMatchObject({ ok: true });
    for (const v of versions.body.versions as { id: string }[]) {
      expect(await reads(b.cookie, photo.id, v.id)).toEqual([200, 200, 200, 200]);
    }
    // A's membership ended with the account (its seat freed); B's and the owner's did not.
    const members = await db.select().from(teamMembers).where(eq(teamMembers.teamId, teamId)).all();
    const removed = (id: string) => members.find((m) => m.userId === id)?.removedAt ?? null;
    expect(removed(a.id)).not.toBeNull();
    expect([removed(b.id), removed(owner.id)]).toEqual([null, null]);
  });

  it("a team listing cannot be deleted, even by the member who made it; a removed maker changes none of its settings", async () => {
    const { teamId, a, b, folderId, photo } = await listing(5);
    const staged = await api(b.cookie, "POST", `/api/photos/${photo.id}/jobs`, STAGE, { "Idempotency-Key": "b-look" });
    const job = await settleJob(b.cookie, staged.body.job.id);
    // A, the listing's maker, sets its look from B's result while a member.
    const look = await api(a.cookie, "POST", `/api/photos/${photo.id}/versions/${job.versionId}/look`, {});
    expect(look.status).toBe(200);
    // The look reaches B's own upload into the listing A made, as the folder page says it does.
    const [bPhoto] = await photosOf(b.id, 1, folderId);
    expect((await looksOf(db, b.id, [bPhoto!.id])).get(bPhoto!.id)).toMatchObject({ versionId: job.versionId });
    let before = await digest();
    const deleted = await runLibraryAction({ db, bucket: env.PHOTOS }, a.id, { intent: "delete-folder", folderId });
    expect(deleted).toMatchObject({ ok: false, code: "conflict", error: TEAM_LISTING_NOT_DELETED });
    expect(await digest()).toEqual(before);

    await db
      .update(teamMembers)
      .set({ removedAt: Date.now() })
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, a.id)));
    before = await digest();
    const sold = await api(a.cookie, "PUT", `/api/folders/${folderId}/status`, { status: "sold", closeAfterDays: 0 });
    expect(sold.status).toBe(404);
    const details = await api(a.cookie, "PUT", `/api/folders/${folderId}/listing`, { address: "1 Elsewhere" });
    expect(details.status).toBe(404);
    for (const fields of [
      { intent: "look-strength", folderId, strength: "0.5" },
      { intent: "clear-look", folderId },
      { intent: "delete-folder", folderId },
    ] as const) {
      const res = await runLibraryAction({ db, bucket: env.PHOTOS }, a.id, fields);
      expect(res, fields.intent).toMatchObject({ ok: false, code: "not_found" });
    }
    expect(await digest()).toEqual(before);
    const folder = await db.select().from(folders).where(eq(folders.id, folderId)).get();
    expect(folder).toMatchObject({ listingStatus: "active", lookVersionId: job.versionId, listingAddress: null });
  });

  it("a job request sent again after its photo's folder moved into the team is the same job, charged once", async () => {
    const owner = await onPlan(null, 3);
    const teamId = await makeTeam(owner.id, { credits: 5 });
    await runLibraryAction({ db, bucket: env.PHOTOS }, owner.id, { intent: "create-folder", name: "12 Quay Street" });
    const own = (await db.select().from(folders).where(eq(folders.userId, owner.id)).get())!;
    const [photo] = await photosOf(owner.id, 1, own.id);
    const send = () => api(owner.cookie, "POST", `/api/photos/${photo!.id}/jobs`, STAGE, { "Idempotency-Key": "q-1" });
    const first = await send();
    expect(first.status).toBe(202);
    expect((await settleJob(owner.cookie, first.body.job.id)).status).toBe("succeeded");
    const moved = await runLibraryAction({ db, bucket: env.PHOTOS }, owner.id, {
      intent: "folder-to-team",
      folderId: own.id,
      teamId,
    });
    expect(moved.ok).toBe(true);
    // The answer to the first sending was lost; the page sends it again with its key.
    const again = await send();
    expect(again.body.job.id).toBe(first.body.job.id);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    await teamObject(env, teamId).reconcile(teamId);
    expect(provider.calls).toHaveLength(1);
    expect(await userObject(env, owner.id).balance(owner.id)).toBe(2);
    expect(await poolCredits(teamId)).toBe(5);
    const held = await db.select().from(teamReservations).where(eq(teamReservations.teamId, teamId)).all();
    expect(held.map((r) => r.status)).toEqual(["released"]);
  });

  it("a sold team listing closes every member's original pages; a removed uploader's Empty trash leaves the team's", async () => {
    const { teamId, a, b, folderId, photo } = await listing(5);
    // B's own upload into the listing A made, staged and published by B.
    const [bPhoto] = await photosOf(b.id, 1, folderId);
    const staged = await api(b.cookie, "POST", `/api/photos/${bPhoto!.id}/jobs`, STAGE);
    const job = await settleJob(b.cookie, staged.body.job.id);
    const published = await publishOriginal(db, b.id, bPhoto!.id, job.versionId!, "again", Date.now());
    if (!published.ok) throw new Error(published.error);
    // While the listing A made advertises, B's page counts for B: trashing the photo asks first, and B's account
    // deletion names the page it would close.
    expect(await advertisedPages(db, b.id)).toBe(1);
    expect(
      await runLibraryAction({ db, bucket: env.PHOTOS }, b.id, { intent: "trash", photoId: bPhoto!.id }),
    ).toMatchObject({ ok: false, code: "conflict" });
    const now = Date.now();
    expect(await setListingStatus(db, a.id, folderId, { status: "sold", closeAfterDays: 0 }, now)).toMatchObject({
      ok: true,
    });
    expect(await closeSoldListings(db, now + 1)).toBe(1);
    expect(await resolveLink(db, published.token, now + 2)).toMatchObject({ ok: false });

    // A trashes their upload while a member, then is removed: their Empty trash no longer reaches it.
    expect((await runLibraryAction({ db, bucket: env.PHOTOS }, a.id, { intent: "trash", photoId: photo.id })).ok).toBe(
      true,
    );
    await db
      .update(teamMembers)
      .set({ removedAt: Date.now() })
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, a.id)));
    expect(await emptyTrash(db, env.PHOTOS, a.id)).toBe(0);
    expect(await db.select().from(photos).where(eq(photos.id, photo.id)).get()).toBeDefined();
  });

  it("a removed member's data export leaves out the team listing, their uploads in it and their versions", async () => {
    const { teamId, a, b, folderId, photo } = await listing(5);
    const [personal] = await photosOf(a.id, 1);
    const staged = await api(b.cookie, "POST", `/api/photos/${photo.id}/jobs`, STAGE);
    const job = await settleJob(b.cookie, staged.body.job.id);
    const ids = (rows: { id: string }[]) => rows.map((r) => r.id).sort();
    const member = (await exportJson(db, a.id))!;
    expect(ids(member.photos)).toEqual([personal!.id, photo.id].sort());
    expect(ids(member.folders)).toEqual([folderId]);
    expect(ids(member.versions)).toEqual([job.versionId!]);
    await db
      .update(teamMembers)
      .set({ removedAt: Date.now() })
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, a.id)));
    const removed = (await exportJson(db, a.id))!;
    expect(ids(removed.photos)).toEqual([personal!.id]);
    expect(removed.folders).toEqual([]);
    expect(removed.versions).toEqual([]);
  });
});
