import { env } from "cloudflare:workers";
import {
  addInterval,
  chargeObject,
  checkoutSessionObject,
  disputeObject,
  type EmittedEventType,
  eventObject,
  type InvoiceObject,
  invoiceObject,
  type PriceObject,
  paymentIntentObject,
  priceObject,
  type SubscriptionObject,
  subscriptionObject,
} from "@emulators/stripe-objects";
import { createStripe } from "@workers/adapters/stripe";
import { randomToken } from "@workers/lib/crypto";
import Stripe from "stripe";
import { vi } from "vitest";
import { type BillingInterval, findPlan, type PlanId } from "~/shared/catalog";
import { workerFetch } from "./worker";

// Signed Stripe events for the webhook tests, built with the same builders the
// Stripe emulator uses, so the tests exercise the shapes the emulator sends.

export type TestEvent = ReturnType<typeof eventObject>;

export function priceFor(planId: PlanId, interval: BillingInterval): PriceObject {
  const plan = findPlan(planId)!;
  const lookupKey = plan.lookupKeys[interval];
  return priceObject({
    id: `price_${lookupKey}`,
    lookupKey,
    unitAmount: (interval === "month" ? plan.price : plan.yearlyPrice) * 100,
    interval,
    productId: `prod_${plan.id}`,
  });
}

export async function signature(payload: string, opts: { timestamp?: number; secret?: string } = {}): Promise<string> {
  return Stripe.webhooks.generateTestHeaderStringAsync({
    payload,
    secret: opts.secret ?? env.STRIPE_WEBHOOK_SECRET!,
    timestamp: opts.timestamp ?? Math.floor(Date.now() / 1000),
    cryptoProvider: Stripe.createSubtleCryptoProvider(),
  });
}

/** Posts an event to the webhook as Stripe would: JSON body, Stripe-Signature header. */
export async function deliver(
  event: TestEvent,
  opts: { timestamp?: number; secret?: string; signature?: string | null } = {},
): Promise<Response> {
  const payload = JSON.stringify(event, null, 2);
  const sig = opts.signature === undefined ? await signature(payload, opts) : opts.signature;
  const headers: Record<string, string> = { "Content-Type": "application/json; charset=utf-8" };
  if (sig !== null) headers["Stripe-Signature"] = sig;
  return workerFetch("/api/webhooks/stripe", { method: "POST", headers, body: payload });
}

export async function deliverOk(event: TestEvent): Promise<{ outcome: string; duplicate: boolean }> {
  const res = await deliver(event);
  if (res.status !== 200) throw new Error(`webhook answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as { outcome: string; duplicate: boolean };
}

const id = (prefix: string) => `${prefix}_${randomToken(10)}`;

/**
 * One customer's subscription, step by step, producing the events Stripe
 * sends. `clock` is Stripe's time in seconds; each step may move it.
 */
export class SubscriptionStory {
  readonly customer: string;
  readonly subscriptionId = id("sub");
  readonly itemId = id("si");
  clock: number;
  sub!: SubscriptionObject;
  invoices: InvoiceObject[] = [];
  private price: PriceObject;
  private readonly metadata: Record<string, string>;

  constructor(
    readonly userId: string,
    readonly planId: PlanId,
    readonly interval: BillingInterval,
    opts: { customer?: string; start?: number } = {},
  ) {
    this.customer = opts.customer ?? id("cus");
    this.clock = opts.start ?? Math.floor(Date.now() / 1000);
    this.price = priceFor(planId, interval);
    this.metadata = { userId, planId, interval };
  }

  private event(
    type: EmittedEventType,
    object: unknown,
    previous?: Record<string, unknown>,
    created = this.clock,
  ): TestEvent {
    return eventObject(id("evt"), type, object, created, previous);
  }

  private build(changes: Partial<Parameters<typeof subscriptionObject>[0]> = {}): SubscriptionObject {
    const item = this.sub?.items.data[0];
    this.sub = subscriptionObject({
      id: this.subscriptionId,
      customer: this.customer,
      itemId: this.itemId,
      price: this.price,
      status: this.sub?.status ?? "active",
      created: this.sub?.created ?? this.clock,
      periodStart: item?.current_period_start ?? this.clock,
      periodEnd: item?.current_period_end ?? addInterval(this.clock, this.interval),
      metadata: { ...this.metadata },
      cancelAtPeriodEnd: this.sub?.cancel_at_period_end ?? false,
      canceledAt: this.sub?.canceled_at ?? null,
      endedAt: this.sub?.ended_at ?? null,
      latestInvoice: this.sub?.latest_invoice ?? null,
      ...changes,
    });
    return this.sub;
  }

  private invoice(
    reason: "subscription_create" | "subscription_cycle" | "subscription_update",
    start: number,
    end: number,
    prorationCredit = 0,
  ): InvoiceObject {
    const inv = invoiceObject({
      id: id("in"),
      number: `TEST-${this.invoices.length + 1}`,
      customer: this.customer,
      subscriptionId: this.subscriptionId,
      subscriptionItemId: this.itemId,
      metadata: { ...this.metadata },
      price: this.price,
      created: this.clock,
      periodStart: start,
      periodEnd: end,
      billingReason: reason,
      prorationCredit,
      paymentIntent: id("pi"),
    });
    this.invoices.push(inv);
    return inv;
  }

  /** invoice_payment.paid for an invoice's payment: the only event that names the PaymentIntent that paid it. */
  paidBy(inv: InvoiceObject): TestEvent {
    return this.event("invoice_payment.paid", inv.payments.data[0]!);
  }

  private refunded = new Map<string, number>();

  /** charge.refunded for an invoice's payment (cumulative, like Stripe's charge.amount_refunded). */
  refund(inv: InvoiceObject, amount = inv.amount_paid) {
    this.clock += 1;
    const total = Math.min(inv.amount_paid, (this.refunded.get(inv.id) ?? 0) + amount);
    this.refunded.set(inv.id, total);
    const charge = chargeObject({
      id: `ch_${inv.id}`,
      customer: this.customer,
      paymentIntent: inv.payments.data[0]!.payment.payment_intent!,
      amount: inv.amount_paid,
      amountRefunded: total,
      created: inv.created,
    });
    return this.event("charge.refunded", charge);
  }

  /** charge.dispute.created, then (with a status) charge.dispute.closed, for an invoice's payment. */
  dispute(inv: InvoiceObject, closed?: "won" | "lost") {
    this.clock += 1;
    const dispute = disputeObject({
      id: `dp_${inv.id}`,
      charge: `ch_${inv.id}`,
      paymentIntent: inv.payments.data[0]!.payment.payment_intent!,
      amount: inv.amount_paid,
      status: closed ?? "needs_response",
      created: this.clock,
    });
    return this.event(closed ? "charge.dispute.closed" : "charge.dispute.created", dispute);
  }

  /** A paid checkout: subscription.created, invoice.paid and checkout.session.completed. */
  checkout() {
    const start = this.clock;
    const end = addInterval(start, this.interval);
    const inv = this.invoice("subscription_create", start, end);
    const sub = this.build({ status: "active", periodStart: start, periodEnd: end, latestInvoice: inv.id });
    const session = checkoutSessionObject({
      id: id("cs_test"),
      url: null,
      customer: this.customer,
      customerEmail: null,
      clientReferenceId: this.userId,
      metadata: { ...this.metadata },
      subscriptionMetadata: { ...this.metadata },
      price: this.price,
      successUrl: "http://localhost/dashboard?checkout=success",
      cancelUrl: "http://localhost/checkout",
      created: start,
      status: "complete",
      paymentStatus: "paid",
      subscription: this.subscriptionId,
      invoice: inv.id,
    });
    return {
      created: this.event("customer.subscription.created", sub),
      invoicePaid: this.event("invoice.paid", inv),
      invoicePayment: this.paidBy(inv),
      completed: this.event("checkout.session.completed", session),
      invoice: inv,
    };
  }

  /** The next period, paid: invoice.paid and customer.subscription.updated. */
  renew() {
    const item = this.sub.items.data[0]!;
    const start = item.current_period_end;
    const end = addInterval(start, this.interval);
    this.clock = Math.max(this.clock + 1, start);
    const inv = this.invoice("subscription_cycle", start, end);
    const previous = { items: this.sub.items };
    const sub = this.build({ periodStart: start, periodEnd: end, latestInvoice: inv.id });
    return {
      invoicePaid: this.event("invoice.paid", inv),
      invoicePayment: this.paidBy(inv),
      updated: this.event("customer.subscription.updated", sub, previous),
      invoice: inv,
    };
  }

  setCancelAtPeriodEnd(cancel: boolean, advance = 1) {
    this.clock += advance;
    // As Stripe lists them: every attribute the change moved (cancel_at follows cancel_at_period_end).
    const previous = { cancel_at_period_end: this.sub.cancel_at_period_end, cancel_at: this.sub.cancel_at };
    const sub = this.build({ cancelAtPeriodEnd: cancel, canceledAt: cancel ? this.clock : null });
    return this.event("customer.subscription.updated", sub, previous);
  }

  deleted(advance = 1) {
    this.clock += advance;
    const sub = this.build({ status: "canceled", canceledAt: this.clock, endedAt: this.clock });
    return this.event("customer.subscription.deleted", sub);
  }

  /** Switch to another plan now (billing cycle reset): subscription.updated and invoice.paid. */
  switchTo(planId: PlanId, interval: BillingInterval, advance = 60) {
    this.clock += advance;
    (this as { planId: PlanId }).planId = planId;
    (this as { interval: BillingInterval }).interval = interval;
    this.metadata.planId = planId;
    this.metadata.interval = interval;
    const previous = { items: this.sub.items };
    // Stripe credits the unused part of the old period (the billing cycle restarts now).
    const item = this.sub.items.data[0]!;
    const total = item.current_period_end - item.current_period_start;
    const unused = Math.max(0, item.current_period_end - this.clock);
    const credit = total > 0 ? Math.round((item.price.unit_amount * unused) / total) : 0;
    this.price = priceFor(planId, interval);
    const start = this.clock;
    const end = addInterval(start, interval);
    const inv = this.invoice("subscription_update", start, end, credit);
    const sub = this.build({ periodStart: start, periodEnd: end, latestInvoice: inv.id });
    return {
      updated: this.event("customer.subscription.updated", sub, previous),
      invoicePaid: this.event("invoice.paid", inv),
      invoicePayment: this.paidBy(inv),
      invoice: inv,
    };
  }

  /** The PaymentIntent that paid an invoice, as Stripe's GET /v1/payment_intents/:id answers it. */
  paymentIntent(inv: InvoiceObject) {
    return paymentIntentObject({
      id: inv.payments.data[0]!.payment.payment_intent!,
      customer: this.customer,
      amount: inv.amount_paid,
      created: inv.created,
      latestCharge: `ch_${inv.id}`,
    });
  }

  /** Any event object with a chosen `created` (for same-second and stale-event cases). */
  at(event: TestEvent, created: number): TestEvent {
    return { ...event, created };
  }
}

/**
 * A Stripe client (the production adapter) against a fake that cancels subscriptions, updates customers and refuses
 * anything else,
 * with the calls it received (account deletion cancels the owner's subscriptions).
 */
export function fakeStripe() {
  const calls: string[] = [];
  const stripe = createStripe(
    { STRIPE_SECRET_KEY: "sk_test_fake", STRIPE_API_URL: "http://stripe.test" },
    async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const method = init?.method ?? "GET";
      calls.push(`${method} ${url.pathname}`);
      if (method === "DELETE" && url.pathname.startsWith("/v1/subscriptions/")) {
        return Response.json({ id: url.pathname.split("/").pop(), object: "subscription", status: "canceled" });
      }
      // A Billing Portal session for an existing customer.
      if (method === "POST" && url.pathname === "/v1/billing_portal/sessions") {
        const form = new URLSearchParams(String(init?.body ?? ""));
        const customer = form.get("customer");
        if (customer && customer !== "cus_missing") {
          return Response.json({
            id: "bps_1",
            object: "billing_portal.session",
            customer,
            return_url: form.get("return_url"),
            url: `http://stripe.test/p/session/bps_1?customer=${customer}`,
          });
        }
      }
      // A customer's update (a team's receipts address follows its owner, ADR 0311); "cus_missing" does not exist.
      const customer = url.pathname.match(/^\/v1\/customers\/(cus_\w+)$/)?.[1];
      if (method === "POST" && customer && customer !== "cus_missing") {
        const email = new URLSearchParams(String(init?.body ?? "")).get("email");
        return Response.json({ id: customer, object: "customer", email });
      }
      return Response.json({ error: { type: "invalid_request_error", message: "unexpected" } }, { status: 404 });
    },
  );
  return { calls, stripe };
}

/** A rate limiter that lets everything through. */
export const allow = async () => ({ allowed: true, retryAfterSeconds: 0 });

/**
 * Stripe's API for the Worker's reads of a PaymentIntent (a dispute's customer, ADR 0359): answers each one a story
 * paid, 404 for any other, or `status` for all; returns the ids asked.
 */
export function answerPaymentIntents(
  intents: (Omit<ReturnType<SubscriptionStory["paymentIntent"]>, "customer"> & { customer: string | null })[],
  opts: { status?: number } = {},
): string[] {
  const asked: string[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const id = url.pathname.match(/^\/v1\/payment_intents\/(\w+)$/)?.[1];
    if (url.host !== "stripe.test" || !id) throw new Error(`unexpected fetch ${url}`);
    asked.push(id);
    const error = (status: number, message: string) =>
      Response.json({ error: { type: "invalid_request_error", message } }, { status });
    if (opts.status) return error(opts.status, "An error occurred with our connection to Stripe.");
    const intent = intents.find((i) => i.id === id);
    return intent ? Response.json(intent) : error(404, `No such payment_intent: '${id}'`);
  });
  return asked;
}
