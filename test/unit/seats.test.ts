import { eventObject, invoiceObject, priceObject, subscriptionObject } from "@emulators/stripe-objects";
import { prorationAmount, quantityProrations } from "@emulators/stripe-proration";
import { creditsForProration, invitationCap, type SeatFact, toSeatFact } from "@workers/services/seat-events";
import { toPaymentEvent } from "@workers/services/stripe-events";
import type Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { TEAM_PLAN } from "~/shared/catalog";
import { applySeatFact, EMPTY_POOL } from "~/shared/seat-pool";

// Seats as Stripe bills them: the emulator's proration lines against Stripe's
// documented formula and example, the credits a proration buys, and the seat
// facts the webhook reads from the emulator's own objects.

const asEvent = (e: unknown) => e as Stripe.Event;
const start = Date.UTC(2026, 10, 1) / 1000;
const end = Date.UTC(2026, 11, 1) / 1000;
const period = { start, end };
const seatPrice = priceObject({
  id: "price_team_seat_monthly",
  lookupKey: TEAM_PLAN.lookupKey,
  unitAmount: TEAM_PLAN.pricePerSeat * 100,
  interval: "month",
  productId: "prod_team",
});
const tenDollars = { ...seatPrice, unit_amount: 1000 };
let n = 0;
const invoiceItem = () => `ii_${++n}`;

describe("the emulator's prorations", () => {
  it("give Stripe's documented example: 10 USD → 20 USD halfway is −5 USD and +10 USD", () => {
    const halfway = start + (end - start) / 2;
    // As a price switch (the documentation's form): unused time on 10 USD, remaining time on 20 USD.
    expect(prorationAmount(1000, 1, period, halfway)).toBe(500);
    expect(prorationAmount(2000, 1, period, halfway)).toBe(1000);
    // As seats, the same per unit: 1 × 10 USD → 2 × 10 USD.
    const lines = quantityProrations({ price: tenDollars, from: 1, to: 2, period, at: halfway, invoiceItem });
    expect(lines.map((l) => [l.amount, l.quantity])).toEqual([
      [-500, 1],
      [1000, 2],
    ]);
    expect(lines.map((l) => l.description)).toEqual([
      `Unused time on 1 × ${TEAM_PLAN.lookupKey} after 16 Nov 2026`,
      `Remaining time on 2 × ${TEAM_PLAN.lookupKey} after 16 Nov 2026`,
    ]);
    expect(lines.every((l) => l.periodStart === halfway && l.periodEnd === end)).toBe(true);
  });

  it("follow Stripe's formula to the second: quantity × price × (end − t) / (end − start), each line to the cent", () => {
    for (const at of [start, start + 1, start + 86_399, start + 1_234_567, end - 1, end]) {
      for (const [from, to] of [
        [3, 4],
        [4, 3],
        [1, 10],
      ] as const) {
        const lines = quantityProrations({ price: seatPrice, from, to, period, at, invoiceItem });
        const formula = (q: number) => Math.round((q * seatPrice.unit_amount * (end - at)) / (end - start));
        expect(
          lines.map((l) => l.amount),
          `${from}→${to} at ${at}`,
        ).toEqual([-formula(from), formula(to)]);
      }
    }
    expect(quantityProrations({ price: seatPrice, from: 3, to: 3, period, at: start, invoiceItem })).toEqual([]);
  });
});

describe("credits for a proration", () => {
  it("are credits per seat × the paid fraction of a seat's period, rounded down; nothing for seats removed", () => {
    const seat = TEAM_PLAN.pricePerSeat * 100;
    expect(creditsForProration(seat)).toBe(TEAM_PLAN.creditsPerSeat);
    expect(creditsForProration(seat / 2)).toBe(Math.floor(TEAM_PLAN.creditsPerSeat / 2));
    expect(creditsForProration(1000, 1000, 30)).toBe(30);
    expect(creditsForProration(999, 1000, 30)).toBe(29);
    expect(creditsForProration(1, 1000, 30)).toBe(0);
    expect(creditsForProration(0)).toBe(0);
    expect(creditsForProration(-2950)).toBe(0);
    expect(invitationCap(4, 2)).toBe(2);
    expect(invitationCap(2, 3)).toBe(0);
  });
});

const teamMeta = { teamId: "team_1", planId: "team" };

function seatInvoice(o: { id: string; from: number; to: number; at: number; payment?: "declined" }) {
  const prorations = quantityProrations({ price: seatPrice, from: o.from, to: o.to, period, at: o.at, invoiceItem });
  return invoiceObject({
    id: o.id,
    number: "T-1",
    customer: "cus_team",
    subscriptionId: "sub_team",
    subscriptionItemId: "si_team",
    metadata: teamMeta,
    price: seatPrice,
    created: o.at,
    periodStart: start,
    periodEnd: end,
    billingReason: "subscription_update",
    prorations,
    periodLine: false,
    paymentIntent: `pi_${o.id}`,
    payment: o.payment ? { paid: false, attemptCount: 1, nextPaymentAttempt: o.at + 3 * 86_400 } : undefined,
  });
}

describe("seat facts from the emulator's events", () => {
  const at = start + 600_000;

  it("a paid seat proration is seats_changed with the proration paid, its credits and the invoice", () => {
    const inv = seatInvoice({ id: "in_add", from: 3, to: 4, at });
    const paid =
      prorationAmount(seatPrice.unit_amount, 4, period, at) - prorationAmount(seatPrice.unit_amount, 3, period, at);
    expect(inv.amount_paid).toBe(paid);
    const fact = toSeatFact(asEvent(eventObject("evt_1", "invoice.paid", inv, at)));
    expect(fact).toEqual({
      kind: "seats_changed",
      teamId: "team_1",
      customerId: "cus_team",
      subscription: "sub_team",
      quantity: 4,
      previousQuantity: 3,
      prorationPaidCents: paid,
      invoiceId: "in_add",
      credits: creditsForProration(paid),
      at: at * 1000,
    });
    // A person's payment path reads nothing in it.
    expect(toPaymentEvent(asEvent(eventObject("evt_1", "invoice.paid", inv, at))).fact.kind).toBe("ignored");
  });

  it("a declined payment is payment_failed; a person's plan invoice is no seat fact", () => {
    const inv = seatInvoice({ id: "in_declined", from: 3, to: 4, at, payment: "declined" });
    expect(inv).toMatchObject({ status: "open", attempted: true, attempt_count: 1, amount_paid: 0 });
    expect(toSeatFact(asEvent(eventObject("evt_2", "invoice.payment_failed", inv, at)))).toMatchObject({
      kind: "payment_failed",
      invoiceId: "in_declined",
      amountDueCents: inv.amount_due,
      attemptCount: 1,
      nextPaymentAttempt: (at + 3 * 86_400) * 1000,
    });
    const personal = {
      ...inv,
      parent: {
        ...inv.parent,
        subscription_details: {
          metadata: { userId: "u", planId: "popular", interval: "month" },
          subscription: "sub_p",
        },
      },
    };
    expect(toSeatFact(asEvent(eventObject("evt_3", "invoice.paid", personal, at))).kind).toBe("ignored");
  });

  it("a subscription's status is seat_status; a person's subscription is ignored", () => {
    const sub = subscriptionObject({
      id: "sub_team",
      customer: "cus_team",
      itemId: "si_team",
      price: seatPrice,
      status: "past_due",
      created: start,
      periodStart: start,
      periodEnd: end,
      metadata: teamMeta,
      quantity: 4,
    });
    expect(toSeatFact(asEvent(eventObject("evt_4", "customer.subscription.updated", sub, at)))).toMatchObject({
      kind: "seat_status",
      status: "past_due",
      quantity: 4,
    });
    const personal = { ...sub, metadata: { userId: "u", planId: "popular", interval: "month" } };
    expect(toSeatFact(asEvent(eventObject("evt_5", "customer.subscription.updated", personal, at))).kind).toBe(
      "ignored",
    );
  });
});

describe("the pool", () => {
  const changed = (invoiceId: string, quantity: number, credits: number, at: number): SeatFact => ({
    kind: "seats_changed",
    teamId: "team_1",
    customerId: "cus_team",
    subscription: "sub_team",
    quantity,
    previousQuantity: quantity - 1,
    prorationPaidCents: 100,
    invoiceId,
    credits,
    at,
  });

  it("applies a seat change once per invoice, and an older change never undoes a newer one", () => {
    const first = applySeatFact(EMPTY_POOL, changed("in_1", 4, 12, 2000));
    expect(first).toMatchObject({ pool: { seats: 4 }, grant: { credits: 12, key: "seats:in_1" }, duplicate: false });
    const again = applySeatFact(first.pool, changed("in_1", 4, 12, 2000));
    expect(again).toMatchObject({ grant: null, duplicate: true, pool: first.pool });
    const older = applySeatFact(first.pool, changed("in_0", 3, 5, 1000));
    expect(older.pool.seats).toBe(4);
    expect(older.grant).toEqual({ credits: 5, key: "seats:in_0" });
  });

  it("freezes on a declined payment (told once), keeps the seats, and thaws when that invoice is paid", () => {
    const start = applySeatFact(EMPTY_POOL, changed("in_1", 4, 12, 1000)).pool;
    const failed: SeatFact = {
      kind: "payment_failed",
      teamId: "team_1",
      customerId: "cus_team",
      subscription: "sub_team",
      invoiceId: "in_renewal",
      amountDueCents: 23_600,
      attemptCount: 1,
      nextPaymentAttempt: null,
      billingReason: "subscription_cycle",
      at: 5000,
    };
    const frozen = applySeatFact(start, failed);
    expect(frozen.pool).toMatchObject({ frozen: true, seats: 4, failedInvoice: "in_renewal" });
    expect(frozen.notice).toMatchObject({ kind: "payment_failed", invoiceId: "in_renewal" });
    expect(applySeatFact(frozen.pool, { ...failed, attemptCount: 2, at: 6000 })).toMatchObject({
      duplicate: true,
      notice: null,
    });
    const paid = applySeatFact(frozen.pool, {
      kind: "period_paid",
      teamId: "team_1",
      customerId: "cus_team",
      subscription: "sub_team",
      quantity: 4,
      invoiceId: "in_renewal",
      periodStart: 0,
      periodEnd: 1,
      credits: 4 * TEAM_PLAN.creditsPerSeat,
      at: 7000,
    });
    expect(paid).toMatchObject({
      pool: { frozen: false, failedInvoice: null, seats: 4 },
      grant: { credits: 4 * TEAM_PLAN.creditsPerSeat, key: "period:in_renewal" },
      notice: { kind: "payment_recovered" },
    });
    // Stripe does not promise order: the past_due status sent with the decline, delivered after the payment, is older.
    const stale: SeatFact = {
      kind: "seat_status",
      teamId: "team_1",
      customerId: "cus_team",
      subscription: "sub_team",
      status: "past_due",
      quantity: 4,
      at: 5000,
    };
    expect(applySeatFact(paid.pool, stale)).toMatchObject({ pool: { frozen: false }, notice: null });
  });
});
