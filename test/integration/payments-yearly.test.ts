import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { creditLedger, paidPeriods, users } from "@db/schema";
import { db, makeUser } from "@test/support/factories";
import { deliverOk, SubscriptionStory } from "@test/support/stripe";
import { addMonthsUtc } from "@workers/objects/user/payments/periods";
import { userObject } from "@workers/objects/user-object";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";

// Yearly subscribers pay once a year and receive their plan's credits every
// month: the user's Durable Object grants month k at period start + k months,
// on its alarm (or whenever it is asked for the balance), under a clock the
// test moves forward.

async function planGrants(userId: string) {
  const rows = await db
    .select({ key: creditLedger.idempotencyKey, amount: creditLedger.amount })
    .from(creditLedger)
    .where(eq(creditLedger.userId, userId))
    .all();
  return rows.filter((r) => r.key.startsWith("plan:"));
}

async function yearlySubscriber() {
  const user = await makeUser();
  const start = Math.floor(Date.now() / 1000);
  const story = new SubscriptionStory(user.id, "starter", "year", { start });
  await db.update(users).set({ stripeCustomerId: story.customer }).where(eq(users.id, user.id));
  const events = story.checkout();
  for (const e of [events.created, events.invoicePaid, events.completed]) await deliverOk(e);
  return { id: user.id, story, start: start * 1000, stub: userObject(env, user.id), invoiceId: events.invoice.id };
}

describe("yearly plans", { timeout: 30_000 }, () => {
  it("grant the plan's credits at the start of each of the 12 months, once each, and then stop", async () => {
    const { id, stub, start, invoiceId } = await yearlySubscriber();
    expect(await planGrants(id)).toEqual([{ key: `plan:${invoiceId}:0`, amount: 22 }]);
    const alarm = await runInDurableObject(stub, (_o, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();

    let previous = start;
    for (let month = 1; month <= 11; month++) {
      const due = addMonthsUtc(start, month);
      await stub.advanceClockForTesting(due - previous);
      previous = due;
      const balance = await stub.balance(id);
      expect(balance, `month ${month}`).toBeGreaterThanOrEqual(22);
      expect((await planGrants(id)).length, `month ${month}`).toBe(month + 1);
      // Asking again grants nothing more.
      await stub.balance(id);
      expect((await planGrants(id)).length).toBe(month + 1);
    }
    await stub.advanceClockForTesting(addMonthsUtc(start, 12) - previous + 40 * 24 * 3600 * 1000);
    expect(await stub.balance(id)).toBe(0);
    const grants = await planGrants(id);
    expect(grants.map((g) => g.key).sort()).toEqual(
      Array.from({ length: 12 }, (_, k) => `plan:${invoiceId}:${k}`).sort(),
    );
    const period = await db.query.paidPeriods.findFirst({ where: eq(paidPeriods.invoiceId, invoiceId) });
    expect(period).toMatchObject({ monthsGranted: 12, nextGrantAt: null });
  });

  it("stop granting once the subscription has ended", async () => {
    const { id, stub, start, story, invoiceId } = await yearlySubscriber();
    await stub.advanceClockForTesting(addMonthsUtc(start, 1) - start);
    await stub.balance(id);
    expect(await planGrants(id)).toHaveLength(2);
    await deliverOk(story.deleted(10));
    await stub.advanceClockForTesting(addMonthsUtc(start, 3) - addMonthsUtc(start, 1));
    await stub.balance(id);
    expect((await planGrants(id)).map((g) => g.key).sort()).toEqual([`plan:${invoiceId}:0`, `plan:${invoiceId}:1`]);
    const user = await db.query.users.findFirst({ where: eq(users.id, id) });
    expect(user?.plan).toBeNull();
  });

  it("stop granting the old plan's months once a plan switch starts a new period", async () => {
    const { id, stub, start, story, invoiceId } = await yearlySubscriber();
    const oneMonth = addMonthsUtc(start, 1);
    await stub.advanceClockForTesting(oneMonth - start);
    await stub.balance(id);
    const sw = story.switchTo("popular", "month", Math.floor((oneMonth - start) / 1000) + 3600);
    await deliverOk(sw.invoicePaid);
    await deliverOk(sw.updated);
    await stub.advanceClockForTesting(addMonthsUtc(start, 4) - oneMonth);
    await stub.balance(id);
    // The switch's invoice is negative (the unused year pays for it), so it grants nothing
    // (docs/decisions/0080-credits-follow-payments.md); the old plan's months stop.
    expect(sw.invoice.total).toBeLessThan(0);
    expect((await planGrants(id)).map((g) => g.key).sort()).toEqual(
      [`plan:${invoiceId}:0`, `plan:${invoiceId}:1`].sort(),
    );
    const user = await db.query.users.findFirst({ where: eq(users.id, id) });
    expect(user).toMatchObject({ plan: "Popular plan", planInterval: "month" });
  });

  it("keep their monthly grants across an upgrade: month 4's upgrade grants only the difference, then the new plan monthly", async () => {
    const { id, stub, start, story, invoiceId } = await yearlySubscriber();
    const month3 = addMonthsUtc(start, 3);
    await stub.advanceClockForTesting(month3 - start);
    await stub.balance(id);
    expect((await planGrants(id)).map((g) => g.amount)).toEqual([22, 22, 22, 22]);
    // Starter -> Popular yearly an hour into month 4: paid, so it grants 44 - 22 on top of month 4's grant.
    const up = story.switchTo("popular", "year", Math.floor((month3 - start) / 1000) + 3600);
    expect(up.invoice.total).toBeGreaterThan(0);
    await deliverOk(up.invoicePaid);
    await deliverOk(up.updated);
    await deliverOk(up.invoicePaid);
    const upStart = up.invoice.lines.data.at(-1)!.period.start * 1000;
    expect((await planGrants(id)).filter((g) => g.key.startsWith(`plan:${up.invoice.id}`))).toEqual([
      { key: `plan:${up.invoice.id}:0`, amount: 22 },
    ]);
    // A month into the new year: Popular's 44, and Starter's year grants no more.
    const next = addMonthsUtc(upStart, 1);
    await stub.advanceClockForTesting(next - month3);
    await stub.balance(id);
    const grants = await planGrants(id);
    expect(grants.filter((g) => g.key.startsWith(`plan:${invoiceId}`))).toHaveLength(4);
    expect(grants.filter((g) => g.key.startsWith(`plan:${up.invoice.id}`)).map((g) => g.amount)).toEqual([22, 44]);
  });
});
