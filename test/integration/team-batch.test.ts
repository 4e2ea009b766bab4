import { env } from "cloudflare:workers";
import { batches, creditLedger, jobs, teamLedger, teamMembers, teamReservations } from "@db/schema";
import { db } from "@test/support/factories";
import { api, balance, onPlan, photosOf, settleBatch } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { poolOf } from "@test/support/team-jobs";
import { addMember, makeTeam, teamFolder } from "@test/support/teams";
import { workerFetch } from "@test/support/worker";
import { randomToken } from "@workers/lib/crypto";
import { JOBS_ALREADY_STARTED, teamObject, userObject } from "@workers/objects/client";
import { stateDigest } from "@workers/services/fixtures";
import { batchForm, batchPage, startBatchFromForm } from "@workers/services/jobs/batch-pages";
import { submittedJobIds } from "@workers/services/jobs/start-queued";
import { trashPhoto } from "@workers/services/library";
import { startPaidBy } from "@workers/services/teams/funding";
import { and, eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { memberLimitMessage, mixedBatchMessage, TEAM_POOL_EMPTY } from "~/shared/teams";

// A batch of a team listing's photos spends the team's pool, as a single team job does (issue 47: "whichever member
// starts a job, from the page, a batch or the API"): all or none before any provider call, the pool's and the
// limit's own words, ledger rows naming the member, failures given back to the pool, the retry on the pool, and the
// results in the shared listing for every member. docs/decisions/0310-a-team-listings-batch.md

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const digest = () => stateDigest({ env, bucket: env.PHOTOS });

/**
 * An owner, a member with 4 credits of their own and a teammate, a team listing (the owner's folder) with `photos`
 * photos: the first uploaded by the teammate, the others by the member.
 */
async function teamListing(pool: number, photos: number) {
  const owner = await onPlan(null, 0);
  const teamId = await makeTeam(owner.id, { credits: pool });
  const folderId = await teamFolder(teamId, owner.id);
  const member = await onPlan("Starter plan", 4);
  const mate = await onPlan("Starter plan", 4);
  await addMember(teamId, member.id);
  await addMember(teamId, mate.id);
  const list = [...(await photosOf(mate.id, 1, folderId)), ...(await photosOf(member.id, photos - 1, folderId))];
  return { owner, teamId, folderId, member, mate, photos: list };
}

const batchOf = (folderId: string | null, photoIds: string[]) => ({
  designStyle: "Modern",
  folderId,
  items: photoIds.map((photoId) => ({ photoId, roomType: "Bedroom" })),
});

/** The pool's reservations by status, and its credits. */
async function pool(teamId: string) {
  const rows = await db.select().from(teamReservations).where(eq(teamReservations.teamId, teamId)).all();
  const count = (s: string) => rows.filter((r) => r.status === s).length;
  return {
    credits: await poolOf(teamId),
    held: count("held"),
    committed: count("committed"),
    released: count("released"),
  };
}

async function jobsOf(userId: string) {
  return db.select().from(jobs).where(eq(jobs.userId, userId)).all();
}

describe("a batch in a team listing", () => {
  it("a member's batch of 3 charges the pool 3 and their own credits 0; every member sees the results", async () => {
    const { teamId, folderId, member, mate, photos } = await teamListing(5, 3);
    const r = await api(
      member.cookie,
      "POST",
      "/api/batches",
      batchOf(
        folderId,
        photos.map((p) => p.id),
      ),
    );
    expect(r.status).toBe(202);
    // The member is told their own credits, untouched.
    expect(r.body.credits).toBe(4);
    const batch = await settleBatch(member.cookie, r.body.batch.id);
    expect(batch.counts).toMatchObject({ done: 3, failed: 0 });
    await teamObject(env, teamId).reconcile(teamId);
    expect(provider.calls).toHaveLength(3);
    expect(await pool(teamId)).toEqual({ credits: 2, held: 0, committed: 3, released: 0 });
    expect(await balance(member.id)).toBe(4);
    // The member's own reservations are 0 credits; the pool's rows name the member, each job once.
    const own = await db.select().from(creditLedger).where(eq(creditLedger.userId, member.id)).all();
    expect(own.filter((row) => row.kind !== "grant").every((row) => row.amount === 0)).toBe(true);
    const ledger = await db.select().from(teamLedger).where(eq(teamLedger.teamId, teamId)).all();
    const charged = ledger.filter((row) => row.kind === "reserve");
    expect(charged.map((row) => row.memberId)).toEqual([member.id, member.id, member.id]);
    expect(new Set(charged.map((row) => row.jobId))).toEqual(new Set(batch.items.map((i) => i.jobId)));
    // Every job names the team; the batch is the member's, its folder the team's listing.
    expect((await jobsOf(member.id)).map((j) => j.teamId)).toEqual([teamId, teamId, teamId]);
    const row = await db.select().from(batches).where(eq(batches.id, r.body.batch.id)).get();
    expect(row).toMatchObject({ userId: member.id, folderId });
    // The teammate sees each result in the shared listing (the teammate's own photo included), made by the member.
    for (const item of batch.items) {
      const listed = await api(mate.cookie, "GET", `/api/photos/${item.photoId}/versions`);
      expect(listed.status).toBe(200);
      expect(listed.body.versions).toEqual([expect.objectContaining({ createdBy: member.id })]);
      const image = await workerFetch(item.thumbUrl!, { headers: { Cookie: mate.cookie } });
      await image.arrayBuffer();
      expect(image.status).toBe(200);
    }
    // The batch's page (its loader's read) is the member's: every item done, with its result.
    const page = await batchPage(db, member.id, r.body.batch.id);
    expect(page!.batch.items.map((i) => [i.status, i.thumbUrl !== null])).toEqual([
      ["done", true],
      ["done", true],
      ["done", true],
    ]);
  });

  it("a batch of 5 against a pool of 3 is refused whole in the pool's words, before any provider call", async () => {
    const { teamId, folderId, member, photos } = await teamListing(3, 5);
    const r = await api(
      member.cookie,
      "POST",
      "/api/batches",
      batchOf(
        folderId,
        photos.map((p) => p.id),
      ),
    );
    expect(r.status).toBe(402);
    expect(r.body.error).toBe(TEAM_POOL_EMPTY);
    expect(provider.calls).toHaveLength(0);
    expect(await pool(teamId)).toEqual({ credits: 3, held: 0, committed: 0, released: 0 });
    expect(await jobsOf(member.id)).toEqual([]);
    expect(await db.select().from(batches).where(eq(batches.userId, member.id)).all()).toEqual([]);
    // Never the member's own credits instead.
    expect(await balance(member.id)).toBe(4);
    // Three of them fit.
    const three = await api(
      member.cookie,
      "POST",
      "/api/batches",
      batchOf(
        folderId,
        photos.slice(0, 3).map((p) => p.id),
      ),
    );
    expect(three.status).toBe(202);
    await settleBatch(member.cookie, three.body.batch.id);
  });

  it("a member over their limit is refused in the limit's words, nothing taken", async () => {
    const { teamId, folderId, member, photos } = await teamListing(10, 3);
    expect(await teamObject(env, teamId).setMemberLimit(teamId, member.id, 2)).toBe(true);
    const r = await api(
      member.cookie,
      "POST",
      "/api/batches",
      batchOf(
        folderId,
        photos.map((p) => p.id),
      ),
    );
    expect(r.status).toBe(402);
    expect(r.body.error).toBe(memberLimitMessage(2));
    expect(provider.calls).toHaveLength(0);
    expect(await pool(teamId)).toEqual({ credits: 10, held: 0, committed: 0, released: 0 });
    expect(await jobsOf(member.id)).toEqual([]);
    // The page's form says the same words, not the member's own balance.
    const form = await startBatchFromForm({ db, env }, member.id, {
      folderId,
      designStyle: "Modern",
      quoted: "3",
      ...Object.fromEntries(
        photos.flatMap((p) => [
          [`pick:${p.id}`, "1"],
          [`room:${p.id}`, "Bedroom"],
        ]),
      ),
    });
    expect(form).toMatchObject({ ok: false, error: memberLimitMessage(2) });
    expect(provider.calls).toHaveLength(0);
  });

  it("a stranger's batch on the team's listing is the 404 of a made-up folder, with nothing written", async () => {
    const { folderId, photos } = await teamListing(5, 2);
    const stranger = await onPlan("Starter plan", 5);
    const ids = photos.map((p) => p.id);
    const before = await digest();
    const madeUp = await api(stranger.cookie, "POST", "/api/batches", batchOf("no-such-folder", ids));
    const theirs = await api(stranger.cookie, "POST", "/api/batches", batchOf(folderId, ids));
    expect(madeUp.status).toBe(404);
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual(madeUp.body);
    // Without the folder, the listing's photos are not found either, as a made-up photo id.
    const noFolder = await api(stranger.cookie, "POST", "/api/batches", batchOf(null, ids));
    const madeUpPhoto = await api(stranger.cookie, "POST", "/api/batches", batchOf(null, ["no-such-photo"]));
    expect(noFolder.status).toBe(404);
    expect(noFolder.body).toEqual(madeUpPhoto.body);
    expect(await digest()).toEqual(before);
    expect(provider.calls).toHaveLength(0);
    // The batch form is a 404 too.
    expect(await batchForm(db, stranger.id, folderId)).toBeNull();
  });

  it("a failed item gives its credit back to the pool; the member's retry is charged to the pool once", async () => {
    const { teamId, folderId, member, photos } = await teamListing(5, 2);
    // The first provider call fails: one item of the batch fails, the other succeeds.
    provider.failEvery = 2;
    const r = await api(
      member.cookie,
      "POST",
      "/api/batches",
      batchOf(
        folderId,
        photos.map((p) => p.id),
      ),
    );
    expect(r.status).toBe(202);
    let batch = await settleBatch(member.cookie, r.body.batch.id);
    expect(batch.counts).toMatchObject({ done: 1, failed: 1 });
    await teamObject(env, teamId).reconcile(teamId);
    expect(await pool(teamId)).toEqual({ credits: 4, held: 0, committed: 1, released: 1 });
    provider.failEvery = 0;
    const retry = await api(
      member.cookie,
      "POST",
      `/api/batches/${r.body.batch.id}/retry`,
      {},
      {
        "Idempotency-Key": "retry-1",
      },
    );
    expect(retry.status).toBe(202);
    expect(retry.body.retried).toBe(1);
    // Sent again under its key: the same retry, charged once.
    const again = await api(
      member.cookie,
      "POST",
      `/api/batches/${r.body.batch.id}/retry`,
      {},
      {
        "Idempotency-Key": "retry-1",
      },
    );
    expect(again.status).toBe(202);
    batch = await settleBatch(member.cookie, r.body.batch.id);
    expect(batch.counts).toMatchObject({ done: 2, failed: 0 });
    await teamObject(env, teamId).reconcile(teamId);
    expect(await pool(teamId)).toEqual({ credits: 3, held: 0, committed: 2, released: 1 });
    expect(await balance(member.id)).toBe(4);
    expect((await jobsOf(member.id)).every((j) => j.teamId === teamId)).toBe(true);
  });

  it("a photo in the trash: the member's object records nothing and the pool's credits go back at once", async () => {
    const { teamId, folderId, member, photos } = await teamListing(5, 3);
    expect(await trashPhoto(db, member.id, photos[2]!.id)).toBe(true);
    const r = await api(
      member.cookie,
      "POST",
      "/api/batches",
      batchOf(
        folderId,
        photos.map((p) => p.id),
      ),
    );
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/trash/i);
    expect(provider.calls).toHaveLength(0);
    // Taken for the batch, then released in the same request: nothing left held for the alarm.
    expect(await pool(teamId)).toEqual({ credits: 5, held: 0, committed: 0, released: 3 });
    expect(await jobsOf(member.id)).toEqual([]);
  });

  it("the same batch sent twice at once under its key is started and charged to the pool once", async () => {
    const { teamId, folderId, member, photos } = await teamListing(5, 3);
    const body = {
      ...batchOf(
        folderId,
        photos.map((p) => p.id),
      ),
      submission: randomToken(),
    };
    const [a, b] = await Promise.all([
      api(member.cookie, "POST", "/api/batches", body),
      api(member.cookie, "POST", "/api/batches", body),
    ]);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(b.body.batch.id).toBe(a.body.batch.id);
    await settleBatch(member.cookie, a.body.batch.id);
    await teamObject(env, teamId).reconcile(teamId);
    // Whichever sending recorded the jobs, neither gave back the credits that pay for them.
    expect(await pool(teamId)).toEqual({ credits: 2, held: 0, committed: 3, released: 0 });
    expect(provider.calls).toHaveLength(3);
  });

  it("two sendings crossing between the objects: the one whose jobs the other recorded gives nothing back", async () => {
    const { teamId, folderId, member, photos } = await teamListing(5, 2);
    const submission = randomToken();
    const body = {
      ...batchOf(
        folderId,
        photos.map((p) => p.id),
      ),
      submission,
    };
    const ids = submittedJobIds("batch", member.id, submission, 2);
    let second: Awaited<ReturnType<typeof api>> | undefined;
    // The first sending takes the pool's credits; before it records its jobs, the second sending (the same form) runs
    // whole: it finds the credits held under the same job ids (taking nothing) and records the jobs. The first then
    // finds its jobs recorded, and must not give back the credits that pay for them.
    const first = await startPaidBy(env, teamId, member.id, ids, "AI stage (batch)", async () => {
      second = await api(member.cookie, "POST", "/api/batches", body);
      // The first sending's jobs are the same request: the same photos and choices (a new seed each).
      const recorded = await db.select().from(jobs).where(eq(jobs.userId, member.id)).all();
      const byId = new Map(recorded.map((j) => [j.id, j]));
      return userObject(env, member.id).startJobs(member.id, {
        submitted: true,
        jobs: ids.map((jobId) => ({
          jobId,
          photoId: byId.get(jobId)!.photoId,
          kind: "stage" as const,
          params: { ...byId.get(jobId)!.params, seed: 1 },
          cost: 1 as const,
          reason: "AI stage (batch)",
          teamId,
        })),
      });
    });
    expect(second!.status).toBe(202);
    expect(first.started).toMatchObject({ ok: false, error: JOBS_ALREADY_STARTED });
    await settleBatch(member.cookie, second!.body.batch.id);
    await teamObject(env, teamId).reconcile(teamId);
    expect(await pool(teamId)).toEqual({ credits: 3, held: 0, committed: 2, released: 0 });
    expect(provider.calls).toHaveLength(2);
  });

  it("a member removed since their batch: its retry is the 404 of a made-up batch, nothing taken", async () => {
    const { teamId, folderId, member, photos } = await teamListing(5, 2);
    provider.failEvery = 1;
    const r = await api(
      member.cookie,
      "POST",
      "/api/batches",
      batchOf(
        folderId,
        photos.map((p) => p.id),
      ),
    );
    expect(r.status).toBe(202);
    expect((await settleBatch(member.cookie, r.body.batch.id)).counts.failed).toBe(2);
    provider.failEvery = 0;
    await db
      .update(teamMembers)
      .set({ removedAt: Date.now() })
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, member.id)));
    await teamObject(env, teamId).reconcile(teamId);
    const before = await digest();
    const retry = await api(member.cookie, "POST", `/api/batches/${r.body.batch.id}/retry`, {});
    const madeUp = await api(member.cookie, "POST", "/api/batches/no-such-batch/retry", {});
    expect(retry.status).toBe(404);
    expect(retry.body).toEqual(madeUp.body);
    // The batch's progress shows nothing of the team's listing any more (no photo names, no results).
    const shown = await api(member.cookie, "GET", `/api/batches/${r.body.batch.id}`);
    expect(shown.body.batch.items).toEqual([]);
    expect(await digest()).toEqual(before);
    expect(await pool(teamId)).toEqual({ credits: 5, held: 0, committed: 0, released: 2 });
  });

  it("a batch mixing personal and team photos is refused naming one of each, nothing taken", async () => {
    const { teamId, member, photos } = await teamListing(5, 2);
    const [own] = await photosOf(member.id, 1);
    const before = await digest();
    const r = await api(member.cookie, "POST", "/api/batches", batchOf(null, [photos[1]!.id, own!.id]));
    expect(r.status).toBe(409);
    expect(r.body.error).toBe(
      mixedBatchMessage({ photo: photos[1]!.name, listing: "14 Harbor View" }, { photo: own!.name, listing: null }),
    );
    expect(r.body.error).toContain("is yours, paid from your own credits");
    expect(provider.calls).toHaveLength(0);
    expect(await digest()).toEqual(before);
    expect(await pool(teamId)).toEqual({ credits: 5, held: 0, committed: 0, released: 0 });
  });

  it("the batch form of a team listing offers every photo in it; the library's form only the member's own", async () => {
    const { folderId, member, photos } = await teamListing(5, 3);
    const [own] = await photosOf(member.id, 1);
    const listing = await batchForm(db, member.id, folderId);
    expect(new Set(listing!.candidates.map((c) => c.photo.id))).toEqual(new Set(photos.map((p) => p.id)));
    const library = await batchForm(db, member.id, null);
    expect(library!.candidates.map((c) => c.photo.id)).toEqual([own!.id]);
  });
});
