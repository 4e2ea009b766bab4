// The Stripe events the webhook acts on: the one list both the webhook
// (workers/services/stripe-events.ts) and the endpoint setup script
// (scripts/stripe-setup.ts) use. Node runs the script directly, so this file
// imports nothing.

export const SUBSCRIPTION_EVENT_TYPES = [
  "customer.subscription.created",
  "customer.subscription.updated",
  "customer.subscription.deleted",
  "customer.subscription.paused",
  "customer.subscription.resumed",
  "customer.subscription.pending_update_applied",
] as const;

export const HANDLED_EVENT_TYPES = [
  "checkout.session.completed",
  "invoice.paid",
  // Which PaymentIntent paid an invoice: a refund or a dispute names only the PaymentIntent (ADR 0340).
  "invoice_payment.paid",
  // A team's declined payment freezes its pool (workers/services/seat-events.ts, ADR 0290).
  "invoice.payment_failed",
  ...SUBSCRIPTION_EVENT_TYPES,
  "charge.refunded",
  "charge.dispute.created",
  "charge.dispute.closed",
] as const;
