import { reversalOf } from "@workers/lib/reversal-facts";
import type { PaymentEvent, PaymentFact } from "@workers/objects/billing-client";
import type Stripe from "stripe";
import { type BillingInterval, findPlan, findPlanByLookupKey, type PlanId } from "~/shared/catalog";
import { HANDLED_EVENT_TYPES, SUBSCRIPTION_EVENT_TYPES } from "~/shared/stripe-event-types";

// Turns a verified Stripe event into plain data the user's Durable Object can
// apply (RPC carries plain data, not SDK objects). Pure: no I/O, so every
// event shape is unit-tested.

/** Metadata our server puts on checkout sessions and subscriptions. */
export interface BillingMetadata {
  userId: string;
  planId: PlanId;
  interval: BillingInterval;
}

function idOf(value: string | { id: string } | null | undefined): string | null {
  if (!value) return null;
  return typeof value === "string" ? value : value.id;
}

function ms(seconds: number | null | undefined): number | null {
  return typeof seconds === "number" ? seconds * 1000 : null;
}

function planFromMetadata(
  metadata: Stripe.Metadata | null | undefined,
): { planId: PlanId; interval: BillingInterval } | null {
  const plan = findPlan(metadata?.planId);
  const interval = metadata?.interval;
  if (!plan || (interval !== "month" && interval !== "year")) return null;
  return { planId: plan.id, interval };
}

function planFromPrice(
  price: Stripe.Price | undefined,
  metadata: Stripe.Metadata | null | undefined,
): { planId: PlanId; interval: BillingInterval } | null {
  const byKey = price?.lookup_key ? findPlanByLookupKey(price.lookup_key) : undefined;
  if (byKey) return { planId: byKey.plan.id, interval: byKey.interval };
  return planFromMetadata(metadata);
}

const SUBSCRIPTION_EVENTS: ReadonlySet<string> = new Set(SUBSCRIPTION_EVENT_TYPES);

/** The event types the webhook acts on (scripts/stripe-setup.ts configures the endpoint with them). */
export { HANDLED_EVENT_TYPES };

/** Whether a subscription is set to end: cancel_at_period_end, or a cancel_at date. */
function cancelsAtPeriodEnd(atPeriodEnd: unknown, cancelAt: unknown): boolean {
  return atPeriodEnd === true || (cancelAt !== null && cancelAt !== undefined);
}

function subscriptionFact(
  sub: Stripe.Subscription,
  previous: Record<string, unknown> | undefined,
): { fact: PaymentFact; userHint: string | null } {
  const item = sub.items?.data?.[0];
  const plan = planFromPrice(item?.price, sub.metadata);
  const customerId = idOf(sub.customer);
  if (!plan || !customerId) return { fact: { kind: "ignored", why: "not one of our plans" }, userHint: null };
  return {
    userHint: sub.metadata?.userId ?? null,
    fact: {
      kind: "subscription",
      customerId,
      subscriptionId: sub.id,
      ...plan,
      status: sub.status,
      cancelAtPeriodEnd: cancelsAtPeriodEnd(sub.cancel_at_period_end, sub.cancel_at),
      cancelChangedFrom:
        previous && ("cancel_at_period_end" in previous || "cancel_at" in previous)
          ? cancelsAtPeriodEnd(
              "cancel_at_period_end" in previous ? previous.cancel_at_period_end : sub.cancel_at_period_end,
              "cancel_at" in previous ? previous.cancel_at : sub.cancel_at,
            )
          : null,
      periodStart: ms(item?.current_period_start),
      periodEnd: ms(item?.current_period_end),
      endedAt: ms(sub.ended_at),
    },
  };
}

function invoiceFact(invoice: Stripe.Invoice): { fact: PaymentFact; userHint: string | null } {
  const details = invoice.parent?.subscription_details;
  const subscriptionId = idOf(details?.subscription);
  const customerId = idOf(invoice.customer);
  if (!subscriptionId || !customerId || !invoice.id) {
    return { fact: { kind: "ignored", why: "not a subscription invoice" }, userHint: null };
  }
  // The line for the period paid (prorations are separate lines and buy no credits).
  const line = invoice.lines?.data?.find(
    (l) => l.parent?.subscription_item_details && !l.parent.subscription_item_details.proration,
  );
  const plan = planFromMetadata(details?.metadata) ?? planFromMetadata(line?.metadata);
  if (!line || !plan) return { fact: { kind: "ignored", why: "pays no plan period" }, userHint: null };
  return {
    userHint: details?.metadata?.userId ?? null,
    fact: {
      kind: "invoice_paid",
      customerId,
      subscriptionId,
      invoiceId: invoice.id,
      ...plan,
      periodStart: line.period.start * 1000,
      periodEnd: line.period.end * 1000,
      billingReason: invoice.billing_reason ?? null,
      total: invoice.total,
      paymentIntentId: paymentIntentOf(invoice),
    },
  };
}

/**
 * The PaymentIntent that paid an invoice (a refund or a dispute names it, not the invoice), when the invoice carries
 * its payments. It does only when they were asked for (`expand[]=payments`): the list is includable, so an
 * invoice.paid event never has it, and invoice_payment.paid brings the pair instead (invoicePaymentOf, ADR 0340).
 */
function paymentIntentOf(invoice: Stripe.Invoice): string | null {
  for (const p of invoice.payments?.data ?? []) {
    const pi = idOf(p.payment?.payment_intent);
    if (pi) return pi;
  }
  return null;
}

function checkoutFact(session: Stripe.Checkout.Session): { fact: PaymentFact; userHint: string | null } {
  const userHint = session.client_reference_id ?? session.metadata?.userId ?? null;
  const paid = session.payment_status === "paid" || session.payment_status === "no_payment_required";
  const plan = planFromMetadata(session.metadata);
  const customerId = idOf(session.customer);
  const subscriptionId = idOf(session.subscription);
  if (session.mode !== "subscription" || !paid || !plan || !customerId || !subscriptionId) {
    return { fact: { kind: "ignored", why: "not a paid plan checkout" }, userHint };
  }
  return {
    userHint,
    fact: {
      kind: "checkout_completed",
      customerId,
      subscriptionId,
      invoiceId: idOf(session.invoice),
      ...plan,
      total: session.amount_total ?? null,
    },
  };
}

export function toPaymentEvent(event: Stripe.Event): PaymentEvent {
  const base = { eventId: event.id, type: event.type, createdAt: event.created * 1000 };
  let parsed: { fact: PaymentFact; userHint: string | null };
  if (event.type === "checkout.session.completed") parsed = checkoutFact(event.data.object);
  else if (event.type === "invoice.paid") parsed = invoiceFact(event.data.object);
  else if (SUBSCRIPTION_EVENTS.has(event.type)) {
    const { previous_attributes: previous } = event.data as { previous_attributes?: Record<string, unknown> };
    parsed = subscriptionFact(event.data.object as Stripe.Subscription, previous);
  } else {
    const reversal = reversalOf(event);
    parsed = reversal
      ? { fact: reversal, userHint: null }
      : { fact: { kind: "ignored", why: "event type not handled" }, userHint: null };
  }
  return { ...base, ...parsed };
}

/** An invoice paid by a PaymentIntent, as invoice_payment.paid names it (ADR 0340). */
export interface InvoicePaid {
  id: string;
  invoiceId: string;
  paymentIntentId: string;
}

/** The pair an invoice_payment.paid event carries, or null for any other event or a payment of another kind. */
export function invoicePaymentOf(event: Stripe.Event): InvoicePaid | null {
  if (event.type !== "invoice_payment.paid") return null;
  const p = event.data.object;
  const invoiceId = idOf(p.invoice);
  const paymentIntentId = p.payment?.type === "payment_intent" ? idOf(p.payment.payment_intent) : null;
  if (p.status !== "paid" || !invoiceId || !paymentIntentId) return null;
  return { id: p.id, invoiceId, paymentIntentId };
}

/** The Stripe customer id an event is about, for finding its user. */
export function customerOf(ev: PaymentEvent): string | null {
  return ev.fact.kind === "ignored" ? null : ev.fact.customerId;
}

/** The PaymentIntent a refund or dispute is about (a dispute names no customer). */
export function paymentIntentOfFact(ev: PaymentEvent): string | null {
  return ev.fact.kind === "reversal" || ev.fact.kind === "reversal_undone" ? ev.fact.paymentIntentId : null;
}
