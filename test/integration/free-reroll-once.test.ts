import { creditLedger } from "@db/schema";
import { db } from "@test/support/factories";
import { api, balance, expectSettled, onPlan, photosOf, rowsOf, settleJob } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { refuseOverOne, roomAnswer, useRoomAsOriginal, windowGoneAnswer } from "@test/support/structure-room";
import { STRUCTURE_REFUSED } from "@workers/objects/user/jobs/structure";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { REROLL_PAID_MESSAGE } from "~/shared/listing";

// The free re-roll is free once per staging request, whatever became of it (issue 45 part 1,
// docs/decisions/0201-the-free-re-roll-is-used-once-started.md). The hostile run re-rolled one result five times,
// each answered 202 {"cost":0} and each refused by the structure check: a refused re-roll ended "failed", and only
// queued, running or succeeded ones counted, so every next one was quoted free again (two provider calls each).

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const TRUE = roomAnswer("stage");
const CHANGED = windowGoneAnswer("stage");

/** A user with `credits` and a living room staged once (charged), the provider answering the room as it is. */
async function staged(credits: number) {
  const user = await onPlan("Starter plan", credits);
  const [photo] = await photosOf(user.id, 1);
  await useRoomAsOriginal(photo!);
  // Production's limits refuse nothing (ADR 0215): this user's results are judged by the old two-outcome rule.
  await refuseOverOne(user.id);
  provider.answer = () => [TRUE];
  const res = await api(user.cookie, "POST", `/api/photos/${photo!.id}/jobs`, {
    kind: "stage",
    roomType: "Living Room",
    designStyle: "Modern",
  });
  const job = await settleJob(user.cookie, res.body.job.id);
  expect(job.status).toBe("succeeded");
  return { user, photo: photo!, job };
}

const quote = async (cookie: string, jobId: string) =>
  (await api(cookie, "GET", `/api/jobs/${jobId}/reroll`)).body.quote;
const reroll = (cookie: string, jobId: string, body: Record<string, unknown> = {}) =>
  api(cookie, "POST", `/api/jobs/${jobId}/reroll`, body);

describe("the free re-roll, once per staging request", { timeout: 60_000 }, () => {
  it("refused by the structure check, it was the free one: the next is quoted and charged a credit, in a loop too", async () => {
    const { user, job } = await staged(3);
    expect(await balance(user.id)).toBe(2);
    expect(await quote(user.cookie, job.id)).toMatchObject({ cost: 0 });

    provider.answer = () => [CHANGED];
    const calls = provider.calls.length;
    const free = await reroll(user.cookie, job.id);
    expect([free.status, free.body.cost]).toEqual([202, 0]);
    const refused = await settleJob(user.cookie, free.body.job.id);
    expect([refused.status, refused.error]).toEqual(["failed", STRUCTURE_REFUSED]);
    // Tried twice (the free second try), not charged.
    expect(provider.calls.length - calls).toBe(2);
    expect(await balance(user.id)).toBe(2);

    // The page's quote and the charge agree: a credit, said first.
    expect(await quote(user.cookie, job.id)).toEqual({
      rootJobId: job.id,
      cost: 1,
      message: REROLL_PAID_MESSAGE,
    });
    // The hostile run's loop: asked again and again without consent, each is refused and nothing is written.
    const before = await rowsOf(user.id);
    for (let i = 0; i < 4; i++) {
      const again = await reroll(user.cookie, job.id);
      expect([again.status, again.body.error]).toEqual([409, REROLL_PAID_MESSAGE]);
    }
    expect(await rowsOf(user.id)).toEqual(before);
    expect(provider.calls.length - calls).toBe(2);
    // A re-roll of the refused re-roll is not a way round: only a staged result can be re-rolled.
    expect((await reroll(user.cookie, refused.id)).status).toBe(400);

    // With consent, a paid re-roll: one credit, committed.
    provider.answer = () => [TRUE];
    const paid = await reroll(user.cookie, job.id, { acceptCharge: true });
    expect([paid.status, paid.body.cost, paid.body.credits]).toEqual([202, 1, 1]);
    expect((await settleJob(user.cookie, paid.body.job.id)).status).toBe("succeeded");
    expect(await balance(user.id)).toBe(1);
    const rerolls = (await rowsOf(user.id)).jobs.filter((j) => j.rerollOf === job.id);
    expect(rerolls.map((j) => [j.cost, j.status]).sort()).toEqual([
      [0, "failed"],
      [1, "succeeded"],
    ]);
    await expectSettled(user.id);
  });

  it("failed at the provider and refunded, it was the free one too", async () => {
    const { user, job } = await staged(2);
    provider.failEvery = 1;
    const free = await reroll(user.cookie, job.id);
    expect([free.status, free.body.cost]).toEqual([202, 0]);
    expect((await settleJob(user.cookie, free.body.job.id)).status).toBe("failed");
    const ledger = await db.select().from(creditLedger).where(eq(creditLedger.reservationKey, free.body.job.id)).all();
    expect(ledger.map((l) => [l.kind, l.amount])).toEqual([
      ["reserve", 0],
      ["refund", 0],
    ]);
    expect(await quote(user.cookie, job.id)).toMatchObject({ cost: 1, message: REROLL_PAID_MESSAGE });
    expect((await reroll(user.cookie, job.id)).status).toBe(409);
    expect(await balance(user.id)).toBe(1);
    await expectSettled(user.id);
  });

  it("two at once: one is free; the other is refused, or charged when its sender agreed to a credit", async () => {
    const { user, job } = await staged(3);
    provider.answer = () => [TRUE];
    const both = await Promise.all([reroll(user.cookie, job.id), reroll(user.cookie, job.id)]);
    expect(both.map((a) => a.status).sort()).toEqual([202, 409]);
    expect(both.find((a) => a.status === 202)!.body.cost).toBe(0);
    expect(both.find((a) => a.status === 409)!.body.error).toBe(REROLL_PAID_MESSAGE);

    // Both agreed to a credit (as the public API may always say): one is the free one, the other is charged.
    const again = await staged(3);
    const mixed = await Promise.all([
      reroll(again.user.cookie, again.job.id, { acceptCharge: true }),
      reroll(again.user.cookie, again.job.id, { acceptCharge: true }),
    ]);
    expect(mixed.map((a) => a.status)).toEqual([202, 202]);
    expect(mixed.map((a) => a.body.cost).sort()).toEqual([0, 1]);
    for (const a of mixed) await settleJob(again.user.cookie, a.body.job.id);
    const rerolls = (await rowsOf(again.user.id)).jobs.filter((j) => j.rerollOf === again.job.id);
    expect(rerolls.map((j) => j.cost).sort()).toEqual([0, 1]);
    // Staged (1) and the paid re-roll (1): the free one cost nothing.
    expect(await balance(again.user.id)).toBe(1);
    await expectSettled(again.user.id);
    for (const a of both) if (a.status === 202) await settleJob(user.cookie, a.body.job.id);
    await expectSettled(user.id);
  });
});
