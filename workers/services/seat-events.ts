import { reversalOf } from "@workers/lib/reversal-facts";
import type Stripe from "stripe";
import { TEAM_PLAN } from "~/shared/catalog";
import type { SeatFact } from "~/shared/seat-pool";

export { FROZEN_STATUSES, type SeatFact } from "~/shared/seat-pool";

// A team's seats as Stripe's events tell them: a verified event about a team
// subscription (metadata planId "team") turned into one typed fact the team's
// Durable Object applies. Pure: no I/O. Events about a person's plan are
// "ignored" here (stripe-events.ts handles them), and team events are
// "ignored" there, so each event has one reader.
// docs/decisions/0290-seats-billed-as-stripe-bills-seats.md

/**
 * The credits a proration pays for: credits per seat × the seats' paid fraction of a full period, where a full
 * period of one seat costs the seat price. Rounded down (never more than was paid for); nothing for a negative
 * or zero proration (seats removed give nothing back).
 */
export function creditsForProration(
  prorationPaidCents: number,
  seatPriceCents = TEAM_PLAN.pricePerSeat * 100,
  creditsPerSeat = TEAM_PLAN.creditsPerSeat,
): number {
  if (prorationPaidCents <= 0 || seatPriceCents <= 0) return 0;
  return Math.floor((creditsPerSeat * prorationPaidCents) / seatPriceCents);
}

/** How many more invitations may be pending: seats not yet taken by members. */
export function invitationCap(seats: number, members: number): number {
  return Math.max(0, seats - members);
}

function idOf(value: string | { id: string } | null | undefined): string | null {
  if (!value) return null;
  return typeof value === "string" ? value : value.id;
}

const isTeam = (metadata: Stripe.Metadata | null | undefined) => metadata?.planId === TEAM_PLAN.id;

function itemLines(invoice: Stripe.Invoice) {
  return (invoice.lines?.data ?? []).filter((l) => l.parent?.subscription_item_details);
}

function invoiceFact(invoice: Stripe.Invoice, at: number): SeatFact {
  const details = invoice.parent?.subscription_details;
  const subscription = idOf(details?.subscription);
  const customerId = idOf(invoice.customer);
  if (!subscription || !customerId || !invoice.id || !isTeam(details?.metadata)) {
    return { kind: "ignored", why: "not a team invoice" };
  }
  const base = { teamId: details?.metadata?.teamId ?? null, customerId, subscription, invoiceId: invoice.id };
  const lines = itemLines(invoice);
  const period = lines.find((l) => !l.parent?.subscription_item_details?.proration);
  if (period) {
    const quantity = period.quantity ?? 0;
    return {
      kind: "period_paid",
      ...base,
      quantity,
      periodStart: period.period.start * 1000,
      periodEnd: period.period.end * 1000,
      credits: quantity * TEAM_PLAN.creditsPerSeat,
      at,
    };
  }
  const prorations = lines.filter((l) => l.parent?.subscription_item_details?.proration);
  const debit = prorations.find((l) => l.amount > 0);
  const credit = prorations.find((l) => l.amount < 0);
  if (!debit && !credit) return { kind: "ignored", why: "a team invoice without seats" };
  const paid = Math.max(0, invoice.amount_paid);
  return {
    kind: "seats_changed",
    ...base,
    quantity: debit?.quantity ?? 0,
    previousQuantity: credit?.quantity ?? 0,
    prorationPaidCents: paid,
    credits: creditsForProration(paid),
    at,
  };
}

function failedFact(invoice: Stripe.Invoice, at: number): SeatFact {
  const details = invoice.parent?.subscription_details;
  const subscription = idOf(details?.subscription);
  const customerId = idOf(invoice.customer);
  if (!subscription || !customerId || !invoice.id || !isTeam(details?.metadata)) {
    return { kind: "ignored", why: "not a team invoice" };
  }
  return {
    kind: "payment_failed",
    teamId: details?.metadata?.teamId ?? null,
    customerId,
    subscription,
    invoiceId: invoice.id,
    amountDueCents: invoice.amount_due,
    attemptCount: invoice.attempt_count,
    nextPaymentAttempt: invoice.next_payment_attempt ? invoice.next_payment_attempt * 1000 : null,
    billingReason: invoice.billing_reason ?? null,
    at,
  };
}

function statusFact(sub: Stripe.Subscription, createdMs: number): SeatFact {
  const customerId = idOf(sub.customer);
  if (!customerId || !isTeam(sub.metadata)) return { kind: "ignored", why: "not a team subscription" };
  return {
    kind: "seat_status",
    teamId: sub.metadata?.teamId ?? null,
    customerId,
    subscription: sub.id,
    status: sub.status,
    quantity: sub.items?.data?.[0]?.quantity ?? 0,
    at: createdMs,
  };
}

/** The seat fact of a verified Stripe event ("ignored" for anything not about a team's seats). */
export function toSeatFact(event: Stripe.Event): SeatFact {
  const at = event.created * 1000;
  switch (event.type) {
    case "invoice.paid":
      return invoiceFact(event.data.object, at);
    case "invoice.payment_failed":
      return failedFact(event.data.object, at);
    case "customer.subscription.created":
    case "customer.subscription.updated":
    case "customer.subscription.deleted":
      return statusFact(event.data.object, at);
    default: {
      // Whether the payment paid seats is known only from what it paid: the team's sink looks it up (ADR 0343).
      const r = reversalOf(event);
      if (r?.kind === "reversal")
        return {
          kind: "seat_reversal",
          paymentIntentId: r.paymentIntentId,
          cause: r.cause,
          ref: r.ref,
          fraction: r.fraction,
          at,
        };
      if (r?.kind === "reversal_undone")
        return { kind: "seat_reversal_undone", paymentIntentId: r.paymentIntentId, ref: r.ref, at };
      return { kind: "ignored", why: "event type not about seats" };
    }
  }
}
