import { env } from "cloudflare:workers";
import { creditLedger, stripeEvents, users } from "@db/schema";
import { eventObject, invoiceObject, priceObject } from "@emulators/stripe-objects";
import { quantityProrations } from "@emulators/stripe-proration";
import { db, makeUser } from "@test/support/factories";
import { deliverOk, signature } from "@test/support/stripe";
import { creditsForProration, type SeatFact } from "@workers/services/seat-events";
import { handleStripeWebhook, type SeatFactSink } from "@workers/services/stripe-webhook";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { TEAM_PLAN } from "~/shared/catalog";
import { applySeatFact, EMPTY_POOL, type SeatPool } from "~/shared/seat-pool";

// The webhook and a team's seat events, in workerd, with events built by the
// Stripe emulator's own builders and signed as Stripe signs them: a sink
// receives the typed seat facts; an event naming no team of ours is recorded as
// ignored and no person's credits move, even when its Stripe customer is a
// person's. The team's object behind the real route: team-seats.test.ts.

const seatPrice = priceObject({
  id: `price_${TEAM_PLAN.lookupKey}`,
  lookupKey: TEAM_PLAN.lookupKey,
  unitAmount: TEAM_PLAN.pricePerSeat * 100,
  interval: "month",
  productId: "prod_team",
});

function seatEvent(customer: string, invoiceId: string, at: number) {
  const start = at - 10 * 86_400;
  const end = at + 20 * 86_400;
  let n = 0;
  const prorations = quantityProrations({
    price: seatPrice,
    from: 3,
    to: 4,
    period: { start, end },
    at,
    invoiceItem: () => `ii_${invoiceId}_${n++}`,
  });
  const inv = invoiceObject({
    id: invoiceId,
    number: "T-1",
    customer,
    subscriptionId: "sub_team_it",
    subscriptionItemId: "si_team_it",
    metadata: { teamId: "team_it", planId: "team" },
    price: seatPrice,
    created: at,
    periodStart: start,
    periodEnd: end,
    billingReason: "subscription_update",
    prorations,
    periodLine: false,
    paymentIntent: `pi_${invoiceId}`,
  });
  return { event: eventObject(`evt_${invoiceId}`, "invoice.paid", inv, at), paid: inv.amount_paid };
}

async function post(event: ReturnType<typeof eventObject>, sink?: SeatFactSink) {
  const payload = JSON.stringify(event);
  return handleStripeWebhook(env, db, payload, await signature(payload), sink);
}

describe("a team's seat events at the webhook", { timeout: 30_000 }, () => {
  it("reach the sink as a typed seats_changed fact, once per invoice when the sink applies them with the pool", async () => {
    const at = Math.floor(Date.now() / 1000);
    const { event, paid } = seatEvent("cus_team_it", "in_seats_it", at);
    let pool: SeatPool = EMPTY_POOL;
    const facts: SeatFact[] = [];
    const sink: SeatFactSink = async (fact) => {
      facts.push(fact);
      const outcome = applySeatFact(pool, fact);
      pool = outcome.pool;
      return { outcome: "applied", duplicate: outcome.duplicate };
    };
    const first = await post(event, sink);
    expect(first).toEqual({ status: 200, body: { received: true, outcome: "applied", duplicate: false } });
    expect(facts).toEqual([
      {
        kind: "seats_changed",
        teamId: "team_it",
        customerId: "cus_team_it",
        subscription: "sub_team_it",
        quantity: 4,
        previousQuantity: 3,
        prorationPaidCents: paid,
        invoiceId: "in_seats_it",
        credits: creditsForProration(paid),
        at: at * 1000,
      },
    ]);
    expect(pool.seats).toBe(4);
    expect((await post(event, sink)).body).toMatchObject({ outcome: "applied", duplicate: true });
  });

  it("naming no team of ours are recorded as ignored and move no person's credits, even on the owner's customer", async () => {
    const owner = await makeUser({ credits: 5 });
    await db.update(users).set({ stripeCustomerId: "cus_owner_it" }).where(eq(users.id, owner.id));
    const ledger = () => db.select().from(creditLedger).where(eq(creditLedger.userId, owner.id)).all();
    const before = await ledger();
    const { event } = seatEvent("cus_owner_it", "in_owner_it", Math.floor(Date.now() / 1000));
    expect(await deliverOk(event)).toEqual({ received: true, outcome: "ignored", duplicate: false });
    const row = await db.query.stripeEvents.findFirst({ where: eq(stripeEvents.id, event.id) });
    expect(row).toMatchObject({ outcome: "ignored", userId: null });
    const u = await db.query.users.findFirst({ where: eq(users.id, owner.id) });
    expect(u?.credits).toBe(5);
    expect(await ledger()).toEqual(before);
  });
});
