import type { InvoiceOptions } from "./stripe-engine.ts";
import {
  type EmittedEventType,
  type InvoiceObject,
  type InvoicePayment,
  type PriceObject,
  type SubscriptionObject,
  type subscriptionObject,
  withPayment,
} from "./stripe-objects.ts";
import { quantityProrations } from "./stripe-proration.ts";
import { id, type State } from "./stripe-state.ts";

// Seats in the Stripe emulator: a subscription item's quantity changed by
// POST /v1/subscriptions/:id (items[0][id] + items[0][quantity]) with Stripe's
// proration_behavior (create_prorations, always_invoice, none) and
// proration_date, and the retries of an invoice whose payment was declined
// (POST /v1/invoices/:id/pay, or the emulator's stand-in for Smart Retries).
// docs/decisions/0290-seats-billed-as-stripe-bills-seats.md

type Emit = (items: { type: EmittedEventType; object: unknown; previous?: Record<string, unknown> }[]) => Promise<void>;

export interface SeatEngineParts {
  now: () => number;
  emit: Emit;
  newInvoice: (
    sub: SubscriptionObject,
    p: PriceObject,
    reason: "subscription_create" | "subscription_cycle" | "subscription_update",
    o: InvoiceOptions,
  ) => InvoiceObject;
  invoiceEvents: (inv: InvoiceObject) => { type: EmittedEventType; object: unknown }[];
  attemptPayment: (customer: string, amountDue: number, attemptCount: number) => InvoicePayment;
  rebuildSubscription: (
    sub: SubscriptionObject,
    changes: Partial<Parameters<typeof subscriptionObject>[0]>,
  ) => SubscriptionObject;
}

type Answer = { status: number; value: unknown };

const PRORATION_BEHAVIORS = new Set(["create_prorations", "always_invoice", "none"]);

function invalid(message: string, param?: string): Answer {
  return { status: 400, value: { error: { type: "invalid_request_error", message, ...(param ? { param } : {}) } } };
}

function declined(inv: InvoiceObject | null): Answer {
  return {
    status: 402,
    value: {
      error: {
        type: "card_error",
        code: "card_declined",
        decline_code: "generic_decline",
        message: "Your card was declined.",
        ...(inv ? { invoice: inv.id } : {}),
      },
    },
  };
}

export function createSeatEngine(state: State, parts: SeatEngineParts) {
  const { now, emit, newInvoice, invoiceEvents, attemptPayment, rebuildSubscription } = parts;

  /** A new quantity for the subscription's item, prorated as Stripe prorates it. */
  async function changeQuantity(sub: SubscriptionObject, params: Record<string, unknown>): Promise<Answer> {
    const item = sub.items.data[0]!;
    const asked = (params.items as { id?: string; quantity?: string }[])[0]!;
    if (asked.id !== item.id) return invalid(`No such subscription item: '${asked.id ?? ""}'`, "items[0][id]");
    const to = Number(asked.quantity);
    if (!Number.isInteger(to) || to < 0) return invalid("Invalid integer: items[0][quantity]", "items[0][quantity]");
    if (sub.status === "canceled" || sub.status === "incomplete_expired") {
      return invalid("A canceled subscription can only update its cancellation_details and metadata.");
    }
    const behavior = (params.proration_behavior as string | undefined) ?? "create_prorations";
    if (!PRORATION_BEHAVIORS.has(behavior)) {
      return invalid(`Invalid proration_behavior: must be one of ${[...PRORATION_BEHAVIORS].join(", ")}`);
    }
    const paymentBehavior = (params.payment_behavior as string | undefined) ?? "allow_incomplete";
    if (paymentBehavior !== "allow_incomplete" && paymentBehavior !== "error_if_incomplete") {
      return invalid(`The emulator does not support payment_behavior=${paymentBehavior}.`, "payment_behavior");
    }
    const period = { start: item.current_period_start, end: item.current_period_end };
    const at = params.proration_date === undefined ? now() : Number(params.proration_date);
    if (!Number.isInteger(at) || at < period.start || at > period.end) {
      return invalid("proration_date must be within the current billing period.", "proration_date");
    }
    const askedMetadata = params.metadata as Record<string, string> | undefined;
    const metadata = askedMetadata ? { ...sub.metadata, ...askedMetadata } : sub.metadata;
    const from = item.quantity;
    const lines =
      behavior === "none"
        ? []
        : quantityProrations({ price: item.price, from, to, period, at, invoiceItem: () => id("ii") });

    let inv: InvoiceObject | null = null;
    let status = sub.status;
    if (behavior === "always_invoice" && lines.length > 0) {
      inv = newInvoice({ ...sub, metadata }, item.price, "subscription_update", {
        periodStart: period.start,
        periodEnd: period.end,
        prorations: lines,
        periodLine: false,
      });
      if (inv.status !== "paid") {
        if (paymentBehavior === "error_if_incomplete") {
          delete state.invoices[inv.id];
          state.balances[sub.customer] = inv.starting_balance;
          return declined(null);
        }
        status = "past_due";
      }
    } else if (behavior === "create_prorations" && lines.length > 0) {
      state.pendingProrations[sub.id] = [...(state.pendingProrations[sub.id] ?? []), ...lines];
    }

    const next = rebuildSubscription(sub, {
      quantity: to,
      metadata,
      status,
      latestInvoice: inv?.id ?? sub.latest_invoice,
    });
    const previous: Record<string, unknown> = { items: sub.items };
    if (inv) previous.latest_invoice = sub.latest_invoice;
    if (status !== sub.status) previous.status = sub.status;
    if (metadata !== sub.metadata) previous.metadata = sub.metadata;
    await emit([{ type: "customer.subscription.updated", object: next, previous }, ...(inv ? invoiceEvents(inv) : [])]);
    return { status: 200, value: next };
  }

  /**
   * Another attempt to pay an open invoice: an automatic retry (Smart Retries; counts in attempt_count) or a
   * manual POST /v1/invoices/:id/pay (does not). Paid: invoice.paid, invoice.payment_succeeded, and the
   * subscription it left past_due back to active; declined again: invoice.payment_failed.
   */
  async function retryInvoice(invoiceId: string, automatic: boolean): Promise<Answer> {
    const inv = state.invoices[invoiceId];
    if (!inv) {
      return {
        status: 404,
        value: {
          error: {
            type: "invalid_request_error",
            code: "resource_missing",
            message: `No such invoice: '${invoiceId}'`,
          },
        },
      };
    }
    if (inv.status !== "open") return invalid("Invoice is already paid.");
    const payment = attemptPayment(inv.customer, inv.amount_due, inv.attempt_count + (automatic ? 1 : 0));
    const next = withPayment(inv, payment, `pi_${inv.id.slice(3)}`);
    state.invoices[inv.id] = next;
    const subId = inv.parent.subscription_details.subscription;
    const sub = state.subscriptions[subId];
    const events: Parameters<Emit>[0] = invoiceEvents(next);
    if (next.status === "paid" && sub?.status === "past_due" && sub.latest_invoice === inv.id) {
      const active = rebuildSubscription(sub, { status: "active" });
      events.push({ type: "customer.subscription.updated", object: active, previous: { status: "past_due" } });
    }
    await emit(events);
    if (next.status !== "paid" && !automatic) return declined(next);
    return { status: 200, value: next };
  }

  return { changeQuantity, retryInvoice };
}
