import { auditLog, creditLedger, paidPeriods, users } from "@db/schema";
import { db, makeUser } from "@test/support/factories";
import { answerPaymentIntents, deliver, deliverOk, SubscriptionStory, type TestEvent } from "@test/support/stripe";
import { firstMonthGrant } from "@workers/objects/user/payments/periods";
import { STRIPE_ACTOR } from "@workers/objects/user/payments/reversals";
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
  for (const e of [first.created, first.invoicePaid, first.invoicePayment, first.completed]) await deliverOk(e);
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

describe("delivery order and repeats", { timeout: 120_000 }, () => {
  /** A deterministic shuffle (mulberry32), so a failing order can be replayed by its seed. */
  function shuffled<T>(items: T[], seed: number): T[] {
    let t = seed >>> 0;
    const rand = () => {
      t = (t + 0x6d2b79f5) >>> 0;
      let r = Math.imul(t ^ (t >>> 15), 1 | t);
      r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
      return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
    };
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }

  /**
   * Small; up to Popular; down to Small; up to Professional; renewal; down to Popular; back up to Professional.
   * In order: 9 + (44 - 9) + 0 + (88 - 44) + 88 + 0 + 0 = 176.
   */
  async function story() {
    const user = await makeUser();
    const s = new SubscriptionStory(user.id, "small", "month");
    await db.update(users).set({ stripeCustomerId: s.customer }).where(eq(users.id, user.id));
    const first = s.checkout();
    const events: TestEvent[] = [first.created, first.invoicePaid, first.completed];
    const step = (x: { updated: TestEvent; invoicePaid: TestEvent }) => events.push(x.updated, x.invoicePaid);
    step(s.switchTo("popular", "month"));
    step(s.switchTo("small", "month"));
    step(s.switchTo("professional", "month"));
    step(s.renew());
    step(s.switchTo("popular", "month"));
    step(s.switchTo("professional", "month"));
    return { id: user.id, events };
  }

  async function ledgerSum(userId: string) {
    return (await planGrants(userId)).reduce((n, g) => n + g.amount, 0);
  }

  it("in order, the story grants 9 + 35 + 44 + 88 = 176", async () => {
    const { id, events } = await story();
    await deliverAll(events);
    expect(await credits(id)).toBe(176);
    expect((await planGrants(id)).map((g) => g.amount)).toEqual([9, 35, 44, 88]);
  });

  it.each([1, 2, 3, 4, 5, 6, 7, 8])(
    "shuffled with seed %i and every event delivered twice, it ends at 176",
    async (seed) => {
      const { id, events } = await story();
      await deliverAll(shuffled([...events, ...events], seed));
      expect(await credits(id)).toBe(176);
      expect(await ledgerSum(id)).toBe(176);
    },
  );
});

describe("the rule table", () => {
  type Reason = "subscription_create" | "subscription_cycle" | "subscription_update";
  const period = (reason: Reason, total: number, credits: number, start: number, granted = 0) => ({
    start,
    reason,
    total,
    credits,
    laterMonths: [] as number[],
    granted,
  });
  const create = (credits: number, granted = credits, start = 100) =>
    period("subscription_create", 4900, credits, start, granted);
  // [case, periods already recorded, the incoming invoice, credits it grants]
  it.each([
    ["new subscription, paid", [], period("subscription_create", 4900, 22, 100), 22],
    ["new subscription, $0 (100% discount)", [], period("subscription_create", 0, 22, 100), 0],
    ["renewal, paid", [create(88)], period("subscription_cycle", 12000, 88, 300), 88],
    ["renewal, $0", [create(88)], period("subscription_cycle", 0, 88, 300), 0],
    ["upgrade Small -> Popular, paid", [create(9)], period("subscription_update", 2000, 44, 150), 35],
    ["upgrade after a $0 first period", [create(9, 0)], period("subscription_update", 2000, 44, 150), 44],
    [
      "back up to the period's highest plan",
      [create(88), period("subscription_update", -8000, 9, 150)],
      period("subscription_update", 11000, 88, 160),
      0,
    ],
    [
      "downgrade paid for by unused time (negative total)",
      [create(88)],
      period("subscription_update", -8000, 9, 150),
      0,
    ],
    ["downgrade that still charged a little", [create(44)], period("subscription_update", 300, 9, 150), 0],
    ["upgrade, $0 (paid from a credit)", [create(9)], period("subscription_update", 0, 44, 150), 0],
    [
      "first invoice arriving after its period's upgrade",
      [period("subscription_update", 2000, 44, 150, 44)],
      create(9, 0, 100),
      0,
    ],
    [
      "renewal arriving after the next period's upgrade",
      [create(9), period("subscription_update", 12000, 88, 350, 88)],
      period("subscription_cycle", 2900, 9, 300),
      0,
    ],
    [
      "upgrade arriving after the next renewal",
      [create(9), period("subscription_cycle", 2900, 44, 300)].map((p, i) => ({
        ...p,
        granted: i ? 44 : 9,
      })),
      period("subscription_update", 2000, 44, 150),
      35,
    ],
    [
      "upgrade in month 4 of a yearly plan",
      [{ ...create(9), laterMonths: [200, 300, 400] }],
      period("subscription_update", 20000, 44, 450),
      35,
    ],
  ])("%s", (_name, recorded, incoming, grant) => {
    expect(firstMonthGrant(recorded, incoming)).toBe(grant);
  });

  it("a period never yields more than its highest plan, whatever the order", () => {
    const plans = [9, 88, 9, 88, 44, 88, 9];
    const periods = [
      create(9, 0),
      ...plans.map((c, i) => period("subscription_update", c > 9 ? 5000 : -5000, c, 110 + i)),
    ];
    for (const order of [periods, [...periods].reverse(), [periods[3]!, ...periods.slice(0, 3), ...periods.slice(4)]]) {
      const recorded: ReturnType<typeof period>[] = [];
      let total = 0;
      for (const p of order) {
        const g = firstMonthGrant(recorded, p);
        recorded.push({ ...p, granted: g });
        total += g;
      }
      expect(total).toBe(88);
    }
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

  async function audits(userId: string) {
    return db
      .select({ action: auditLog.action, actorEmail: auditLog.actorEmail, reason: auditLog.reason })
      .from(auditLog)
      .where(eq(auditLog.targetUserId, userId))
      .orderBy(auditLog.createdAt)
      .all();
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
    // One audit row for the refund, shown on the admin user page, however often it was delivered.
    expect(await audits(id)).toEqual([
      {
        action: "credits.remove",
        actorEmail: STRIPE_ACTOR,
        reason: "Payment refunded: 34 of 44 credits taken back (10 already spent)",
      },
    ]);
  });

  it("a refund finds the payment's credits through invoice_payment.paid, before or after invoice.paid (ADR 0340)", async () => {
    for (const first of ["invoice_payment.paid", "invoice.paid"] as const) {
      const user = await makeUser();
      const story = new SubscriptionStory(user.id, "starter", "month");
      await db.update(users).set({ stripeCustomerId: story.customer }).where(eq(users.id, user.id));
      const paid = story.checkout();
      // Since basil an invoice event does not name the PaymentIntent: only invoice_payment.paid does.
      expect(paid.invoicePaid.data.object).not.toHaveProperty("payments");
      const pair = [paid.invoicePaid, paid.invoicePayment];
      await deliverAll([paid.created, ...(first === "invoice.paid" ? pair : pair.reverse()), paid.completed]);
      expect(await credits(user.id)).toBe(22);
      await deliverOk(story.refund(story.invoices[0]!));
      expect(await credits(user.id), first).toBe(0);
      expect(await reversals(user.id)).toMatchObject([{ cause: "refund", granted: 22, taken: 22 }]);
    }
  });

  it("a refund or dispute that comes before its payment's invoice_payment.paid is refused for Stripe to resend, and applies when it does (ADR 0345)", async () => {
    const user = await makeUser();
    const story = new SubscriptionStory(user.id, "starter", "month");
    await db.update(users).set({ stripeCustomerId: story.customer }).where(eq(users.id, user.id));
    const paid = story.checkout();
    await deliverAll([paid.created, paid.invoicePaid, paid.completed]);
    expect(await credits(user.id)).toBe(22);
    const refund = story.refund(story.invoices[0]!);
    // Stripe names the dispute's customer: ours.
    answerPaymentIntents([story.paymentIntent(story.invoices[0]!)]);
    for (const reversal of [refund, story.dispute(story.invoices[0]!)]) {
      const res = await deliver(reversal);
      expect(res.status).toBe(409);
      expect(await res.json()).toMatchObject({ ok: false, code: "conflict" });
    }
    expect(await credits(user.id)).toBe(22);
    expect(await reversals(user.id)).toEqual([]);
    await deliverOk(paid.invoicePayment);
    // Stripe's next try: the same event, now applied once; a second delivery is a duplicate.
    expect(await deliverOk(refund)).toEqual({ received: true, outcome: "applied", duplicate: false });
    expect(await deliverOk(refund)).toMatchObject({ duplicate: true });
    expect(await credits(user.id)).toBe(0);
    expect(await reversals(user.id)).toMatchObject([{ cause: "refund", granted: 22, taken: 22 }]);
  });

  it("a refund of a payment none of ours (a customer we never made, or none) is recorded as ignored, not refused", async () => {
    // Another product on the same Stripe account: its customer is none of our users' or teams'.
    const stranger = new SubscriptionStory("someone-else", "starter", "month");
    stranger.checkout();
    const refund = stranger.refund(stranger.invoices[0]!);
    const guest = structuredClone(refund);
    guest.id = `${refund.id}_guest`;
    (guest.data.object as { customer: string | null }).customer = null;
    const before = await db.select().from(creditLedger).all();
    for (const event of [refund, guest]) {
      expect(await deliverOk(event)).toEqual({ received: true, outcome: "ignored", duplicate: false });
      expect(await deliverOk(event)).toMatchObject({ outcome: "ignored", duplicate: true });
    }
    expect(await db.select().from(creditLedger).all()).toEqual(before);

    // Ours, before its payment is known: still refused, for Stripe to send again (ADR 0345).
    const user = await makeUser();
    const story = new SubscriptionStory(user.id, "starter", "month");
    await db.update(users).set({ stripeCustomerId: story.customer }).where(eq(users.id, user.id));
    story.checkout();
    expect((await deliver(story.refund(story.invoices[0]!))).status).toBe(409);
  });

  it("a dispute of a payment none of ours (Stripe names a customer we never made, or none) is recorded as ignored (ADR 0359)", async () => {
    const stranger = new SubscriptionStory("someone-else", "starter", "month");
    stranger.checkout();
    const guest = new SubscriptionStory("a-guest", "starter", "month");
    guest.checkout();
    const guestIntent = { ...guest.paymentIntent(guest.invoices[0]!), customer: null };
    const asked = answerPaymentIntents([stranger.paymentIntent(stranger.invoices[0]!), guestIntent]);
    const before = await db.select().from(creditLedger).all();
    for (const dispute of [stranger.dispute(stranger.invoices[0]!), guest.dispute(guest.invoices[0]!)]) {
      expect(await deliverOk(dispute)).toEqual({ received: true, outcome: "ignored", duplicate: false });
      expect(await deliverOk(dispute)).toMatchObject({ outcome: "ignored", duplicate: true });
    }
    // Each delivery asks (a second one is rare: Stripe resends only what was not answered 2xx).
    expect([...new Set(asked)]).toEqual([
      stranger.invoices[0]!.payments.data[0]!.payment.payment_intent,
      guestIntent.id,
    ]);
    expect(await db.select().from(creditLedger).all()).toEqual(before);
  });

  it("a dispute whose payment Stripe does not answer for is refused for Stripe to resend, and nothing is recorded", async () => {
    const stranger = new SubscriptionStory("someone-else", "starter", "month");
    stranger.checkout();
    const dispute = stranger.dispute(stranger.invoices[0]!);
    answerPaymentIntents([], { status: 500 });
    const refused = await deliver(dispute);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ ok: false, code: "conflict" });
    // Stripe's next try, answered: ignored once, not a duplicate of the refused one.
    answerPaymentIntents([stranger.paymentIntent(stranger.invoices[0]!)]);
    expect(await deliverOk(dispute)).toEqual({ received: true, outcome: "ignored", duplicate: false });
  });

  it("a refund after everything was spent takes nothing, and the audit row says what was spent", async () => {
    const { id, story } = await customer("starter");
    await spend(id, 22);
    await deliverOk(story.refund(story.invoices[0]!));
    expect(await credits(id)).toBe(0);
    expect(await reversals(id)).toMatchObject([{ cause: "refund", granted: 22, taken: 0, alreadySpent: 22 }]);
    expect((await audits(id)).map((a) => a.reason)).toEqual([
      "Payment refunded: 0 of 22 credits taken back (22 already spent)",
    ]);
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
    await deliverAll([renewal.invoicePaid, renewal.invoicePayment, renewal.updated]);
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
    expect((await audits(won.id)).map((a) => [a.action, a.reason])).toEqual([
      ["credits.remove", "Payment disputed: 20 of 22 credits taken back (2 already spent)"],
      ["credits.grant", "Dispute won: 20 credits restored"],
    ]);

    const lost = await customer("starter");
    const inv2 = lost.story.invoices[0]!;
    await deliverOk(lost.story.dispute(inv2));
    await deliverOk(lost.story.dispute(inv2, "lost"));
    expect(await credits(lost.id)).toBe(0);
  });

  // ADR 0339: credits of a reversed payment that were out in jobs then do not come back when those jobs fail.
  async function ledgerSum(userId: string) {
    return (await db.select().from(creditLedger).where(eq(creditLedger.userId, userId)).all()).reduce(
      (n, r) => n + r.amount,
      0,
    );
  }

  it("a job held when its payment is refunded gives its credit to nobody when it fails; the ledger still adds up", async () => {
    const { userObject } = await import("@workers/objects/client");
    const { env } = await import("cloudflare:workers");
    const { id, story } = await customer("starter");
    await spend(id, 2);
    for (const key of ["held-a", "held-b"])
      expect((await userObject(env, id).reserve(id, key, 1, "a job")).ok).toBe(true);
    expect(await credits(id)).toBe(18);
    await deliverOk(story.refund(story.invoices[0]!));
    expect(await credits(id)).toBe(0);
    expect(await reversals(id)).toMatchObject([{ taken: 18, alreadySpent: 4 }]);
    // Both jobs fail: nothing comes back, once however often the refund is asked for.
    await userObject(env, id).refund(id, "held-a", "Provider failed");
    await userObject(env, id).refund(id, "held-a", "Provider failed");
    await userObject(env, id).refund(id, "held-b", "Provider failed");
    expect(await credits(id)).toBe(0);
    expect(await userObject(env, id).balance(id)).toBe(0);
    expect(await ledgerSum(id)).toBe(0);
    const heldBack = await db.select().from(creditLedger).where(eq(creditLedger.userId, id)).all();
    expect(heldBack.filter((r) => r.idempotencyKey.startsWith("held-back:")).map((r) => r.amount)).toEqual([-1, -1]);
    // The two spent ones are still owed: a renewal's credits come back whole on a later failure.
    const renewal = story.renew();
    await deliverAll([renewal.invoicePaid, renewal.updated]);
    expect(await credits(id)).toBe(22);
    expect((await userObject(env, id).reserve(id, "held-c", 1, "a job")).ok).toBe(true);
    await userObject(env, id).refund(id, "held-c", "Provider failed");
    expect(await credits(id)).toBe(22);
    expect(await ledgerSum(id)).toBe(22);
  });

  it("a dispute won gives back what it took and what it held back since", async () => {
    const { userObject } = await import("@workers/objects/client");
    const { env } = await import("cloudflare:workers");
    const { id, story } = await customer("starter");
    expect((await userObject(env, id).reserve(id, "held-d", 1, "a job")).ok).toBe(true);
    const inv = story.invoices[0]!;
    await deliverOk(story.dispute(inv));
    expect(await credits(id)).toBe(0);
    await userObject(env, id).refund(id, "held-d", "Provider failed");
    expect(await credits(id)).toBe(0);
    await deliverOk(story.dispute(inv, "won"));
    expect(await credits(id)).toBe(22);
    expect(await ledgerSum(id)).toBe(22);
    expect((await audits(id)).map((a) => a.reason)).toEqual([
      "Payment disputed: 21 of 22 credits taken back (1 already spent)",
      "Dispute won: 22 credits restored",
    ]);
  });
});
