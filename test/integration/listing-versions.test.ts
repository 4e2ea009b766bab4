import { env } from "cloudflare:workers";
import { createDb } from "@db/client";
import { creditLedger, creditReservations, jobs, photos, photoVersions } from "@db/schema";
import { db } from "@test/support/factories";
import { intercept } from "@test/support/intercept";
import { api, balance, expectSettled, onPlan, photosOf, rowsOf, settleJob } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { MISSING_RESULT } from "@workers/objects/user/jobs/variations";
import { chooseVersion } from "@workers/services/jobs/versions";
import { and, eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { FREE_REROLL_MS, REROLL_PAID_MESSAGE } from "~/shared/listing";

// Variations, the chosen version, the free re-roll and staging from a version
// (issue 15), against the provider stubbed at the isolate's fetch.
// docs/decisions/0140-batches-variations-rerolls.md

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const STAGE = { kind: "stage", roomType: "Bedroom", designStyle: "Modern" };

async function stage(cookie: string, photoId: string, extra: Record<string, unknown> = {}) {
  return api(cookie, "POST", `/api/photos/${photoId}/jobs`, { ...STAGE, ...extra });
}

async function stagedJob(user: { cookie: string }, photoId: string) {
  const res = await stage(user.cookie, photoId);
  expect(res.status).toBe(202);
  const job = await settleJob(user.cookie, res.body.job.id);
  expect(job.status).toBe("succeeded");
  return job;
}

describe("variations", () => {
  it("3 variations: 3 credits reserved together, one provider call, 3 versions; choosing the second shows it", async () => {
    const user = await onPlan("Starter plan", 5);
    const [photo] = await photosOf(user.id, 1);
    const res = await stage(user.cookie, photo!.id, { variations: 3 });
    expect(res.status).toBe(202);
    expect(res.body.credits).toBe(2);
    expect(res.body.jobIds).toHaveLength(3);
    const ids: string[] = res.body.jobIds;
    // Reserved together, before the answer: three reservations of one credit, keyed by each job.
    const held = await db.select().from(creditReservations).where(eq(creditReservations.userId, user.id)).all();
    expect(held.map((r) => r.key).sort()).toEqual([...ids].sort());
    expect(held.every((r) => r.amount === 1)).toBe(true);
    const settled = [];
    for (const id of ids) settled.push(await settleJob(user.cookie, id));
    expect(settled.map((j) => j.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    expect(provider.calls).toHaveLength(1);
    expect(provider.calls[0]!.body.num_images).toBe(3);
    expect(await balance(user.id)).toBe(2);

    // Each version holds its own image of the one answer, in order (each enlarged to listing size on its own).
    expect(provider.upscales).toHaveLength(3);
    for (const [i, job] of settled.entries()) {
      const v = await db.select().from(photoVersions).where(eq(photoVersions.id, job.versionId!)).get();
      const bytes = new Uint8Array(await (await env.PHOTOS.get(v!.key))!.arrayBuffer());
      expect(provider.upscales[i]!.input).toEqual(provider.calls[0]!.output[i]);
      expect(bytes).toEqual(provider.upscales[i]!.output[0]);
    }
    const shown = async () => (await db.select().from(photos).where(eq(photos.id, photo!.id)).get())!.processedKey;
    const versionKey = async (id: string) =>
      (await db.select().from(photoVersions).where(eq(photoVersions.id, id)).get())!.key;
    expect(await shown()).toBe(await versionKey(settled[0]!.versionId!));

    const chosen = await api(
      user.cookie,
      "POST",
      `/api/photos/${photo!.id}/versions/${settled[1]!.versionId}/choose`,
      {},
    );
    expect(chosen.status).toBe(200);
    expect(await shown()).toBe(await versionKey(settled[1]!.versionId!));
    // The shown image is the chosen version's bytes.
    const versions = await api(user.cookie, "GET", `/api/photos/${photo!.id}/versions`);
    expect(versions.body.versions).toHaveLength(3);
    await expectSettled(user.id);
  });

  it("a result's thumbnail made while its version is being chosen is the photo's thumbnail too", async () => {
    const user = await onPlan("Starter plan", 5);
    const [photo] = await photosOf(user.id, 1);
    const res = await stage(user.cookie, photo!.id, { variations: 2 });
    expect(res.status).toBe(202);
    for (const id of res.body.jobIds as string[]) expect((await settleJob(user.cookie, id)).status).toBe("succeeded");
    const versionOf = async (id: string) =>
      (await db.select().from(photoVersions).where(eq(photoVersions.id, id)).get())!;
    // Each result's thumbnail is made after its commit: wait for the second's.
    await expect.poll(async () => (await versionOf(res.body.jobIds[1])).thumbKey).toMatch(/\.thumb\.jpg$/);
    const second = await versionOf(res.body.jobIds[1]);
    const thumbKey = second.thumbKey;
    expect(thumbKey).not.toBe(second.key);
    // The second's thumbnail is still being made (its row points at the image itself), as right after its commit.
    await db.update(photoVersions).set({ thumbKey: second.key }).where(eq(photoVersions.id, second.id));
    // It lands (workers/objects/user/jobs/produce.ts finishThumb's two writes) after the choice has read the version
    // and before the choice writes the photo, which still shows the first.
    const land = async () => {
      await db.batch([
        db.update(photoVersions).set({ thumbKey }).where(eq(photoVersions.id, second.id)),
        db
          .update(photos)
          .set({ processedThumbKey: thumbKey })
          .where(and(eq(photos.id, photo!.id), eq(photos.processedKey, second.key))),
      ]);
    };
    const chosen = await chooseVersion(
      createDb(landingBeforePhotoWrite(env.DB, land)),
      user.id,
      photo!.id,
      second.id,
      1,
    );
    expect(chosen.ok).toBe(true);
    const shown = (await db.select().from(photos).where(eq(photos.id, photo!.id)).get())!;
    expect(shown.processedKey).toBe(second.key);
    expect(shown.processedThumbKey).toBe(thumbKey);
    await expectSettled(user.id);
  });

  it("a version chosen while another job of the photo runs stays shown; a job asked after the choice is shown", async () => {
    const user = await onPlan("Starter plan", 5);
    const [photo] = await photosOf(user.id, 1);
    const first = await stagedJob(user, photo!.id);
    const shownKey = async () => (await db.select().from(photos).where(eq(photos.id, photo!.id)).get())!.processedKey;
    const keyOf = async (id: string) =>
      (await db.select().from(photoVersions).where(eq(photoVersions.id, id)).get())!.key;
    expect(await shownKey()).toBe(await keyOf(first.versionId!));

    // A second staging is at the provider when its owner chooses the first result.
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    provider.hold = () => held;
    const running = await stage(user.cookie, photo!.id);
    expect(running.status).toBe(202);
    for (let i = 0; i < 200 && provider.calls.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(provider.calls).toHaveLength(2);
    const chosen = await api(user.cookie, "POST", `/api/photos/${photo!.id}/versions/${first.versionId}/choose`, {});
    expect(chosen.status).toBe(200);
    release();
    const second = await settleJob(user.cookie, running.body.job.id);
    expect(second.status).toBe("succeeded");
    // Kept as a version, charged, not shown over the choice.
    expect(await shownKey()).toBe(await keyOf(first.versionId!));
    const versions = await api(user.cookie, "GET", `/api/photos/${photo!.id}/versions`);
    expect(versions.body.versions.map((v: { id: string }) => v.id).sort()).toEqual(
      [first.versionId, second.versionId].sort(),
    );
    expect(versions.body.versions.find((v: { shown: boolean }) => v.shown).id).toBe(first.versionId);
    // The job's own answer says so too: its result is not the one shown.
    const secondAnswer = await api(user.cookie, "GET", `/api/jobs/${second.id}`);
    expect(secondAnswer.body.version).toMatchObject({ id: second.versionId, shown: false });
    expect(await balance(user.id)).toBe(3);

    // Asked for after the choice: its result is shown.
    provider.hold = null;
    const third = await stagedJob(user, photo!.id);
    expect(await shownKey()).toBe(await keyOf(third.versionId!));
    const thirdAnswer = await api(user.cookie, "GET", `/api/jobs/${third.id}?wait=1`);
    expect(thirdAnswer.body.version).toMatchObject({ id: third.versionId, shown: true });
    await expectSettled(user.id);
  });

  it("the provider returning fewer images than asked: each missing one refunded on its own", async () => {
    const user = await onPlan(null, 10);
    const [a, b] = await photosOf(user.id, 2);
    provider.maxImages = 2;
    const four = await stage(user.cookie, a!.id, { variations: 4 });
    expect(four.status).toBe(202);
    expect(four.body.credits).toBe(6);
    const jobsA = [];
    for (const id of four.body.jobIds as string[]) jobsA.push(await settleJob(user.cookie, id));
    expect(jobsA.map((j) => j.status)).toEqual(["succeeded", "succeeded", "failed", "failed"]);
    expect(jobsA[2]!.error).toBe(MISSING_RESULT);
    expect(await balance(user.id)).toBe(8);

    provider.maxImages = 1;
    const three = await stage(user.cookie, b!.id, { variations: 3 });
    const jobsB = [];
    for (const id of three.body.jobIds as string[]) jobsB.push(await settleJob(user.cookie, id));
    expect(jobsB.map((j) => j.status)).toEqual(["succeeded", "failed", "failed"]);
    expect(await balance(user.id)).toBe(7);

    // One refund row of one credit per missing result, under that result's own reservation.
    const refunds = await db
      .select()
      .from(creditLedger)
      .where(and(eq(creditLedger.userId, user.id), eq(creditLedger.kind, "refund")))
      .all();
    const missing = [...jobsA, ...jobsB].filter((j) => j.status === "failed").map((j) => j.id);
    expect(refunds.map((r) => r.reservationKey).sort()).toEqual(missing.sort());
    expect(refunds.every((r) => r.amount === 1)).toBe(true);
    await expectSettled(user.id);
  });

  it("a failed call refunds every variation; 5 variations or 0 are refused with nothing written", async () => {
    const user = await onPlan(null, 3);
    const [photo] = await photosOf(user.id, 1);
    provider.failEvery = 1;
    const res = await stage(user.cookie, photo!.id, { variations: 3 });
    for (const id of res.body.jobIds as string[]) expect((await settleJob(user.cookie, id)).status).toBe("failed");
    expect(await balance(user.id)).toBe(3);
    const before = (await rowsOf(user.id)).jobs.length;
    for (const variations of [5, 0, 2.5, "3x"]) {
      expect((await stage(user.cookie, photo!.id, { variations })).status).toBe(400);
    }
    expect(
      (await api(user.cookie, "POST", `/api/photos/${photo!.id}/jobs`, { kind: "sky", skyType: "day", variations: 2 }))
        .status,
    ).toBe(400);
    // 4 variations with 3 credits: refused as a whole.
    expect((await stage(user.cookie, photo!.id, { variations: 4 })).status).toBe(402);
    expect((await rowsOf(user.id)).jobs).toHaveLength(before);
    expect(await balance(user.id)).toBe(3);
    await expectSettled(user.id);
  });

  it("a stranger's version, or a version of another photo, cannot be chosen", async () => {
    const user = await onPlan(null, 3);
    const stranger = await onPlan(null, 3);
    const [mine, other] = await photosOf(user.id, 2);
    const [theirs] = await photosOf(stranger.id, 1);
    const myJob = await stagedJob(user, mine!.id);
    const otherJob = await stagedJob(user, other!.id);
    const theirJob = await stagedJob(stranger, theirs!.id);
    const shownBefore = (await db.select().from(photos).where(eq(photos.id, mine!.id)).get())!.processedKey;
    const tries: [string, string, string][] = [
      [stranger.cookie, mine!.id, myJob.versionId!],
      [user.cookie, mine!.id, theirJob.versionId!],
      [user.cookie, mine!.id, otherJob.versionId!],
      [user.cookie, theirs!.id, theirJob.versionId!],
      [user.cookie, mine!.id, "nope"],
    ];
    for (const [cookie, photoId, versionId] of tries) {
      const r = await api(cookie, "POST", `/api/photos/${photoId}/versions/${versionId}/choose`, {});
      expect(r.status, `${photoId}/${versionId}`).toBe(404);
    }
    expect((await db.select().from(photos).where(eq(photos.id, mine!.id)).get())!.processedKey).toBe(shownBefore);
    const theirsNow = (await db.select().from(photos).where(eq(photos.id, theirs!.id)).get())!.processedKey;
    expect(theirsNow).toBe(
      (await db.select().from(photoVersions).where(eq(photoVersions.id, theirJob.versionId!)).get())!.key,
    );
  });
});

describe("re-roll", () => {
  it("the first re-roll within 7 days is free and in the ledger with its reason; the next costs 1 and is said first", async () => {
    const user = await onPlan(null, 3);
    const [photo] = await photosOf(user.id, 1);
    const job = await stagedJob(user, photo!.id);
    expect(await balance(user.id)).toBe(2);

    const quote = await api(user.cookie, "GET", `/api/jobs/${job.id}/reroll`);
    expect(quote.status).toBe(200);
    expect(quote.body.quote.cost).toBe(0);
    const free = await api(user.cookie, "POST", `/api/jobs/${job.id}/reroll`, {});
    expect(free.status).toBe(202);
    expect(free.body.cost).toBe(0);
    expect(free.body.credits).toBe(2);
    const rerolled = await settleJob(user.cookie, free.body.job.id);
    expect(rerolled.status).toBe("succeeded");
    expect(await balance(user.id)).toBe(2);
    // A zero-credit reservation with its reason, committed like any other.
    const rows = await db.select().from(creditLedger).where(eq(creditLedger.reservationKey, free.body.job.id)).all();
    expect(rows.map((r) => [r.kind, r.amount])).toEqual([
      ["reserve", 0],
      ["commit", 0],
    ]);
    expect(rows[0]!.reason).toMatch(/free re-roll/i);
    // Same choices, a new seed.
    expect(provider.calls).toHaveLength(2);
    const [orig, again] = provider.calls.map((c) => c.body);
    expect(again!.room_type).toBe(orig!.room_type);
    expect(again!.design_style).toBe(orig!.design_style);
    expect(again!.seed).not.toBe(orig!.seed);

    // The next one: its price is said, and without consent nothing is written.
    for (const id of [job.id, free.body.job.id]) {
      const q = await api(user.cookie, "GET", `/api/jobs/${id}/reroll`);
      expect(q.body.quote).toMatchObject({ cost: 1, message: REROLL_PAID_MESSAGE });
    }
    const before = await rowsOf(user.id);
    const refused = await api(user.cookie, "POST", `/api/jobs/${job.id}/reroll`, {});
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe(REROLL_PAID_MESSAGE);
    const after = await rowsOf(user.id);
    expect(after.jobs).toHaveLength(before.jobs.length);
    expect(after.ledger).toHaveLength(before.ledger.length);
    expect(await balance(user.id)).toBe(2);

    const paid = await api(user.cookie, "POST", `/api/jobs/${job.id}/reroll`, { acceptCharge: true });
    expect(paid.status).toBe(202);
    expect(paid.body.cost).toBe(1);
    expect(paid.body.credits).toBe(1);
    expect((await settleJob(user.cookie, paid.body.job.id)).status).toBe("succeeded");
    expect(await balance(user.id)).toBe(1);
    await expectSettled(user.id);
  });

  it("after 7 days from the original staging job the first re-roll is already paid", async () => {
    const user = await onPlan(null, 3);
    const [photo] = await photosOf(user.id, 1);
    const job = await stagedJob(user, photo!.id);
    const row = (await db.select().from(jobs).where(eq(jobs.id, job.id)).get())!;
    await db
      .update(jobs)
      .set({ createdAt: row.createdAt - FREE_REROLL_MS - 60_000 })
      .where(eq(jobs.id, job.id));
    const q = await api(user.cookie, "GET", `/api/jobs/${job.id}/reroll`);
    expect(q.body.quote.cost).toBe(1);
    expect((await api(user.cookie, "POST", `/api/jobs/${job.id}/reroll`, {})).status).toBe(409);
    expect(await balance(user.id)).toBe(2);
    const paid = await api(user.cookie, "POST", `/api/jobs/${job.id}/reroll`, { acceptCharge: true });
    expect(paid.body.cost).toBe(1);
    await settleJob(user.cookie, paid.body.job.id);
    expect(await balance(user.id)).toBe(1);
    // Six days old: still free.
    const [other] = await photosOf(user.id, 1);
    const second = await stagedJob(user, other!.id);
    await db
      .update(jobs)
      .set({ createdAt: Date.now() - 6 * 24 * 60 * 60 * 1000 })
      .where(eq(jobs.id, second.id));
    expect((await api(user.cookie, "GET", `/api/jobs/${second.id}/reroll`)).body.quote.cost).toBe(0);
    await expectSettled(user.id);
  });

  it("two free re-rolls at once: exactly one is free, the other is refused and costs nothing", async () => {
    const user = await onPlan(null, 2);
    const [photo] = await photosOf(user.id, 1);
    const job = await stagedJob(user, photo!.id);
    const answers = await Promise.all([
      api(user.cookie, "POST", `/api/jobs/${job.id}/reroll`, {}),
      api(user.cookie, "POST", `/api/jobs/${job.id}/reroll`, {}),
      api(user.cookie, "POST", `/api/jobs/${job.id}/reroll`, {}),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409, 409]);
    const ok = answers.find((a) => a.status === 202)!;
    expect(ok.body.cost).toBe(0);
    await settleJob(user.cookie, ok.body.job.id);
    const rerolls = (await rowsOf(user.id)).jobs.filter((j) => j.rerollOf === job.id);
    expect(rerolls.map((j) => j.cost)).toEqual([0]);
    expect(await balance(user.id)).toBe(1);
    await expectSettled(user.id);
  });

  it("variations share one free re-roll: after the lead's, re-rolling another variation costs 1", async () => {
    const user = await onPlan("Starter plan", 5);
    const [photo] = await photosOf(user.id, 1);
    const res = await stage(user.cookie, photo!.id, { variations: 2 });
    expect(res.status).toBe(202);
    const [lead, sibling] = res.body.jobIds as string[];
    for (const id of [lead!, sibling!]) expect((await settleJob(user.cookie, id)).status).toBe("succeeded");
    expect((await api(user.cookie, "GET", `/api/jobs/${sibling}/reroll`)).body.quote.cost).toBe(0);
    const free = await api(user.cookie, "POST", `/api/jobs/${sibling}/reroll`, {});
    expect(free.status).toBe(202);
    expect(free.body.cost).toBe(0);
    await settleJob(user.cookie, free.body.job.id);
    // Counted against the request's first job, whichever variation was re-rolled.
    const rerolls = (await rowsOf(user.id)).jobs.filter((j) => j.rerollOf !== null);
    expect(rerolls.map((j) => j.rerollOf)).toEqual([lead]);
    for (const id of [lead!, sibling!]) {
      const quote = await api(user.cookie, "GET", `/api/jobs/${id}/reroll`);
      expect(quote.body.quote).toMatchObject({ cost: 1, message: REROLL_PAID_MESSAGE });
    }
    expect(await balance(user.id)).toBe(3);
    await expectSettled(user.id);
  });

  it("only the owner's succeeded staging can be re-rolled", async () => {
    const user = await onPlan(null, 3);
    const stranger = await onPlan(null, 3);
    const [photo] = await photosOf(user.id, 1);
    const job = await stagedJob(user, photo!.id);
    expect((await api(stranger.cookie, "GET", `/api/jobs/${job.id}/reroll`)).status).toBe(404);
    expect((await api(stranger.cookie, "POST", `/api/jobs/${job.id}/reroll`, { acceptCharge: true })).status).toBe(404);
    const removal = await api(user.cookie, "POST", `/api/photos/${photo!.id}/jobs`, { kind: "removal" });
    await settleJob(user.cookie, removal.body.job.id);
    expect((await api(user.cookie, "POST", `/api/jobs/${removal.body.job.id}/reroll`, {})).status).toBe(400);
    expect(await balance(stranger.id)).toBe(3);
    expect(await balance(user.id)).toBe(1);
  });
});

describe("staging from a version", () => {
  it("removal, then staging of the emptied version: the provider receives the removal's output as its input", async () => {
    const user = await onPlan(null, 6);
    const [photo] = await photosOf(user.id, 1);
    const removal = await api(user.cookie, "POST", `/api/photos/${photo!.id}/jobs`, { kind: "removal" });
    const emptied = await settleJob(user.cookie, removal.body.job.id);
    expect(emptied.status).toBe("succeeded");
    expect(provider.calls[0]!.path).toBe("/remove_objects_from_room");
    // The emptied room is stored as enlarged to listing size.
    expect(provider.upscales[0]!.input).toEqual(provider.calls[0]!.output[0]);
    const removalOut = provider.upscales[0]!.output[0]!;

    const staged = await stage(user.cookie, photo!.id, { sourceVersionId: emptied.versionId, variations: 2 });
    expect(staged.status).toBe(202);
    for (const id of staged.body.jobIds as string[]) await settleJob(user.cookie, id);
    const stageCall = provider.calls[1]!;
    expect(stageCall.path).toBe("/generate_designs_for_room");
    expect(stageCall.input).toEqual(removalOut);
    expect(stageCall.input).not.toEqual(provider.calls[0]!.input);

    // A re-roll of it starts from the same emptied room.
    const reroll = await api(user.cookie, "POST", `/api/jobs/${staged.body.jobIds[0]}/reroll`, {});
    expect(reroll.status).toBe(202);
    await settleJob(user.cookie, reroll.body.job.id);
    expect(provider.calls[2]!.input).toEqual(removalOut);

    // Staging from the original still sends the original.
    const plain = await stage(user.cookie, photo!.id, { sourceVersionId: "original" });
    await settleJob(user.cookie, plain.body.job.id);
    expect(provider.calls[3]!.input).toEqual(provider.calls[0]!.input);
    expect(await balance(user.id)).toBe(6 - 1 - 2 - 1);
    await expectSettled(user.id);
  });
});

/** The database as `d1`, where `land` runs once, just before the first statement that writes the photos table. */
function landingBeforePhotoWrite(d1: D1Database, land: () => Promise<void>): D1Database {
  let landed = false;
  return intercept(d1, "prepare", (query: string) => {
    const statement = d1.prepare(query);
    if (landed || !/^update "photos"/i.test(query)) return statement;
    return intercept(statement, "bind", (...values: unknown[]) => {
      const bound = statement.bind(...values);
      return intercept(bound, "run", (async () => {
        landed = true;
        await land();
        return bound.run();
      }) as D1PreparedStatement["run"]);
    });
  });
}
