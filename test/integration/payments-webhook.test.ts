import { creditLedger, paidPeriods, stripeEvents, subscriptions, users } from "@db/schema";
import { db, makeUser } from "@test/support/factories";
import { deliver, deliverOk, SubscriptionStory, signature, type TestEvent } from "@test/support/stripe";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";

// POST /api/webhooks/stripe through the Worker, with events signed by the
// webhook secret exactly as Stripe signs them.

async function payingUser(opts: { linkCustomer?: boolean; start?: number } = {}) {
  const user = await makeUser();
  const story = new SubscriptionStory(user.id, "popular", "month", { start: opts.start });
  if (opts.linkCustomer !== false) {
    await db.update(users).set({ stripeCustomerId: story.customer }).where(eq(users.id, user.id));
  }
  return { ...user, story };
}

async function paymentState(userId: string, story?: SubscriptionStory) {
  const u = await db.query.users.findFirst({ where: eq(users.id, userId) });
  const subs = await db.select().from(subscriptions).where(eq(subscriptions.userId, userId)).all();
  const periods = await db.select().from(paidPeriods).where(eq(paidPeriods.userId, userId)).all();
  const ledger = await db
    .select({ key: creditLedger.idempotencyKey, kind: creditLedger.kind, amount: creditLedger.amount })
    .from(creditLedger)
    .where(eq(creditLedger.userId, userId))
    .all();
  const state = {
    user: {
      credits: u?.credits,
      plan: u?.plan,
      planCredits: u?.planCredits,
      planPriceCents: u?.planPriceCents,
      planInterval: u?.planInterval,
      planFeatures: u?.planFeatures,
      nextPaymentAt: u?.nextPaymentAt,
      stripeSubscriptionId: u?.stripeSubscriptionId,
      stripeCustomerId: u?.stripeCustomerId,
    },
    subs: subs.map(({ createdAt: _c, updatedAt: _u, ...rest }) => rest),
    periods: periods.map(({ createdAt: _c, ...rest }) => rest),
    ledger: ledger.sort((a, b) => a.key.localeCompare(b.key)),
  };
  // Ids differ between stories; compare shapes with them replaced by placeholders.
  let text = JSON.stringify(state).replaceAll(userId, "USER");
  if (story) {
    text = text.replaceAll(story.subscriptionId, "SUB").replaceAll(story.customer, "CUS");
    story.invoices.forEach((inv, i) => {
      text = text.replaceAll(inv.id, `INV${i}`);
      const pi = inv.payments.data[0]?.payment.payment_intent;
      if (pi) text = text.replaceAll(pi, `PI${i}`);
    });
  }
  return JSON.parse(text) as typeof state;
}

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

async function eventRows(eventId: string) {
  return db.select().from(stripeEvents).where(eq(stripeEvents.id, eventId)).all();
}

describe("the Stripe webhook's signature check", { timeout: 30_000 }, () => {
  it("refuses a bad signature with 400 and writes nothing", async () => {
    const { id, story } = await payingUser();
    const { completed } = story.checkout();
    const forged = await deliver(completed, { secret: "whsec_someone_else" });
    expect(forged.status).toBe(400);
    expect(await forged.json()).toEqual({ ok: false, code: "invalid", error: "Invalid or expired Stripe signature." });
    const missing = await deliver(completed, { signature: null });
    expect(missing.status).toBe(400);
    const garbage = await deliver(completed, { signature: "t=1,v1=deadbeef" });
    expect(garbage.status).toBe(400);
    expect(await eventRows(completed.id)).toEqual([]);
    expect((await paymentState(id)).user).toMatchObject({ credits: 0, plan: null });
  });

  it("refuses a correctly signed event whose timestamp is 10 minutes old", async () => {
    const { id, story } = await payingUser();
    const { completed } = story.checkout();
    const stale = await deliver(completed, { timestamp: Math.floor(Date.now() / 1000) - 600 });
    expect(stale.status).toBe(400);
    expect(await eventRows(completed.id)).toEqual([]);
    expect((await paymentState(id)).user).toMatchObject({ credits: 0, plan: null });
  });

  it("refuses a body changed after signing", async () => {
    const { id, story } = await payingUser();
    const { completed } = story.checkout();
    const sig = await signature(JSON.stringify(completed, null, 2));
    const tampered = {
      ...completed,
      data: { object: { ...(completed.data.object as object), client_reference_id: "someone" } },
    };
    const res = await deliver(tampered, { signature: sig });
    expect(res.status).toBe(400);
    expect((await paymentState(id)).user.credits).toBe(0);
  });
});

describe("payment events", { timeout: 30_000 }, () => {
  it("grants once when one signed event is delivered 5 times, one after another and at once", async () => {
    const { id, story } = await payingUser();
    const { completed } = story.checkout();
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await deliverOk(completed));
    expect(results.map((r) => r.duplicate)).toEqual([false, true, true, true, true]);

    const other = await payingUser();
    const { invoicePaid } = other.story.checkout();
    const concurrent = await Promise.all(Array.from({ length: 5 }, () => deliverOk(invoicePaid)));
    expect(concurrent.filter((r) => !r.duplicate)).toHaveLength(1);

    for (const [userId, eventId] of [
      [id, completed.id],
      [other.id, invoicePaid.id],
    ] as const) {
      const state = await paymentState(userId);
      expect(state.user).toMatchObject({ credits: 44, plan: "Popular plan", planCredits: 44, planPriceCents: 8900 });
      expect(state.ledger.filter((l) => l.kind === "grant")).toHaveLength(1);
      expect(await eventRows(eventId)).toHaveLength(1);
    }
  });

  it("an in-order checkout sets the plan, its price and features, the next payment date and 44 credits", async () => {
    const { id, story } = await payingUser();
    const { created, invoicePaid, completed, invoice } = story.checkout();
    for (const e of [created, invoicePaid, completed]) expect((await deliverOk(e)).outcome).toBe("applied");
    const state = await paymentState(id, story);
    const periodEnd = invoice.lines.data.at(-1)!.period.end * 1000;
    expect(state.user).toEqual({
      credits: 44,
      plan: "Popular plan",
      planCredits: 44,
      planPriceCents: 8900,
      planInterval: "month",
      planFeatures: expect.arrayContaining(["Stage 4 properties", "All photos included"]),
      nextPaymentAt: periodEnd,
      stripeSubscriptionId: "SUB",
      stripeCustomerId: "CUS",
    });
    expect(state.ledger).toEqual([{ key: "plan:INV0:0", kind: "grant", amount: 44 }]);
    // The grant expires 30 days after it was granted.
    const grant = await db.query.creditGrants.findFirst({ where: (g, { eq }) => eq(g.userId, id) });
    expect(grant!.expiresAt - grant!.createdAt).toBe(30 * 24 * 60 * 60 * 1000);
  });

  it("finds the user by the checkout's client_reference_id when the customer is not linked yet, and links it", async () => {
    const { id, story } = await payingUser({ linkCustomer: false });
    const { completed, invoicePaid } = story.checkout();
    await deliverOk(completed);
    await deliverOk(invoicePaid);
    const state = await paymentState(id, story);
    expect(state.user).toMatchObject({ credits: 44, stripeCustomerId: "CUS" });
  });

  it("every delivery order of a checkout's events (with a repeat) ends in the in-order state", async () => {
    const start = Math.floor(Date.now() / 1000);
    const reference = await payingUser({ start });
    const ref = reference.story.checkout();
    for (const e of [ref.created, ref.invoicePaid, ref.completed]) await deliverOk(e);
    const expected = await paymentState(reference.id, reference.story);

    for (const order of permutations(["created", "invoicePaid", "completed"] as const)) {
      const { id, story } = await payingUser({ start });
      const events = story.checkout();
      for (const name of order) await deliverOk(events[name]);
      await deliverOk(events[order[0]!]);
      expect(await paymentState(id, story), order.join(" > ")).toEqual(expected);
    }
  });

  it("a subscription.updated (cancel at period end) arriving before checkout.session.completed converges in all 24 orders", async () => {
    const start = Math.floor(Date.now() / 1000);
    const run = async (order: number[]) => {
      const { id, story } = await payingUser({ start });
      const { created, invoicePaid, completed } = story.checkout();
      const cancel = story.setCancelAtPeriodEnd(true, 5);
      const events: TestEvent[] = [created, invoicePaid, completed, cancel];
      for (const i of order) await deliverOk(events[i]!);
      return paymentState(id, story);
    };
    const expected = await run([0, 1, 2, 3]);
    expect(expected.user).toMatchObject({ plan: "Popular plan", credits: 44, nextPaymentAt: null });
    expect(expected.subs[0]).toMatchObject({ cancelAtPeriodEnd: true, status: "active" });
    for (const order of permutations([0, 1, 2, 3])) {
      expect(await run(order), order.join(",")).toEqual(expected);
    }
  });

  it("a cancellation in the same second as the checkout is applied, and so is a resumption right after it", async () => {
    // Stripe's times are whole seconds: a person who cancels within the second of paying (or a fast client) sends
    // a subscription.updated with the same `created` as the subscription's creation. Its previous_attributes say
    // it changed the state we hold, so it wins the tie (it used to lose it, and the plan showed a next payment).
    const { id, story } = await payingUser();
    const { created, invoicePaid, completed } = story.checkout();
    for (const ev of [created, invoicePaid, completed]) await deliverOk(ev);
    expect((await paymentState(id)).user.nextPaymentAt).not.toBeNull();
    const cancel = story.setCancelAtPeriodEnd(true, 0);
    expect(cancel.created).toBe(created.created);
    await deliverOk(cancel);
    let state = await paymentState(id);
    expect(state.subs[0]).toMatchObject({ cancelAtPeriodEnd: true, status: "active" });
    expect(state.user).toMatchObject({ plan: "Popular plan", credits: 44, nextPaymentAt: null });
    const resume = story.setCancelAtPeriodEnd(false, 0);
    await deliverOk(resume);
    state = await paymentState(id);
    expect(state.subs[0]).toMatchObject({ cancelAtPeriodEnd: false });
    expect(state.user.nextPaymentAt).not.toBeNull();
  });

  it("ignores a stale subscription.updated, and within one second the further-along status wins", async () => {
    const { id, story } = await payingUser();
    const { created, invoicePaid } = story.checkout();
    const cancel = story.setCancelAtPeriodEnd(true, 10);
    const resume = story.setCancelAtPeriodEnd(false, 10);
    await deliverOk(created);
    await deliverOk(invoicePaid);
    await deliverOk(cancel);
    await deliverOk(resume);
    await deliverOk(cancel); // never seen twice, but older: ignored
    expect((await paymentState(id)).user.nextPaymentAt).not.toBeNull();

    // Same second: Stripe creates the subscription 'incomplete' and activates it.
    const other = await payingUser();
    const ev = other.story.checkout();
    const incomplete = structuredClone(ev.created);
    incomplete.id = `${ev.created.id}_incomplete`;
    (incomplete.data.object as { status: string }).status = "incomplete";
    const activated = { ...ev.created, type: "customer.subscription.updated" };
    await deliverOk(activated);
    await deliverOk(incomplete);
    expect((await paymentState(other.id)).user.plan).toBe("Popular plan");
  });

  it("customer.subscription.deleted ends the plan, keeps the credits, and nothing older revives it", async () => {
    const { id, story } = await payingUser();
    const { created, invoicePaid, completed } = story.checkout();
    const cancel = story.setCancelAtPeriodEnd(true);
    const deleted = story.deleted(30);
    await deliverOk(deleted);
    for (const e of [created, invoicePaid, completed, cancel]) await deliverOk(e);
    const state = await paymentState(id, story);
    expect(state.user).toMatchObject({ plan: null, planCredits: 0, nextPaymentAt: null, credits: 44 });
    expect(state.subs[0]).toMatchObject({ status: "canceled" });
  });

  it("a renewal grants the plan's credits again, once", async () => {
    const { id, story } = await payingUser();
    const first = story.checkout();
    for (const e of [first.created, first.invoicePaid, first.completed]) await deliverOk(e);
    const renewal = story.renew();
    await deliverOk(renewal.invoicePaid);
    await deliverOk(renewal.invoicePaid);
    await deliverOk(renewal.updated);
    const state = await paymentState(id, story);
    expect(state.user.credits).toBe(88);
    expect(state.user.nextPaymentAt).toBe(renewal.invoice.lines.data.at(-1)!.period.end * 1000);
    expect(state.ledger.map((l) => l.key).sort()).toEqual(["plan:INV0:0", "plan:INV1:0"]);
  });

  it("an upgrade changes the plan and grants only the difference (Popular -> Professional yearly: 88 - 44)", async () => {
    const { id, story } = await payingUser();
    const first = story.checkout();
    for (const e of [first.created, first.invoicePaid, first.completed]) await deliverOk(e);
    const sw = story.switchTo("professional", "year");
    await deliverOk(sw.invoicePaid);
    await deliverOk(sw.updated);
    const state = await paymentState(id, story);
    expect(state.user).toMatchObject({
      plan: "Professional plan",
      planCredits: 88,
      planPriceCents: 96 * 12 * 100,
      planInterval: "year",
      credits: 88,
    });
  });

  it("records events for unknown customers and unhandled types as ignored, with 200", async () => {
    const stranger = new SubscriptionStory("no-such-user", "small", "month");
    const { invoicePaid } = stranger.checkout();
    const warn = console.warn;
    console.warn = () => undefined;
    try {
      expect(await deliverOk(invoicePaid)).toMatchObject({ outcome: "ignored", duplicate: false });
      expect(await deliverOk(invoicePaid)).toMatchObject({ outcome: "ignored", duplicate: true });
    } finally {
      console.warn = warn;
    }
    const other = { ...invoicePaid, id: `${invoicePaid.id}_x`, type: "customer.created" };
    expect(await deliverOk(other)).toMatchObject({ outcome: "ignored" });
    expect(await eventRows(invoicePaid.id)).toMatchObject([{ outcome: "ignored", userId: null }]);
  });

  it("even with its event record gone, a paid invoice never grants twice (the ledger key holds)", async () => {
    const { id, story } = await payingUser();
    const { completed, invoicePaid } = story.checkout();
    await deliverOk(completed);
    await db.delete(stripeEvents).where(eq(stripeEvents.id, completed.id));
    await deliverOk(completed);
    await deliverOk(invoicePaid);
    expect((await paymentState(id)).user.credits).toBe(44);
  });
});
