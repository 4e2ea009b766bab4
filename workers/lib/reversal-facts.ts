import type Stripe from "stripe";

// A refund or a dispute as plain data, for whichever payment it names: a person's plan (stripe-events.ts) or a
// team's seats (seat-events.ts). A charge and a dispute name their PaymentIntent, never an invoice; the invoice it
// paid is found through invoice_payment.paid's record (docs/decisions/0340-invoice-payments-name-the-payment.md).
// Importing nothing of ours, so the Node-run contract tests read it as the Worker does; all but the dispute's
// customer (asked of Stripe through the client passed in) is pure.

export type Reversal =
  | {
      kind: "reversal";
      customerId: string | null;
      paymentIntentId: string;
      cause: "refund" | "dispute";
      /** The refund (charge id and cumulative amount) or dispute id: one reversal each. */
      ref: string;
      /** The share of the payment reversed so far (a refund is cumulative over partial refunds). */
      fraction: number;
    }
  | { kind: "reversal_undone"; customerId: string | null; paymentIntentId: string; ref: string }
  | { kind: "ignored"; why: string };

const idOf = (value: string | { id: string } | null | undefined): string | null =>
  !value ? null : typeof value === "string" ? value : value.id;

/** The reversal a verified event carries, or null for an event that is not a refund or a dispute. */
export function reversalOf(event: Stripe.Event): Reversal | null {
  if (event.type === "charge.refunded") return refundOf(event.data.object);
  if (event.type === "charge.dispute.created") return disputeOf(event.data.object, false);
  if (event.type === "charge.dispute.closed") return disputeOf(event.data.object, true);
  return null;
}

/** A refund takes back the refunded share of a payment's unspent credits (cumulative over partial refunds). */
function refundOf(charge: Stripe.Charge): Reversal {
  const paymentIntentId = idOf(charge.payment_intent);
  if (!paymentIntentId || charge.amount <= 0 || charge.amount_refunded <= 0)
    return { kind: "ignored", why: "not a refunded payment" };
  return {
    kind: "reversal",
    customerId: idOf(charge.customer),
    paymentIntentId,
    cause: "refund",
    ref: `${charge.id}:${charge.amount_refunded}`,
    fraction: charge.amount_refunded / charge.amount,
  };
}

/** A dispute takes back all of a payment's unspent credits; a dispute won gives them back; one lost changes nothing more. */
function disputeOf(dispute: Stripe.Dispute, closed: boolean): Reversal {
  const paymentIntentId = idOf(dispute.payment_intent);
  if (!paymentIntentId) return { kind: "ignored", why: "a dispute without a payment" };
  if (!closed)
    return { kind: "reversal", customerId: null, paymentIntentId, cause: "dispute", ref: dispute.id, fraction: 1 };
  if (dispute.status !== "won") return { kind: "ignored", why: `dispute ${dispute.status}` };
  return { kind: "reversal_undone", customerId: null, paymentIntentId, ref: dispute.id };
}

/**
 * What a reversal makes due now: the reversed share of what the payment granted (rounded up, never more than it
 * granted), less what earlier reversals of the same payment already made due (a refund's share is cumulative).
 */
export function dueNow(granted: number, fraction: number, dueBefore: number): number {
  return Math.max(0, Math.min(granted, Math.ceil(granted * Math.min(1, fraction))) - dueBefore);
}

/**
 * The customer a disputed payment was made by, asked of Stripe: a dispute names its PaymentIntent, not its customer
 * (docs/decisions/0359-a-dispute-of-a-customer-we-never-made-is-ignored.md). Throws when Stripe does not answer.
 */
export async function customerOfPayment(
  stripe: { paymentIntents: Pick<Stripe.PaymentIntentResource, "retrieve"> },
  paymentIntentId: string,
): Promise<string | null> {
  const intent = await stripe.paymentIntents.retrieve(paymentIntentId);
  return idOf(intent.customer);
}
