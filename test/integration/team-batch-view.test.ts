import { env } from "cloudflare:workers";
import { teamMembers, users } from "@db/schema";
import { db } from "@test/support/factories";
import { api, onPlan, photosOf, settleBatch } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { addMember, makeTeam, teamFolder } from "@test/support/teams";
import { workerFetch } from "@test/support/worker";
import { stateDigest } from "@workers/services/fixtures";
import { batchPage, retryBatchFromForm } from "@workers/services/jobs/batch-pages";
import { and, eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";

// Teammates see a team batch's progress (docs/decisions/0317-teammates-see-a-team-batch.md): every active member of
// the team whose pool pays for a batch sees its page and GET /api/batches/:id, with who started it; only its member
// retries it. A stranger, a removed member and a made-up id are answered alike (404), nothing written.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const digest = () => stateDigest({ env, bucket: env.PHOTOS });

/** A team listing with 2 photos, a member (Maya) who staged them as a batch, a teammate, and its batch settled. */
async function teamBatch(opts: { fail?: boolean } = {}) {
  const owner = await onPlan(null, 0);
  const teamId = await makeTeam(owner.id, { credits: 5 });
  const folderId = await teamFolder(teamId, owner.id);
  const member = await onPlan("Starter plan", 4);
  const mate = await onPlan("Starter plan", 4);
  await db.update(users).set({ name: "Maya Member" }).where(eq(users.id, member.id));
  await addMember(teamId, member.id);
  await addMember(teamId, mate.id);
  const photos = await photosOf(member.id, 2, folderId);
  if (opts.fail) provider.failEvery = 1;
  const r = await api(member.cookie, "POST", "/api/batches", {
    designStyle: "Modern",
    folderId,
    items: photos.map((p) => ({ photoId: p.id, roomType: "Bedroom" })),
  });
  expect(r.status).toBe(202);
  const batch = await settleBatch(member.cookie, r.body.batch.id);
  provider.failEvery = 0;
  return { owner, teamId, folderId, member, mate, batchId: r.body.batch.id as string, batch };
}

describe("a team batch's progress, seen by teammates", () => {
  it("an active teammate sees the page and the API's view, with who started it; the member sees their own as before", async () => {
    const { owner, member, mate, batchId, batch } = await teamBatch();
    expect(batch.counts).toMatchObject({ done: 2 });

    const own = await batchPage(db, member.id, batchId);
    expect(own).toMatchObject({ startedBy: null });
    for (const viewer of [mate, owner]) {
      const page = await batchPage(db, viewer.id, batchId);
      expect(page!.startedBy).toBe("Maya Member");
      expect(page!.batch).toEqual(own!.batch);
      const shown = await api(viewer.cookie, "GET", `/api/batches/${batchId}`);
      expect(shown.status).toBe(200);
      expect(shown.body.batch).toEqual(own!.batch);
      // Each result the page links is theirs to open.
      for (const item of page!.batch.items) {
        const thumb = await workerFetch(item.thumbUrl!, { headers: { Cookie: viewer.cookie } });
        await thumb.arrayBuffer();
        expect(thumb.status).toBe(200);
      }
    }
  });

  it("a teammate cannot retry another member's batch (403, nothing taken); its member can", async () => {
    const { mate, member, batchId, batch } = await teamBatch({ fail: true });
    expect(batch.counts).toMatchObject({ failed: 2 });
    const before = await digest();
    const form = await retryBatchFromForm({ db, env }, mate.id, batchId, {});
    expect(form).toMatchObject({ ok: false, code: "forbidden" });
    expect(!form.ok && form.error).toBe("Only Maya Member, who started this batch, can retry it.");
    const viaApi = await api(mate.cookie, "POST", `/api/batches/${batchId}/retry`, {});
    expect(viaApi.status).toBe(403);
    expect(await digest()).toEqual(before);
    expect(provider.calls).toHaveLength(2);
    const retried = await retryBatchFromForm({ db, env }, member.id, batchId, {});
    expect(retried).toMatchObject({ ok: true, retried: 2 });
  });

  it("a stranger, a removed teammate and a made-up id are the same 404, nothing written", async () => {
    const { teamId, mate, batchId } = await teamBatch();
    const stranger = await onPlan("Starter plan", 4);
    await db
      .update(teamMembers)
      .set({ removedAt: Date.now() })
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, mate.id)));
    const before = await digest();
    const madeUp = await api(stranger.cookie, "GET", "/api/batches/no-such-batch");
    expect(madeUp.status).toBe(404);
    const madeUpRetry = await api(stranger.cookie, "POST", "/api/batches/no-such-batch/retry", {});
    for (const viewer of [stranger, mate]) {
      expect(await batchPage(db, viewer.id, batchId)).toBeNull();
      const shown = await api(viewer.cookie, "GET", `/api/batches/${batchId}`);
      expect(shown.status).toBe(404);
      expect(shown.body).toEqual(madeUp.body);
      const retry = await api(viewer.cookie, "POST", `/api/batches/${batchId}/retry`, {});
      expect(retry.status).toBe(404);
      expect(retry.body).toEqual(madeUpRetry.body);
      expect(await retryBatchFromForm({ db, env }, viewer.id, batchId, {})).toMatchObject({ code: "not_found" });
    }
    expect(await digest()).toEqual(before);
  });

  it("a member's personal batch stays theirs: a teammate gets the 404 of a made-up id", async () => {
    const { member, mate } = await teamBatch();
    const own = await photosOf(member.id, 1);
    const r = await api(member.cookie, "POST", "/api/batches", {
      designStyle: "Modern",
      folderId: null,
      items: own.map((p) => ({ photoId: p.id, roomType: "Bedroom" })),
    });
    expect(r.status).toBe(202);
    await settleBatch(member.cookie, r.body.batch.id);
    expect(await batchPage(db, mate.id, r.body.batch.id)).toBeNull();
    const shown = await api(mate.cookie, "GET", `/api/batches/${r.body.batch.id}`);
    expect(shown.status).toBe(404);
  });
});
