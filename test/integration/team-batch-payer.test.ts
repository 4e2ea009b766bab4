import { env } from "cloudflare:workers";
import { folders, teamLedger, teamMembers } from "@db/schema";
import { db } from "@test/support/factories";
import { api, balance, onPlan, photosOf, settleBatch } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { poolOf } from "@test/support/team-jobs";
import { addMember, makeTeam, teamFolder } from "@test/support/teams";
import { stateDigest } from "@workers/services/fixtures";
import { batchForm, startBatchFromForm } from "@workers/services/jobs/batch-pages";
import { and, eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { wrongPayerMessage } from "~/shared/teams";

// The library-wide batch page chooses who pays (docs/decisions/0318-who-pays-for-a-library-batch.md): the member's own
// credits or a team they are an active member of; only the photos payable by that choice are offered, and the server
// refuses a choice that is not theirs (404) or photos not paid from it (409), nothing written.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const digest = () => stateDigest({ env, bucket: env.PHOTOS });

/** A member of two teams (Harbor with a pool of 5, its listing with 2 photos; North, empty) with 1 photo of their own. */
async function member() {
  const owner = await onPlan(null, 0);
  const harbor = await makeTeam(owner.id, { credits: 5, name: "Harbor Realty" });
  const north = await makeTeam(owner.id, { name: "North Homes" });
  const listing = await teamFolder(harbor, owner.id);
  const northListing = await teamFolder(north, owner.id);
  const user = await onPlan("Starter plan", 4);
  await addMember(harbor, user.id);
  await addMember(north, user.id);
  const mate = await onPlan("Starter plan", 4);
  await addMember(harbor, mate.id);
  const teamPhotos = [...(await photosOf(mate.id, 1, listing)), ...(await photosOf(user.id, 1, listing))];
  const northPhotos = await photosOf(owner.id, 1, northListing);
  const [own] = await photosOf(user.id, 1);
  return { owner, harbor, north, listing, user, mate, teamPhotos, northPhotos, own: own! };
}

/** The form's fields for these photos, as the page sends them. */
function fields(photoIds: string[], extra: Record<string, string> = {}) {
  return {
    designStyle: "Modern",
    quoted: String(photoIds.length),
    ...Object.fromEntries(
      photoIds.flatMap((id) => [
        [`pick:${id}`, "1"],
        [`room:${id}`, "Bedroom"],
      ]),
    ),
    ...extra,
  };
}

describe("the library's batch page: who pays", () => {
  it("offers the member's own photos for their own credits, and every photo of a team's listings for that team's pool", async () => {
    const { harbor, north, user, teamPhotos, own } = await member();
    const ownForm = await batchForm(db, user.id, null);
    expect(ownForm!.payers).toEqual([
      { value: "own", label: "My own credits" },
      { value: harbor, label: "Harbor Realty's pool" },
      { value: north, label: "North Homes's pool" },
    ]);
    expect(ownForm!.payer).toBeNull();
    expect(ownForm!.candidates.map((c) => c.photo.id)).toEqual([own.id]);
    expect((await batchForm(db, user.id, null, "own"))!.candidates.map((c) => c.photo.id)).toEqual([own.id]);

    const teamForm = await batchForm(db, user.id, null, harbor);
    expect(teamForm!.payer).toEqual({ teamId: harbor, name: "Harbor Realty", pool: 5 });
    expect(new Set(teamForm!.candidates.map((c) => c.photo.id))).toEqual(new Set(teamPhotos.map((p) => p.id)));
    // A team listing's own page names its team as the payer, with no picker.
    const folderForm = await batchForm(db, user.id, teamForm!.candidates[0]!.photo.folderId);
    expect(folderForm).toMatchObject({ payer: { teamId: harbor, pool: 5 }, payers: [] });
  });

  it("a batch started with the team chosen is paid by its pool under the member's name", async () => {
    const { harbor, user, teamPhotos } = await member();
    const form = await batchForm(db, user.id, null, harbor);
    const ids = form!.candidates.map((c) => c.photo.id);
    const res = await startBatchFromForm(
      { db, env },
      user.id,
      fields(ids, { paidBy: harbor, submission: form!.submission }),
    );
    expect(res).toMatchObject({ ok: true, started: true });
    if (!res.ok || !res.started) throw new Error("not started");
    const batch = await settleBatch(user.cookie, res.batchId);
    expect(batch.counts).toMatchObject({ done: 2 });
    expect(await poolOf(harbor)).toBe(3);
    expect(await balance(user.id)).toBe(4);
    const charged = (await db.select().from(teamLedger).where(eq(teamLedger.teamId, harbor)).all()).filter(
      (r) => r.kind === "reserve",
    );
    expect(charged.map((r) => r.memberId)).toEqual([user.id, user.id]);
    expect(teamPhotos).toHaveLength(2);
  });

  it("refuses a team the member is not in, or was removed from, as a made-up team; nothing written", async () => {
    const { harbor, user, teamPhotos } = await member();
    const stranger = await onPlan("Starter plan", 4);
    const ids = teamPhotos.map((p) => p.id);
    expect(await batchForm(db, stranger.id, null, harbor)).toBeNull();
    expect(await batchForm(db, stranger.id, null, "nosuchteam")).toBeNull();
    const before = await digest();
    const madeUp = await api(stranger.cookie, "POST", "/api/batches", {
      designStyle: "Modern",
      paidBy: "nosuchteam",
      items: [{ photoId: "x", roomType: "Bedroom" }],
    });
    expect(madeUp.status).toBe(404);
    const theirs = await api(stranger.cookie, "POST", "/api/batches", {
      designStyle: "Modern",
      paidBy: harbor,
      items: ids.map((photoId) => ({ photoId, roomType: "Bedroom" })),
    });
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual(madeUp.body);
    expect(await digest()).toEqual(before);
    await db
      .update(teamMembers)
      .set({ removedAt: Date.now() })
      .where(and(eq(teamMembers.teamId, harbor), eq(teamMembers.userId, user.id)));
    expect(await batchForm(db, user.id, null, harbor)).toBeNull();
    const afterRemoval = await digest();
    const removed = await startBatchFromForm({ db, env }, user.id, fields(ids, { paidBy: harbor }));
    expect(removed).toMatchObject({ ok: false, code: "not_found", error: "That team was not found." });
    expect(await digest()).toEqual(afterRemoval);
    expect(provider.calls).toHaveLength(0);
  });

  it("refuses photos not payable by the choice (409, naming one), and a malformed choice (400); nothing written", async () => {
    const { harbor, north, user, teamPhotos, northPhotos, own } = await member();
    await db.update(folders).set({ name: "14 Harbor View" }).where(eq(folders.teamId, harbor));
    const before = await digest();
    // Own credits chosen, a team photo sent.
    const ownChosen = await startBatchFromForm({ db, env }, user.id, fields([teamPhotos[1]!.id], { paidBy: "own" }));
    expect(ownChosen).toMatchObject({
      ok: false,
      code: "conflict",
      error: wrongPayerMessage({ photo: teamPhotos[1]!.name, listing: "14 Harbor View" }, null),
    });
    // Harbor chosen, the member's own photo sent; then North's listing photo.
    const teamChosen = await api(user.cookie, "POST", "/api/batches", {
      designStyle: "Modern",
      paidBy: harbor,
      items: [{ photoId: own.id, roomType: "Bedroom" }],
    });
    expect(teamChosen.status).toBe(409);
    expect(teamChosen.body.error).toBe(wrongPayerMessage({ photo: own.name, listing: null }, "Harbor Realty"));
    const otherTeam = await api(user.cookie, "POST", "/api/batches", {
      designStyle: "Modern",
      paidBy: harbor,
      items: [{ photoId: northPhotos[0]!.id, roomType: "Bedroom" }],
    });
    expect(otherTeam.status).toBe(409);
    expect(north).toBeTruthy();
    const malformed = await api(user.cookie, "POST", "/api/batches", {
      designStyle: "Modern",
      paidBy: "../'; DROP",
      items: [{ photoId: own.id, roomType: "Bedroom" }],
    });
    expect(malformed.status).toBe(400);
    expect(await digest()).toEqual(before);
    expect(provider.calls).toHaveLength(0);
    expect(await poolOf(harbor)).toBe(5);
  });
});
