import { readFileSync } from "node:fs";
import { join } from "node:path";
import type Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEAM_PLAN } from "../../app/shared/catalog.ts";
import { applySeatFact, EMPTY_POOL, type SeatPool } from "../../app/shared/seat-pool.ts";
import { addInterval } from "../../emulators/stripe-objects.ts";
import { creditsForProration, invitationCap, type SeatFact, toSeatFact } from "../../workers/services/seat-events.ts";
import {
  SEATS_DECLINED_MESSAGE,
  SEATS_PAYMENT_DUE_MESSAGE,
  setSeats,
  startTeamCheckout,
  type TeamBillingDeps,
} from "../../workers/services/team-billing.ts";
import { type StripeHarness, startStripeHarness } from "./stripe-harness.ts";

// A team's seats through the real `stripe` SDK against the Stripe emulator's
// HTTP API, with the emulator's test clock frozen so every proration is
// checked against Stripe's formula at the emulator's time: the production
// service (workers/services/team-billing.ts) buys and changes seats, the
// emulator posts its signed events to a receiver here that verifies them with
// the SDK and parses them with the webhook's seat parser (seat-events.ts), and
// the pool (app/shared/seat-pool.ts) follows.

const SECRET = "sk_test_seats_contract";
const WHSEC = "whsec_seats_contract";
const SEAT = TEAM_PLAN.pricePerSeat * 100;

interface Received {
  event: Stripe.Event;
  fact: SeatFact;
}

let harness: StripeHarness;
let base = "";
const received: Received[] = [];
let pool: SeatPool = EMPTY_POOL;
const grants: { credits: number; key: string }[] = [];
const notices: string[] = [];

async function control(path: string, body: unknown = {}): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${path}`, { method: "POST", body: JSON.stringify(body) });
  expect(res.status, path).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

const clock = (t: number) => control("/_emulator/clock", { frozen_time: t });

/** Stripe's documented proration: quantity × price × (period end − proration time) / (period end − period start). */
const stripeFormula = (quantity: number, start: number, end: number, at: number) =>
  Math.round((quantity * SEAT * (end - at)) / (end - start));

function since(n: number): Received[] {
  return received.slice(n);
}

beforeAll(async () => {
  harness = await startStripeHarness(SECRET, WHSEC, (event) => {
    const fact = toSeatFact(event);
    received.push({ event, fact });
    const outcome = applySeatFact(pool, fact);
    pool = outcome.pool;
    if (outcome.grant) grants.push(outcome.grant);
    if (outcome.notice) notices.push(outcome.notice.kind);
  });
  base = harness.base;
});

afterAll(() => harness?.close());

describe("a team's seats at the Stripe emulator, through the stripe SDK", () => {
  const t0 = Math.floor(Date.now() / 1000) + 60;
  const end = addInterval(t0, "month");
  let stripe: Stripe;
  let deps: TeamBillingDeps;
  let customer = "";
  let subscription = "";

  it("buys the team plan for 3 seats: one paid period of 3 × the seat price, 3 × the credits per seat", async () => {
    await clock(t0);
    // As workers/adapters/stripe.ts points the SDK at STRIPE_API_URL (that file needs the Worker's Env type).
    stripe = harness.stripe;
    deps = { stripe, origin: "https://app.example" };
    customer = (await stripe.customers.create({ email: "owner@team.example" })).id;
    const started = await startTeamCheckout(deps, { id: "team_1", customerId: customer }, 3);
    if (!started.ok) throw new Error(started.error);
    const session = new URL(started.url).pathname.split("/").pop()!;
    const paid = await fetch(`${base}/c/pay/${session}/pay`, { method: "POST", redirect: "manual" });
    expect(paid.status).toBe(303);
    const sub = (await stripe.subscriptions.list({ customer })).data[0]!;
    subscription = sub.id;
    expect(sub.items.data[0]).toMatchObject({ quantity: 3, current_period_start: t0, current_period_end: end });
    const inv = await stripe.invoices.retrieve(sub.latest_invoice as string);
    expect(inv.amount_paid).toBe(3 * SEAT);
    expect(inv.lines.data.map((l) => [l.quantity, l.amount])).toEqual([[3, 3 * SEAT]]);
    expect(pool).toMatchObject({ seats: 3, frozen: false });
    expect(grants).toEqual([{ credits: 3 * TEAM_PLAN.creditsPerSeat, key: `period:${inv.id}` }]);
  });

  it("names the invoice's payment as Stripe does since basil: not in invoice.paid, in invoice_payment.paid (ADR 0340)", async () => {
    const sample = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures/stripe/invoice_payment.json"), "utf8"))
      .object as Record<string, unknown>;
    const paid = received.find((r) => r.event.type === "invoice.paid")!.event.data.object as Stripe.Invoice;
    // Includable: an event never carries it, a retrieve only when asked.
    expect(paid).not.toHaveProperty("payments");
    expect(await stripe.invoices.retrieve(paid.id!)).not.toHaveProperty("payments");
    const expanded = await stripe.invoices.retrieve(paid.id!, { expand: ["payments"] });
    const pair = received.find((r) => r.event.type === "invoice_payment.paid")!.event.data.object as unknown as Record<
      string,
      unknown
    >;
    expect(expanded.payments?.data).toEqual([pair]);
    // The published sample's fields, with the same kinds of values (its currency_code is the attribute list's currency).
    const { currency_code: currency, ...fields } = sample;
    const kinds = (o: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v === null ? "null" : typeof v]));
    expect(kinds(pair)).toEqual(kinds({ ...fields, currency }));
    expect(Object.keys(pair.payment as object).sort()).toEqual(Object.keys(sample.payment as object).sort());
    expect(pair).toMatchObject({ object: "invoice_payment", invoice: paid.id, status: "paid" });
    expect(pair.payment).toMatchObject({ type: "payment_intent", payment_intent: expect.stringMatching(/^pi_/) });
  });

  it("adds a seat at the emulator's clock: Stripe's two proration lines, paid now; the seat count and cap rise", async () => {
    // Not on a whole day: a proration by the day instead of the second would be dollars off.
    const at = t0 + Math.floor((end - t0) * 0.4) + 40_017;
    await clock(at);
    const mark = received.length;
    const result = await setSeats(deps, subscription, 4);
    expect(result).toMatchObject({ ok: true, quantity: 4, previousQuantity: 3 });
    const inv = await stripe.invoices.retrieve((result as { invoiceId: string }).invoiceId);
    const credit = stripeFormula(3, t0, end, at);
    const debit = stripeFormula(4, t0, end, at);
    expect(
      inv.lines.data.map((l) => ({
        amount: l.amount,
        quantity: l.quantity,
        proration: l.parent?.subscription_item_details?.proration,
        period: l.period,
      })),
    ).toEqual([
      { amount: -credit, quantity: 3, proration: true, period: { start: at, end } },
      { amount: debit, quantity: 4, proration: true, period: { start: at, end } },
    ]);
    expect(inv.lines.data[0]!.description).toMatch(/^Unused time on 3 × team_seat_monthly after /);
    expect(inv.lines.data[1]!.description).toMatch(/^Remaining time on 4 × team_seat_monthly after /);
    expect(inv).toMatchObject({ billing_reason: "subscription_update", status: "paid", amount_paid: debit - credit });

    const events = since(mark);
    expect(events.map((r) => r.event.type)).toEqual([
      "customer.subscription.updated",
      "invoice.paid",
      "invoice_payment.paid",
      "invoice.payment_succeeded",
    ]);
    const previous = (
      events[0]!.event.data as { previous_attributes?: { items?: Stripe.ApiList<Stripe.SubscriptionItem> } }
    ).previous_attributes;
    expect(previous?.items?.data[0]?.quantity).toBe(3);
    const fact = events[1]!.fact;
    expect(fact).toMatchObject({
      kind: "seats_changed",
      teamId: "team_1",
      subscription,
      quantity: 4,
      previousQuantity: 3,
      prorationPaidCents: debit - credit,
      invoiceId: inv.id,
      credits: Math.floor((TEAM_PLAN.creditsPerSeat * (debit - credit)) / SEAT),
    });
    expect(pool.seats).toBe(4);
    expect(invitationCap(pool.seats, 2)).toBe(2);
    expect(grants.at(-1)).toEqual({ credits: creditsForProration(debit - credit), key: `seats:${inv.id}` });
  });

  it("removes a seat: the credit is kept by Stripe as a balance, nothing is charged and no credits are granted", async () => {
    const grantsBefore = grants.length;
    const result = await setSeats(deps, subscription, 3);
    expect(result).toMatchObject({ ok: true, quantity: 3 });
    const inv = await stripe.invoices.retrieve((result as { invoiceId: string }).invoiceId);
    expect(inv.total).toBeLessThan(0);
    expect(inv.amount_paid).toBe(0);
    expect(received.at(-2)!.fact).toMatchObject({
      kind: "seats_changed",
      quantity: 3,
      prorationPaidCents: 0,
      credits: 0,
    });
    expect(pool.seats).toBe(3);
    expect(grants.length).toBe(grantsBefore);
    expect((await stripe.customers.retrieve(customer)) as Stripe.Customer).toMatchObject({ balance: inv.total });
  });

  it("re-adds the seat in the same period: paid from the balance the removal left, so no money and no credits", async () => {
    const balance = ((await stripe.customers.retrieve(customer)) as Stripe.Customer).balance;
    const grantsBefore = grants.length;
    const result = await setSeats(deps, subscription, 4);
    const inv = await stripe.invoices.retrieve((result as { invoiceId: string }).invoiceId);
    expect(inv.total).toBe(-balance);
    expect(inv).toMatchObject({ starting_balance: balance, amount_paid: 0, ending_balance: 0 });
    expect(received.at(-2)!.fact).toMatchObject({
      kind: "seats_changed",
      quantity: 4,
      prorationPaidCents: 0,
      credits: 0,
    });
    expect(grants.length).toBe(grantsBefore);
    expect(pool.seats).toBe(4);
    await setSeats(deps, subscription, 3);
  });

  it("honours proration_date, leaves create_prorations pending for the next invoice, and prorates nothing with none", async () => {
    const sub = await stripe.subscriptions.retrieve(subscription);
    const item = sub.items.data[0]!;
    const half = t0 + (end - t0) / 2;
    const halfway = Number.isInteger(half) ? half : Math.floor(half);
    const mark = received.length;
    await stripe.subscriptions.update(subscription, {
      items: [{ id: item.id, quantity: 5 }],
      proration_behavior: "create_prorations",
      proration_date: halfway,
    });
    const events = since(mark);
    expect(events.map((r) => r.event.type)).toEqual(["customer.subscription.updated"]);
    await stripe.subscriptions.update(subscription, {
      items: [{ id: item.id, quantity: 6 }],
      proration_behavior: "none",
    });
    await expect(
      stripe.subscriptions.update(subscription, {
        items: [{ id: item.id, quantity: 7 }],
        proration_date: t0 - 10,
      }),
    ).rejects.toMatchObject({ statusCode: 400, param: "proration_date" });
    await clock(end);
    const renewal = await stripe.invoices.retrieve(
      (await stripe.subscriptions.retrieve(subscription)).latest_invoice as string,
    );
    expect(renewal.billing_reason).toBe("subscription_cycle");
    expect(
      renewal.lines.data.map((l) => [l.amount, l.quantity, l.parent?.subscription_item_details?.proration]),
    ).toEqual([
      [-stripeFormula(3, t0, end, halfway), 3, true],
      [stripeFormula(5, t0, end, halfway), 5, true],
      [6 * SEAT, 6, false],
    ]);
    expect(pool.seats).toBe(6);
    // Back to 3 seats for what follows, without prorations.
    await stripe.subscriptions.update(subscription, {
      items: [{ id: item.id, quantity: 3 }],
      proration_behavior: "none",
    });
  });

  it("a declined seat change changes nothing", async () => {
    await control(`/_emulator/customers/${customer}/fail-next-payment`);
    const before = await stripe.subscriptions.retrieve(subscription);
    const mark = received.length;
    expect(await setSeats(deps, subscription, 5)).toEqual({
      ok: false,
      code: "conflict",
      error: SEATS_DECLINED_MESSAGE,
    });
    const after = await stripe.subscriptions.retrieve(subscription);
    expect(after.items.data[0]!.quantity).toBe(3);
    expect(after.latest_invoice).toBe(before.latest_invoice);
    expect(since(mark)).toEqual([]);
  });

  it("a declined renewal: invoice.payment_failed (open, attempted), past_due, the pool frozen; a retry pays and thaws it", async () => {
    await control(`/_emulator/customers/${customer}/fail-next-payment`, { count: 2 });
    const next = addInterval(end, "month");
    const mark = received.length;
    const grantsBefore = grants.length;
    await clock(next);
    const events = since(mark);
    expect(events.map((r) => r.event.type)).toEqual(["invoice.payment_failed", "customer.subscription.updated"]);
    const failed = events[0]!.event.data.object as Stripe.Invoice;
    expect(failed).toMatchObject({
      status: "open",
      attempted: true,
      attempt_count: 1,
      amount_paid: 0,
      amount_remaining: 3 * SEAT,
      billing_reason: "subscription_cycle",
    });
    expect(failed.next_payment_attempt).toBeGreaterThan(next);
    expect(events[1]!.event.data).toMatchObject({
      object: { status: "past_due" },
      previous_attributes: { status: "active" },
    });
    expect(events[0]!.fact).toMatchObject({ kind: "payment_failed", invoiceId: failed.id, attemptCount: 1 });
    expect(pool.frozen).toBe(true);
    expect(notices).toEqual(["payment_failed"]);
    expect(grants.length).toBe(grantsBefore);
    expect(await setSeats(deps, subscription, 4)).toEqual({
      ok: false,
      code: "conflict",
      error: SEATS_PAYMENT_DUE_MESSAGE,
    });

    // A manual attempt declined again: 402, attempt_count unchanged (Stripe counts only automatic retries).
    await expect(stripe.invoices.pay(failed.id)).rejects.toMatchObject({ statusCode: 402, code: "card_declined" });
    expect((await stripe.invoices.retrieve(failed.id)).attempt_count).toBe(1);
    expect(notices).toEqual(["payment_failed"]);

    const retryMark = received.length;
    const retried = await control(`/_emulator/invoices/${failed.id}/retry`);
    expect(retried).toMatchObject({ status: "paid", attempt_count: 2, amount_paid: 3 * SEAT });
    expect(since(retryMark).map((r) => r.event.type)).toEqual([
      "invoice.paid",
      "invoice_payment.paid",
      "invoice.payment_succeeded",
      "customer.subscription.updated",
    ]);
    expect((await stripe.subscriptions.retrieve(subscription)).status).toBe("active");
    expect(pool.frozen).toBe(false);
    expect(notices).toEqual(["payment_failed", "payment_recovered"]);
    expect(grants.at(-1)).toEqual({ credits: 3 * TEAM_PLAN.creditsPerSeat, key: `period:${failed.id}` });
  });

  it("applies a redelivered event once", async () => {
    const paid = received.filter((r) => r.event.type === "invoice.paid").at(-1)!;
    const grantsBefore = grants.length;
    const res = await fetch(`${base}/_emulator/events/${paid.event.id}/resend`, { method: "POST" });
    expect(res.status).toBe(200);
    expect(grants.length).toBe(grantsBefore);
    expect(applySeatFact(pool, paid.fact).duplicate).toBe(true);
  });

  it("updates the team's customer as Stripe documents: sent fields set, others kept, metadata merged, empty removes", async () => {
    const made = await stripe.customers.create({
      email: "old-owner@team.example",
      name: "Harbor Realty",
      metadata: { teamId: "team_1", keep: "yes" },
    });
    const updated = await stripe.customers.update(made.id, {
      email: "new-owner@team.example",
      metadata: { keep: "", added: "1" },
    });
    expect(updated).toMatchObject({
      id: made.id,
      object: "customer",
      email: "new-owner@team.example",
      name: "Harbor Realty",
      metadata: { teamId: "team_1", added: "1" },
    });
    expect(updated.metadata).not.toHaveProperty("keep");
    expect((await stripe.customers.retrieve(made.id)) as Stripe.Customer).toMatchObject({
      email: "new-owner@team.example",
    });
    // A customer that does not exist: Stripe's resource_missing, which the SDK throws.
    await expect(stripe.customers.update("cus_nothere", { email: "x@y.example" })).rejects.toMatchObject({
      statusCode: 404,
      code: "resource_missing",
    });
  });
});
