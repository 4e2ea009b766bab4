import { creditLedger, paidPeriods, users } from "@db/schema";
import { db, makeUser } from "@test/support/factories";
import { deliverOk, SubscriptionStory, type TestEvent } from "@test/support/stripe";
import { firstMonthGrant } from "@workers/objects/user/payment-events";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { BillingInterval, PlanId } from "~/shared/catalog";

// Credits follow the money actually paid (docs/decisions/0080-credits-follow-payments.md),
// driven through the real webhook and the user's Durable Object.

async function customer(planId: PlanId, interval: BillingInterval = "month") {
  const user = await makeUser();
  const story = new SubscriptionStory(user.id, planId, interval);
  await db.update(users).set({ stripeCustomerId: story.customer }).where(eq(users.id, user.id));
  const first = story.checkout();
  for (const e of [first.created, first.invoicePaid, first.completed]) await deliverOk(e);
  return { ...user, story };
}

async function credits(userId: string): Promise<number> {
  return (await db.select({ c: users.credits }).from(users).where(eq(users.id, userId)).get())!.c;
}

async function planGrants(userId: string) {
  return db
    .select({ amount: creditLedger.amount, reason: creditLedger.reason })
    .from(creditLedger)
    .where(eq(creditLedger.userId, userId))
    .all();
}

async function deliverAll(events: TestEvent[]) {
  for (const e of events) await deliverOk(e);
}

describe("credits follow the money paid", { timeout: 60_000 }, () => {
  it("switching Professional <-> Small 10 times in a period grants Professional's 88 once, nothing more", async () => {
    const { id, story } = await customer("professional");
    expect(await credits(id)).toBe(88);
    for (let i = 0; i < 10; i++) {
      const down = story.switchTo("small", "month");
      expect(down.invoice.total).toBeLessThan(0);
      await deliverAll([down.updated, down.invoicePaid]);
      const up = story.switchTo("professional", "month");
      expect(up.invoice.total).toBeGreaterThan(0);
      await deliverAll([up.updated, up.invoicePaid]);
    }
    expect(await credits(id)).toBe(88);
    expect((await planGrants(id)).filter((g) => g.amount > 0)).toEqual([
      { amount: 88, reason: "Professional plan payment" },
    ]);
    // The next renewal opens a new window with the plan's credits.
    const renewal = story.renew();
    await deliverAll([renewal.invoicePaid, renewal.updated]);
    expect(await credits(id)).toBe(176);
  });

  it("an upgrade grants the difference: Small -> Popular grants 44 - 9 = 35", async () => {
    const { id, story } = await customer("small");
    const up = story.switchTo("popular", "month");
    await deliverAll([up.updated, up.invoicePaid]);
    expect(await credits(id)).toBe(44);
    expect((await planGrants(id)).map((g) => g.amount)).toEqual([9, 35]);
  });

  it("a downgrade grants nothing until the next renewal, which grants the lower plan's credits", async () => {
    const { id, story } = await customer("standard");
    const down = story.switchTo("starter", "month");
    await deliverAll([down.invoicePaid, down.updated]);
    expect(await credits(id)).toBe(66);
    const renewal = story.renew();
    await deliverAll([renewal.invoicePaid, renewal.updated]);
    expect(await credits(id)).toBe(66 + 22);
  });

  it("a $0 invoice never grants, even for a new subscription", async () => {
    const user = await makeUser();
    const story = new SubscriptionStory(user.id, "popular", "month");
    await db.update(users).set({ stripeCustomerId: story.customer }).where(eq(users.id, user.id));
    const first = story.checkout();
    const free = { ...first.invoice, amount_paid: 0, total: 0, amount_due: 0, subtotal: 0 };
    const invoicePaid = { ...first.invoicePaid, data: { object: free } };
    await deliverAll([first.created, invoicePaid]);
    expect(await credits(user.id)).toBe(0);
    const row = await db.select().from(paidPeriods).where(eq(paidPeriods.invoiceId, free.id)).get();
    expect(row).toMatchObject({
      firstGrant: 0,
      invoiceTotal: 0,
      billingReason: "subscription_create",
      nextGrantAt: null,
    });
  });

  it("converges whatever order the create and upgrade invoices arrive in", async () => {
    const a = await (async () => {
      const user = await makeUser();
      const story = new SubscriptionStory(user.id, "small", "month");
      await db.update(users).set({ stripeCustomerId: story.customer }).where(eq(users.id, user.id));
      const first = story.checkout();
      const up = story.switchTo("popular", "month");
      // The upgrade's invoice arrives before the first one.
      await deliverAll([up.invoicePaid, up.updated, first.created, first.invoicePaid, first.completed]);
      return credits(user.id);
    })();
    expect(a).toBe(44);
  });
});

describe("the rule table", () => {
  const w = (start: number | null, credits: number) => ({ start, credits });
  const inv = (reason: string, total: number, periodStart = 100, periodEnd = 200) => ({
    reason,
    total,
    periodStart,
    periodEnd,
  });
  it.each([
    ["new subscription, paid", inv("subscription_create", 4900), 22, w(null, 0), 22, 22],
    ["new subscription, $0", inv("subscription_create", 0), 22, w(null, 0), 0, 0],
    ["renewal, paid", inv("subscription_cycle", 4900, 300, 400), 22, w(100, 88), 22, 22],
    ["upgrade, paid", inv("subscription_update", 6000, 150, 250), 44, w(100, 9), 35, 44],
    ["upgrade back to the window's highest plan", inv("subscription_update", 12000, 150, 250), 88, w(100, 88), 0, 88],
    [
      "downgrade paid for by unused time (negative total)",
      inv("subscription_update", -12000, 150, 250),
      9,
      w(100, 88),
      0,
      88,
    ],
    ["downgrade that still charged a little", inv("subscription_update", 300, 150, 250), 9, w(100, 44), 0, 44],
    ["late first invoice inside an upgraded window", inv("subscription_create", 2900, 90, 190), 9, w(150, 44), 0, 44],
    ["late invoice of an older, separate period", inv("subscription_cycle", 2900, 10, 90), 9, w(150, 44), 9, 44],
  ])("%s", (_name, invoice, planCredits, window, grant, after) => {
    const r = firstMonthGrant(invoice, planCredits, window);
    expect(r.grant).toBe(grant);
    expect(r.window.credits).toBe(after);
  });
});

describe("refunds and disputes", { timeout: 60_000 }, () => {
  async function spend(userId: string, n: number) {
    const { userObject } = await import("@workers/objects/client");
    const { env } = await import("cloudflare:workers");
    for (let i = 0; i < n; i++) {
      const key = `spend-${userId}-${i}`;
      const r = await userObject(env, userId).reserve(userId, key, 1, "test spend");
      expect(r.ok).toBe(true);
      await userObject(env, userId).commit(userId, key);
    }
  }

  async function reversals(userId: string) {
    const { paymentReversals } = await import("@db/schema");
    return db.select().from(paymentReversals).where(eq(paymentReversals.userId, userId)).all();
  }

  it("a refund takes back exactly the unspent credits of that payment, and says what was spent", async () => {
    const { id, story } = await customer("popular");
    await spend(id, 10);
    expect(await credits(id)).toBe(34);
    const refund = story.refund(story.invoices[0]!);
    await deliverOk(refund);
    await deliverOk(refund);
    expect(await credits(id)).toBe(0);
    expect(await reversals(id)).toMatchObject([{ cause: "refund", granted: 44, due: 44, taken: 34, alreadySpent: 10 }]);
    const rows = await planGrants(id);
    expect(rows.at(-1)).toEqual({
      amount: -34,
      reason: "Payment refunded: 34 of 44 credits taken back (10 already spent)",
    });
  });

  it("a partial refund takes back its share; a second refund of the rest takes the remainder", async () => {
    const { id, story } = await customer("popular");
    const inv = story.invoices[0]!;
    await deliverOk(story.refund(inv, inv.amount_paid / 2));
    expect(await credits(id)).toBe(22);
    await deliverOk(story.refund(inv, inv.amount_paid / 2));
    expect(await credits(id)).toBe(0);
  });

  it("only that payment's credits: other grants (a renewal, trial credits) stay", async () => {
    const { id, story } = await customer("small");
    const renewal = story.renew();
    await deliverAll([renewal.invoicePaid, renewal.updated]);
    expect(await credits(id)).toBe(18);
    await deliverOk(story.refund(renewal.invoice));
    expect(await credits(id)).toBe(9);
  });

  it("a dispute takes back the unspent credits; won, it gives them back; lost, nothing more changes", async () => {
    const won = await customer("starter");
    await spend(won.id, 2);
    const inv = won.story.invoices[0]!;
    await deliverOk(won.story.dispute(inv));
    expect(await credits(won.id)).toBe(0);
    await deliverOk(won.story.dispute(inv, "won"));
    await deliverOk(won.story.dispute(inv, "won"));
    expect(await credits(won.id)).toBe(20);
    expect(await reversals(won.id)).toMatchObject([{ cause: "dispute", taken: 20, alreadySpent: 2 }]);

    const lost = await customer("starter");
    const inv2 = lost.story.invoices[0]!;
    await deliverOk(lost.story.dispute(inv2));
    await deliverOk(lost.story.dispute(inv2, "lost"));
    expect(await credits(lost.id)).toBe(0);
  });
});
