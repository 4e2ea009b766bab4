import { checkoutSessionObject, eventObject } from "@emulators/stripe-objects";
import { priceFor, SubscriptionStory } from "@test/support/stripe";
import { addMonthsUtc, nextGrantAt } from "@workers/objects/user/payments/periods";
import { currentSubscription, supersedes } from "@workers/objects/user/payments/subscriptions";
import { invoicePaymentOf, toPaymentEvent } from "@workers/services/stripe-events";
import type Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { usagePercent } from "~/components/plan-status-card";

const asEvent = (e: unknown) => e as Stripe.Event;
const day = 24 * 3600 * 1000;

describe("calendar months", () => {
  it("keep the day and clamp to the month's end", () => {
    expect(new Date(addMonthsUtc(Date.UTC(2027, 0, 31, 10), 1)).toISOString()).toBe("2027-02-28T10:00:00.000Z");
    expect(new Date(addMonthsUtc(Date.UTC(2028, 0, 31), 1)).toISOString()).toBe("2028-02-29T00:00:00.000Z");
    expect(new Date(addMonthsUtc(Date.UTC(2027, 10, 15), 3)).toISOString()).toBe("2028-02-15T00:00:00.000Z");
  });

  it("schedule a yearly period's 11 further grants, none for monthly periods", () => {
    const start = Date.UTC(2027, 0, 15);
    const end = Date.UTC(2028, 0, 15);
    expect(nextGrantAt("month", start, start + 30 * day, 1)).toBeNull();
    expect(nextGrantAt("year", null, null, 1)).toBeNull();
    expect(nextGrantAt("year", start, end, 1)).toBe(Date.UTC(2027, 1, 15));
    expect(nextGrantAt("year", start, end, 11)).toBe(Date.UTC(2027, 11, 15));
    expect(nextGrantAt("year", start, end, 12)).toBeNull();
    // A period cut short (a plan switch ends it) stops the schedule.
    expect(nextGrantAt("year", start, Date.UTC(2027, 2, 1), 2)).toBeNull();
  });
});

describe("which subscription state wins", () => {
  const stored = { status: "active", stateVersion: 2000, currentPeriodEnd: 10, cancelAtPeriodEnd: false };
  it("a newer event wins, an older one is ignored", () => {
    expect(supersedes(stored, { version: 3000, status: "active", periodEnd: 10 })).toBe(true);
    expect(supersedes(stored, { version: 1000, status: "active", periodEnd: 99 })).toBe(false);
  });
  it("within the same second the further-along status, then the later period, wins", () => {
    expect(supersedes({ ...stored, status: "incomplete" }, { version: 2000, status: "active", periodEnd: 10 })).toBe(
      true,
    );
    expect(supersedes(stored, { version: 2000, status: "incomplete", periodEnd: 99 })).toBe(false);
    expect(supersedes(stored, { version: 2000, status: "active", periodEnd: 11 })).toBe(true);
    expect(supersedes(stored, { version: 2000, status: "active", periodEnd: 10 })).toBe(false);
  });
  it("within the same second and period, a cancellation or resumption wins when it changes exactly what is stored", () => {
    const cancel = { version: 2000, status: "active", periodEnd: 10, cancelAtPeriodEnd: true };
    // Stripe's previous_attributes say it was not set to cancel, as stored: it came after the stored state.
    expect(supersedes(stored, { ...cancel, cancelChangedFrom: false })).toBe(true);
    // It changed something else than what is stored, or says nothing about what it changed: the stored state stays.
    expect(supersedes(stored, { ...cancel, cancelChangedFrom: true })).toBe(false);
    expect(supersedes(stored, { ...cancel, cancelChangedFrom: null })).toBe(false);
    // A resumption right after: it changes the cancellation now stored.
    const cancelled = { ...stored, cancelAtPeriodEnd: true };
    const resume = { version: 2000, status: "active", periodEnd: 10, cancelAtPeriodEnd: false };
    expect(supersedes(cancelled, { ...resume, cancelChangedFrom: true })).toBe(true);
    // The same change seen again (a repeat under another id) changes nothing.
    expect(supersedes(cancelled, { ...cancel, cancelChangedFrom: false })).toBe(false);
    // An older second never wins, whatever it says it changed.
    expect(supersedes(stored, { ...cancel, version: 1000, cancelChangedFrom: false })).toBe(false);
  });
  it("canceled is final, and a cancellation wins whatever its time", () => {
    expect(supersedes({ ...stored, status: "canceled" }, { version: 9000, status: "active", periodEnd: 99 })).toBe(
      false,
    );
    expect(supersedes(stored, { version: 1, status: "canceled", periodEnd: 10 })).toBe(true);
  });
  it("the current subscription is the live one whose period started last", () => {
    const row = (id: string, status: string, start: number) => ({
      id,
      userId: "u",
      customerId: "c",
      planId: "small",
      interval: "month" as const,
      status,
      cancelAtPeriodEnd: false,
      currentPeriodStart: start,
      currentPeriodEnd: start + 10,
      endedAt: null,
      stateVersion: 1,
      createdAt: 0,
      updatedAt: 0,
      windowStart: null,
      windowCredits: 0,
    });
    expect(currentSubscription([row("a", "active", 5), row("b", "active", 9), row("c", "canceled", 20)])?.id).toBe("b");
    expect(currentSubscription([row("a", "canceled", 5), row("b", "incomplete", 9)])).toBeNull();
  });
});

describe("Stripe events as plain data", () => {
  const story = new SubscriptionStory("user_1", "standard", "year", { customer: "cus_1", start: 1_800_000_000 });
  const events = story.checkout();

  it("reads a completed checkout: user, customer, subscription, first invoice and plan", () => {
    expect(toPaymentEvent(asEvent(events.completed))).toEqual({
      eventId: events.completed.id,
      type: "checkout.session.completed",
      createdAt: 1_800_000_000_000,
      userHint: "user_1",
      fact: {
        kind: "checkout_completed",
        customerId: "cus_1",
        subscriptionId: story.subscriptionId,
        invoiceId: events.invoice.id,
        planId: "standard",
        interval: "year",
        total: events.invoice.total,
      },
    });
  });

  it("reads a paid invoice's period from its subscription line, not its proration lines", () => {
    const ev = toPaymentEvent(asEvent(events.invoicePaid));
    expect(ev.fact).toEqual({
      kind: "invoice_paid",
      customerId: "cus_1",
      subscriptionId: story.subscriptionId,
      invoiceId: events.invoice.id,
      planId: "standard",
      interval: "year",
      periodStart: 1_800_000_000_000,
      periodEnd: addMonthsUtc(1_800_000_000_000, 12),
      billingReason: "subscription_create",
      total: events.invoice.total,
      // An event does not carry the invoice's payments (includable, ADR 0340): invoice_payment.paid names them.
      paymentIntentId: null,
    });
    // An invoice asked for with expand[]=payments does name its PaymentIntent, and it is read.
    const expanded = structuredClone(events.invoicePaid);
    (expanded.data as { object: unknown }).object = events.invoice;
    expect(toPaymentEvent(asEvent(expanded)).fact).toMatchObject({
      paymentIntentId: events.invoice.payments.data[0]!.payment.payment_intent,
    });
    expect(invoicePaymentOf(asEvent(events.invoicePayment))).toEqual({
      id: events.invoice.payments.data[0]!.id,
      invoiceId: events.invoice.id,
      paymentIntentId: events.invoice.payments.data[0]!.payment.payment_intent,
    });
  });

  it("reads the plan of a subscription event from its price's lookup key", () => {
    const sub = structuredClone(events.created);
    (sub.data.object as { metadata: object }).metadata = {};
    const ev = toPaymentEvent(asEvent(sub));
    expect(ev.fact).toMatchObject({ kind: "subscription", planId: "standard", interval: "year", status: "active" });
    expect(ev.userHint).toBeNull();
  });

  it("ignores what buys no plan: unpaid or one-off checkouts, unknown prices, other event types", () => {
    const unpaid = checkoutSessionObject({
      id: "cs_1",
      url: null,
      customer: "cus_1",
      customerEmail: null,
      clientReferenceId: "user_1",
      metadata: { planId: "small", interval: "month" },
      subscriptionMetadata: {},
      price: priceFor("small", "month"),
      successUrl: "x",
      cancelUrl: null,
      created: 1,
      status: "open",
      paymentStatus: "unpaid",
      subscription: "sub_1",
      invoice: null,
    });
    const ignored = (object: unknown, type: Stripe.Event["type"] = "checkout.session.completed") =>
      toPaymentEvent(asEvent(eventObject("evt_x", type, object, 1))).fact.kind;
    expect(ignored(unpaid)).toBe("ignored");
    expect(ignored({ ...unpaid, payment_status: "paid", mode: "payment" })).toBe("ignored");
    expect(ignored({ ...unpaid, payment_status: "paid", metadata: { planId: "gold", interval: "month" } })).toBe(
      "ignored",
    );
    expect(ignored({ ...unpaid, payment_status: "paid" })).toBe("checkout_completed");
    expect(ignored({ id: "in_1", customer: "cus_1", parent: null, lines: { data: [] } }, "invoice.paid")).toBe(
      "ignored",
    );
    expect(ignored({ id: "cus_1" }, "customer.created")).toBe("ignored");
  });
});

describe("the usage bar", () => {
  it("is credits over plan credits, capped at 100%", () => {
    expect(usagePercent(22, 44)).toBe(50);
    expect(usagePercent(0, 44)).toBe(0);
    expect(usagePercent(60, 44)).toBe(100);
    expect(usagePercent(3, 0)).toBe(100);
  });
});
