import type Stripe from "stripe";

// Every object here is checked against the stripe package's own types
// (\`satisfies Partial<Stripe.X>\`): a field Stripe renames, retypes or drops
// fails the typecheck, so the emulator cannot drift from Stripe's shapes unnoticed.

/** The API sends decimals as strings; the SDK's types describe them after parsing into Decimal. */
function decimal(value: string): string {
  return value;
}

/** A Stripe type as it travels over the wire: decimals are strings. */
type Wire<T> = T extends Stripe.Decimal
  ? string
  : T extends (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;
// Builders for Stripe API objects in the shapes of API version 2026-10-28
// (the stripe SDK 23.1.0's), used by the Stripe emulator and by the workerd
// tests, so the events our webhook is tested with are the events the emulator
// sends. Pure: no imports, no I/O. Times are Unix seconds, as in Stripe.

export const STRIPE_API_VERSION = "2026-10-28.endive";

export type Interval = "month" | "year";
type Metadata = Record<string, string>;

export interface PriceSpec {
  id: string;
  lookupKey: string;
  unitAmount: number;
  interval: Interval;
  productId: string;
}

export function priceObject(p: PriceSpec, created = 1_700_000_000) {
  return {
    id: p.id,
    object: "price",
    active: true,
    billing_scheme: "per_unit",
    created,
    currency: "usd",
    custom_unit_amount: null,
    livemode: false,
    lookup_key: p.lookupKey,
    metadata: {},
    nickname: null,
    product: p.productId,
    recurring: {
      interval: p.interval,
      interval_count: 1,
      meter: null,
      trial_period_days: null,
      usage_type: "licensed",
    },
    tax_behavior: "unspecified",
    tiers_mode: null,
    transform_quantity: null,
    type: "recurring",
    unit_amount: p.unitAmount,
    unit_amount_decimal: decimal(String(p.unitAmount)),
  } satisfies Partial<Wire<Stripe.Price>>;
}

export type PriceObject = ReturnType<typeof priceObject>;

/** One calendar interval later, clamped to the month's last day (UTC). */
export function addInterval(seconds: number, interval: Interval, count = 1): number {
  const d = new Date(seconds * 1000);
  const months = interval === "year" ? 12 * count : count;
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return (
    Date.UTC(y, m, Math.min(d.getUTCDate(), lastDay), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()) / 1000
  );
}

export interface SubscriptionSpec {
  id: string;
  customer: string;
  itemId: string;
  price: PriceObject;
  status: string;
  created: number;
  periodStart: number;
  periodEnd: number;
  metadata: Metadata;
  cancelAtPeriodEnd?: boolean;
  canceledAt?: number | null;
  endedAt?: number | null;
  latestInvoice?: string | null;
  /** Seats: the item's quantity (1 unless a per-seat price is bought for several). */
  quantity?: number;
}

export function subscriptionObject(s: SubscriptionSpec) {
  return {
    id: s.id,
    object: "subscription",
    application: null,
    application_fee_percent: null,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null },
    billing_cycle_anchor: s.periodStart,
    billing_cycle_anchor_config: null,
    billing_mode: { flexible: null, type: "classic" },
    billing_thresholds: null,
    cancel_at: s.cancelAtPeriodEnd ? s.periodEnd : null,
    cancel_at_period_end: Boolean(s.cancelAtPeriodEnd),
    canceled_at: s.canceledAt ?? null,
    cancellation_details: {
      comment: null,
      feedback: null,
      feedback_option: null,
      reason: s.canceledAt ? "cancellation_requested" : null,
    },
    collection_method: "charge_automatically",
    created: s.created,
    currency: "usd",
    customer: s.customer,
    days_until_due: null,
    default_payment_method: "pm_card_visa",
    default_source: null,
    description: null,
    discounts: [],
    ended_at: s.endedAt ?? null,
    invoice_settings: {
      account_tax_ids: null,
      custom_fields: null,
      description: null,
      footer: null,
      issuer: { type: "self" },
    },
    items: {
      object: "list",
      data: [
        {
          id: s.itemId,
          object: "subscription_item",
          billing_thresholds: null,
          created: s.created,
          current_period_end: s.periodEnd,
          current_period_start: s.periodStart,
          current_trial: null,
          discounts: [],
          metadata: {},
          // Stripe still mirrors the price as a legacy plan on each item.
          plan: {
            id: s.price.id,
            object: "plan",
            active: true,
            amount: s.price.unit_amount,
            amount_decimal: s.price.unit_amount_decimal,
            billing_scheme: "per_unit",
            created: s.price.created,
            currency: s.price.currency,
            interval: s.price.recurring.interval,
            interval_count: s.price.recurring.interval_count,
            livemode: false,
            metadata: {},
            meter: null,
            nickname: null,
            product: s.price.product,
            tiers_mode: null,
            transform_usage: null,
            trial_period_days: null,
            usage_type: "licensed",
          },
          price: s.price,
          quantity: s.quantity ?? 1,
          subscription: s.id,
          tax_rates: [],
        },
      ],
      has_more: false,
      url: `/v1/subscription_items?subscription=${s.id}`,
    },
    latest_invoice: s.latestInvoice ?? null,
    livemode: false,
    metadata: s.metadata,
    next_pending_invoice_item_invoice: null,
    on_behalf_of: null,
    pause_collection: null,
    payment_settings: { payment_method_options: null, payment_method_types: null, save_default_payment_method: "off" },
    pending_invoice_item_interval: null,
    pending_setup_intent: null,
    pending_update: null,
    schedule: null,
    start_date: s.created,
    status: s.status,
    test_clock: null,
    transfer_data: null,
    trial_end: null,
    trial_settings: { end_behavior: { billing_cycle_anchor: null, missing_payment_method: "create_invoice" } },
    trial_start: null,
  } satisfies Partial<Wire<Stripe.Subscription>>;
}

export type SubscriptionObject = ReturnType<typeof subscriptionObject>;

export interface InvoiceSpec {
  id: string;
  number: string;
  customer: string;
  customerEmail?: string | null;
  subscriptionId: string;
  subscriptionItemId: string;
  /** The subscription's metadata when the invoice was finalized. */
  metadata: Metadata;
  price: PriceObject;
  created: number;
  periodStart: number;
  periodEnd: number;
  billingReason: "subscription_create" | "subscription_cycle" | "subscription_update";
  /** Credit for unused time of the previous price (a negative proration line), in cents. */
  prorationCredit?: number;
  hostedUrl?: string | null;
  /** The PaymentIntent that paid it (none when nothing was charged). */
  paymentIntent?: string | null;
  /** Seats billed by the period line (default 1). */
  quantity?: number;
  /** Whether the invoice bills the period ahead (false: an always_invoice change that bills only its prorations). */
  periodLine?: boolean;
  /** Proration lines (Stripe's "Unused time on N × …" credits and "Remaining time on M × …" debits). */
  prorations?: ProrationLineSpec[];
  /** How the payment went: paid at creation (the default), or failed and left open for retries. */
  payment?: InvoicePayment;
  /** The customer's balance before this invoice, in cents (Stripe's sign: negative is credit owed to the customer). */
  startingBalance?: number;
}

export interface ProrationLineSpec {
  /** Cents: negative for unused time credited, positive for remaining time charged. */
  amount: number;
  description: string;
  quantity: number;
  /** The line's period: from the proration date to the end of the current period. */
  periodStart: number;
  periodEnd: number;
  /** The invoice item it came from (create_prorations leaves pending items; always_invoice bills them at once). */
  invoiceItem: string;
}

export type InvoicePayment =
  | { paid: true; at: number; attemptCount?: number }
  | { paid: false; attemptCount: number; nextPaymentAttempt: number | null };

/** The invoice's fields that say whether and how it was paid, for an amount due. */
function paymentFields(
  id: string,
  amountDue: number,
  payment: InvoicePayment,
  paymentIntent: string | null | undefined,
  created: number,
) {
  const paid = payment.paid;
  return {
    amount_paid: paid ? amountDue : 0,
    amount_remaining: paid ? 0 : amountDue,
    attempt_count: payment.attemptCount ?? 1,
    attempted: true,
    next_payment_attempt: paid ? null : payment.nextPaymentAttempt,
    payments: {
      object: "list" as const,
      data:
        paid && paymentIntent && amountDue > 0
          ? [
              {
                id: `inpay_${id.slice(3)}`,
                object: "invoice_payment" as const,
                amount_paid: amountDue,
                amount_requested: amountDue,
                created,
                currency: "usd",
                invoice: id,
                is_default: true,
                livemode: false,
                payment: { type: "payment_intent" as const, payment_intent: paymentIntent },
                status: "paid",
                status_transitions: { canceled_at: null, paid_at: payment.at },
              },
            ]
          : [],
      has_more: false,
      url: `/v1/invoice_payments?invoice=${id}`,
    },
    status: paid ? "paid" : "open",
    status_transitions: {
      finalized_at: created,
      marked_uncollectible_at: null,
      paid_at: paid ? payment.at : null,
      voided_at: null,
    },
  };
}

export function invoiceObject(i: InvoiceSpec) {
  const lines = [];
  // A plan switch's credit for unused time is one proration line like a seat change's two (kept under its own id).
  const prorations = [
    ...(i.prorationCredit
      ? [
          {
            id: `${i.id}_il_proration`,
            amount: -i.prorationCredit,
            description: "Unused time on previous plan",
            quantity: 1,
            periodStart: i.periodStart,
            periodEnd: i.periodStart,
            invoiceItem: `ii_${i.id.slice(3)}`,
          },
        ]
      : []),
    ...(i.prorations ?? []).map((p, n) => ({ ...p, id: `${i.id}_il_proration_${n}` })),
  ];
  for (const p of prorations) {
    lines.push({
      id: p.id,
      object: "line_item" as const,
      amount: p.amount,
      currency: "usd",
      description: p.description,
      discount_amounts: [],
      discountable: false,
      discounts: [],
      invoice: i.id,
      livemode: false,
      metadata: {},
      parent: {
        type: "subscription_item_details",
        invoice_item_details: null,
        subscription_item_details: {
          invoice_item: p.invoiceItem,
          proration: true,
          proration_details: { credited_items: null },
          subscription: i.subscriptionId,
          subscription_item: i.subscriptionItemId,
        },
      },
      period: { start: p.periodStart, end: p.periodEnd },
      pretax_credit_amounts: [],
      pricing: {
        type: "price_details" as const,
        price_details: { price: i.price.id, product: i.price.product },
        unit_amount_decimal: null,
      },
      quantity: p.quantity,
      quantity_decimal: decimal(String(p.quantity)),
      subscription: i.subscriptionId,
      subtotal: p.amount,
      taxes: [],
    });
  }
  const quantity = i.quantity ?? 1;
  if (i.periodLine !== false)
    lines.push({
      id: `${i.id}_il_period`,
      object: "line_item" as const,
      amount: i.price.unit_amount * quantity,
      currency: "usd",
      description: `${quantity} × ${i.price.lookup_key} (at $${(i.price.unit_amount / 100).toFixed(2)} / ${i.price.recurring.interval})`,
      discount_amounts: [],
      discountable: true,
      discounts: [],
      invoice: i.id,
      livemode: false,
      metadata: i.metadata,
      parent: {
        type: "subscription_item_details",
        invoice_item_details: null,
        subscription_item_details: {
          invoice_item: null,
          proration: false,
          proration_details: { credited_items: null },
          subscription: i.subscriptionId,
          subscription_item: i.subscriptionItemId,
        },
      },
      period: { start: i.periodStart, end: i.periodEnd },
      pretax_credit_amounts: [],
      pricing: {
        type: "price_details" as const,
        price_details: { price: i.price.id, product: i.price.product },
        unit_amount_decimal: decimal(String(i.price.unit_amount)),
      },
      quantity,
      quantity_decimal: decimal(String(quantity)),
      subscription: i.subscriptionId,
      subtotal: i.price.unit_amount * quantity,
      taxes: [],
    });
  // Like Stripe: the total may be negative (a downgrade's unused time exceeds the new price); nothing is charged
  // then, and the difference becomes the customer's credit balance.
  const total = lines.reduce((sum, l) => sum + l.amount, 0);
  // Stripe applies the customer's credit balance first; a negative total adds to it (ending_balance).
  const starting = i.startingBalance ?? 0;
  const charged = Math.max(0, total + starting);
  return {
    id: i.id,
    object: "invoice",
    account_country: "US",
    account_name: "Stagewise (emulated)",
    amount_due: charged,
    billing_reason: i.billingReason,
    collection_method: "charge_automatically",
    created: i.created,
    currency: "usd",
    customer: i.customer,
    customer_email: i.customerEmail ?? null,
    ending_balance: Math.min(0, total + starting),
    hosted_invoice_url: i.hostedUrl ?? null,
    lines: {
      object: "list",
      data: lines,
      has_more: false,
      url: `/v1/invoices/${i.id}/lines`,
    },
    livemode: false,
    metadata: {},
    number: i.number,
    parent: {
      type: "subscription_details",
      quote_details: null,
      subscription_details: { metadata: i.metadata, subscription: i.subscriptionId },
    },
    period_end: i.created,
    period_start: i.created,
    ...paymentFields(i.id, charged, i.payment ?? { paid: true, at: i.created }, i.paymentIntent, i.created),
    starting_balance: starting,
    subtotal: total,
    total,
  } satisfies Partial<Wire<Stripe.Invoice>>;
}

export type InvoiceObject = ReturnType<typeof invoiceObject>;

/** The invoice after a payment attempt: paid now, or still open after another failed attempt. */
export function withPayment(inv: InvoiceObject, payment: InvoicePayment, paymentIntent: string | null): InvoiceObject {
  return { ...inv, ...paymentFields(inv.id, inv.amount_due, payment, paymentIntent, inv.created) };
}

export interface CheckoutSessionSpec {
  id: string;
  url: string | null;
  customer: string;
  customerEmail: string | null;
  clientReferenceId: string | null;
  metadata: Metadata;
  subscriptionMetadata: Metadata;
  price: PriceObject;
  /** Seats bought (line_items[0][quantity]; default 1). */
  quantity?: number;
  successUrl: string;
  cancelUrl: string | null;
  created: number;
  status: "open" | "complete" | "expired";
  paymentStatus: "paid" | "unpaid";
  subscription: string | null;
  invoice: string | null;
}

export function checkoutSessionObject(s: CheckoutSessionSpec) {
  return {
    id: s.id,
    object: "checkout.session",
    amount_subtotal: s.price.unit_amount * (s.quantity ?? 1),
    amount_total: s.price.unit_amount * (s.quantity ?? 1),
    billing_address_collection: null,
    cancel_url: s.cancelUrl,
    client_reference_id: s.clientReferenceId,
    created: s.created,
    currency: "usd",
    customer: s.customer,
    customer_creation: null,
    customer_details: s.customerEmail
      ? {
          address: null,
          business_name: null,
          email: s.customerEmail,
          individual_name: null,
          name: null,
          phone: null,
          tax_exempt: null,
          tax_ids: null,
        }
      : null,
    customer_email: null,
    expires_at: s.created + 24 * 3600,
    invoice: s.invoice,
    livemode: false,
    metadata: s.metadata,
    mode: "subscription",
    payment_intent: null,
    payment_status: s.paymentStatus,
    status: s.status,
    subscription: s.subscription,
    success_url: s.successUrl,
    ui_mode: "hosted",
    url: s.status === "open" ? s.url : null,
  } satisfies Partial<Wire<Stripe.Checkout.Session>>;
}

export type CheckoutSessionObject = ReturnType<typeof checkoutSessionObject>;

/** The event types the emulator sends: Stripe's own names (a typo or a retired name fails the typecheck). */
export const EMITTED_EVENT_TYPES = [
  "checkout.session.completed",
  "invoice.paid",
  "invoice_payment.paid",
  "invoice.payment_succeeded",
  "invoice.payment_failed",
  "customer.subscription.created",
  "customer.subscription.updated",
  "customer.subscription.deleted",
  "charge.refunded",
  "charge.dispute.created",
  "charge.dispute.closed",
] as const satisfies readonly Stripe.Event["type"][];

export type EmittedEventType = (typeof EMITTED_EVENT_TYPES)[number];

/**
 * An object as an event carries it: without its includable fields, which Stripe sends only to a request that asks
 * for them (`expand[]`), never in a webhook. The invoice's `payments` is one ("When retrieving an invoice, there is an
 * includable payments property", docs.stripe.com/api/invoice-payment/list); invoice_payment.paid brings the pair.
 */
export function withoutIncludable(object: unknown): unknown {
  if (!object || typeof object !== "object" || (object as { object?: unknown }).object !== "invoice") return object;
  const { payments: _includable, ...rest } = object as Record<string, unknown>;
  return rest;
}

/** The invoice_payment.paid events an invoice's payment brings: one per paid payment (docs.stripe.com/api/invoice-payment). */
export function invoicePaymentsPaid(invoice: InvoiceObject): InvoiceObject["payments"]["data"] {
  return invoice.payments.data.filter((p) => p.status === "paid");
}

export function eventObject(
  id: string,
  type: Stripe.Event["type"],
  object: unknown,
  created: number,
  previousAttributes?: Record<string, unknown>,
) {
  const envelope = {
    id,
    object: "event",
    api_version: STRIPE_API_VERSION,
    created,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  } satisfies Omit<Stripe.EventBase, "data">;
  return {
    ...envelope,
    type: type as string,
    data: previousAttributes
      ? { object: withoutIncludable(object), previous_attributes: previousAttributes }
      : { object: withoutIncludable(object) },
  };
}

/** The one charge of a paid invoice (the emulator makes one payment attempt succeed per invoice). */
export const chargeIdOf = (invoiceId: string) => `ch_${invoiceId.slice(3)}`;

/**
 * The PaymentIntent that paid an invoice, as GET /v1/payment_intents/:id answers it: Stripe's sample
 * (test/contract/fixtures/stripe/payment_intent.json) in the state a paid one is in.
 */
export function paymentIntentObject(p: {
  id: string;
  customer: string;
  amount: number;
  created: number;
  latestCharge: string;
}) {
  return {
    id: p.id,
    object: "payment_intent",
    amount: p.amount,
    amount_capturable: 0,
    amount_received: p.amount,
    application: null,
    application_fee_amount: null,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: "automatic",
    client_secret: `${p.id}_secret_emulated`,
    confirmation_method: "automatic",
    created: p.created,
    currency: "usd",
    customer: p.customer,
    description: null,
    last_payment_error: null,
    latest_charge: p.latestCharge,
    livemode: false,
    metadata: {},
    next_action: null,
    on_behalf_of: null,
    payment_method: null,
    payment_method_options: {},
    payment_method_types: ["card"],
    processing: null,
    receipt_email: null,
    review: null,
    setup_future_usage: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: "succeeded",
    transfer_group: null,
  } satisfies Partial<Wire<Stripe.PaymentIntent>>;
}

/** The charge of a paid invoice, as charge.refunded carries it. */
export function chargeObject(c: {
  id: string;
  customer: string;
  paymentIntent: string;
  amount: number;
  amountRefunded: number;
  created: number;
}) {
  return {
    id: c.id,
    object: "charge",
    amount: c.amount,
    amount_captured: c.amount,
    amount_refunded: c.amountRefunded,
    captured: true,
    created: c.created,
    currency: "usd",
    customer: c.customer,
    disputed: false,
    livemode: false,
    metadata: {},
    paid: true,
    payment_intent: c.paymentIntent,
    refunded: c.amountRefunded >= c.amount,
    status: "succeeded",
  } satisfies Partial<Wire<Stripe.Charge>>;
}

/** A dispute of a charge, as charge.dispute.created and charge.dispute.closed carry it. */
export function disputeObject(d: {
  id: string;
  charge: string;
  paymentIntent: string;
  amount: number;
  status: "needs_response" | "won" | "lost";
  created: number;
}) {
  return {
    id: d.id,
    object: "dispute",
    amount: d.amount,
    charge: d.charge,
    created: d.created,
    currency: "usd",
    is_charge_refundable: false,
    livemode: false,
    metadata: {},
    payment_intent: d.paymentIntent,
    reason: "fraudulent",
    status: d.status,
  } satisfies Partial<Wire<Stripe.Dispute>>;
}
