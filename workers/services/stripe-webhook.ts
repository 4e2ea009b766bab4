import type { Database } from "@db/client";
import { paidBy } from "@db/paid-by";
import { invoicePayments, paidPeriods, stripeEvents, users } from "@db/schema";
import { recordEvent } from "@db/stripe-events";
import { teams } from "@db/teams";
import { createStripe, verifyWebhook } from "@workers/adapters/stripe";
import { log } from "@workers/lib/log";
import { customerOfPayment } from "@workers/lib/reversal-facts";
import type { ApplyResult, PaymentEvent } from "@workers/objects/billing-client";
import { userObject } from "@workers/objects/client";
import { eq } from "drizzle-orm";
import type Stripe from "stripe";
import { type Failure, fail } from "~/shared/result";
import { type SeatFact, toSeatFact } from "./seat-events";
import { customerOf, type InvoicePaid, invoicePaymentOf, paymentIntentOfFact, toPaymentEvent } from "./stripe-events";

// POST /api/webhooks/stripe: the only way a payment changes credits or plans.
// Verify the signature on the raw body, turn the event into plain data, find
// its user, and let that user's Durable Object apply it in one atomic batch
// together with the event's record (docs/decisions/0021-webhook-idempotency-and-ordering.md).

export type WebhookResult =
  | { status: 400; body: Failure }
  | { status: 409; body: Failure }
  | { status: 200; body: { received: true; outcome: "applied" | "ignored"; duplicate: boolean } };

export const BAD_SIGNATURE_MESSAGE = "Invalid or expired Stripe signature.";
export const PAYMENT_NOT_YET_KNOWN_MESSAGE =
  "This refund or dispute is about a payment whose invoice events have not arrived yet. Send it again later.";

/** Whether a PaymentIntent is known to have paid one of our recorded periods (its invoice.paid and its pair came). */
async function paymentKnown(db: Database, paymentIntentId: string): Promise<boolean> {
  const row = await db.select({ id: paidPeriods.invoiceId }).from(paidPeriods).where(paidBy(paymentIntentId)).get();
  return row !== undefined;
}

/**
 * Whether a Stripe customer is one we made, a user's or a team's: every checkout of ours names the customer made
 * and stored before it (billing.ts `ensureCustomer`, teams/seats.ts `ensureTeamCustomer`), so a charge of another
 * customer, or of none, is not a payment of ours.
 */
async function ourCustomer(db: Database, customerId: string | null): Promise<boolean> {
  if (!customerId) return false;
  const [user, team] = await db.batch([
    db.select({ id: users.id }).from(users).where(eq(users.stripeCustomerId, customerId)).limit(1),
    db.select({ id: teams.id }).from(teams).where(eq(teams.stripeCustomerId, customerId)).limit(1),
  ]);
  return user.length > 0 || team.length > 0;
}

/** The customer of a disputed payment, from Stripe; undefined when Stripe did not answer. */
async function disputedCustomer(
  env: Env,
  eventId: string,
  paymentIntentId: string,
): Promise<string | null | undefined> {
  try {
    return await customerOfPayment(createStripe(env), paymentIntentId);
  } catch (err) {
    log.warn("stripe webhook: the disputed payment could not be read", { eventId, error: String(err) });
    return undefined;
  }
}

/** An event about nobody of ours, recorded once as ignored (a second delivery is a duplicate). */
async function ignored(db: Database, ev: PaymentEvent): Promise<WebhookResult> {
  const inserted = await recordEvent(db, ev, "ignored", Date.now())
    .onConflictDoNothing()
    .returning({ id: stripeEvents.id });
  return { status: 200, body: { received: true, outcome: "ignored", duplicate: inserted.length === 0 } };
}

/**
 * Where a team's seat facts go (the route passes workers/services/teams/seat-sink.ts: the team's Durable Object,
 * which applies them with app/shared/seat-pool.ts); it answers whether the event was already applied, or "ignored"
 * when no team of ours is named. Without one, or when ignored, team events are recorded as ignored.
 */
export type SeatFactSink = (
  fact: Exclude<SeatFact, { kind: "ignored" }>,
  event: { eventId: string; type: string; createdAt: number },
) => Promise<{ outcome: "applied" | "ignored"; duplicate: boolean }>;

/** Records which PaymentIntent paid which invoice, with the event's own record, in one batch. */
async function recordInvoicePayment(db: Database, event: Stripe.Event, paid: InvoicePaid): Promise<WebhookResult> {
  const now = Date.now();
  const [, recorded] = await db.batch([
    db
      .insert(invoicePayments)
      .values({ ...paid, createdAt: now })
      .onConflictDoNothing(),
    recordEvent(db, metaOf(event), "applied", now).onConflictDoNothing().returning({ id: stripeEvents.id }),
  ]);
  return { status: 200, body: { received: true, outcome: "applied", duplicate: recorded.length === 0 } };
}

const metaOf = (event: Stripe.Event) => ({ eventId: event.id, type: event.type, createdAt: event.created * 1000 });

/** The user an event is about: by Stripe customer first, else by the user id we put in the checkout. */
export async function resolveEventUser(db: Database, ev: PaymentEvent): Promise<string | null> {
  const customer = customerOf(ev);
  if (customer) {
    const row = await db.select({ id: users.id }).from(users).where(eq(users.stripeCustomerId, customer)).get();
    if (row) return row.id;
  }
  const paymentIntent = paymentIntentOfFact(ev);
  if (paymentIntent) {
    const row = await db.select({ id: paidPeriods.userId }).from(paidPeriods).where(paidBy(paymentIntent)).get();
    if (row) return row.id;
  }
  if (ev.userHint) {
    const row = await db.select({ id: users.id }).from(users).where(eq(users.id, ev.userHint)).get();
    if (row) return row.id;
  }
  return null;
}

export async function handleStripeWebhook(
  env: Env,
  db: Database,
  rawBody: string,
  signature: string | null | undefined,
  seats?: SeatFactSink,
): Promise<WebhookResult> {
  if (!env.STRIPE_WEBHOOK_SECRET) throw new Error("STRIPE_WEBHOOK_SECRET is not set");
  if (!signature) return { status: 400, body: fail("invalid", BAD_SIGNATURE_MESSAGE) };
  let event: Stripe.Event;
  try {
    event = await verifyWebhook(rawBody, signature, env.STRIPE_WEBHOOK_SECRET);
  } catch {
    return { status: 400, body: fail("invalid", BAD_SIGNATURE_MESSAGE) };
  }
  const invoicePaid = invoicePaymentOf(event);
  if (invoicePaid) return recordInvoicePayment(db, event, invoicePaid);
  const seatFact = toSeatFact(event);
  if (seats && seatFact.kind !== "ignored") {
    const applied = await seats(seatFact, metaOf(event));
    if (applied.outcome === "applied") {
      return { status: 200, body: { received: true, outcome: "applied", duplicate: applied.duplicate } };
    }
  }
  const ev: PaymentEvent = toPaymentEvent(event);
  // Stripe does not order events: a refund or dispute can come before the invoice.paid or invoice_payment.paid that
  // tie its PaymentIntent to a period. Recorded now it would take nothing, for good; refused, Stripe sends it again
  // (for up to three days) and a later try finds the payment (ADR 0345). Nothing is recorded, so the retry is not a
  // duplicate. A refund names its charge's customer; a dispute's is asked of Stripe. One we never made is another
  // product's, ignored (ADRs 0358, 0359); when Stripe does not answer, the dispute is refused and comes again.
  if (ev.fact.kind === "reversal" && !(await paymentKnown(db, ev.fact.paymentIntentId))) {
    const customer =
      ev.fact.cause === "refund"
        ? ev.fact.customerId
        : await disputedCustomer(env, ev.eventId, ev.fact.paymentIntentId);
    if (customer !== undefined && !(await ourCustomer(db, customer))) return ignored(db, ev);
    log.warn("stripe webhook: a reversal of a payment not yet known", { type: ev.type, eventId: ev.eventId });
    return { status: 409, body: fail("conflict", PAYMENT_NOT_YET_KNOWN_MESSAGE) };
  }

  const userId = ev.fact.kind === "ignored" ? null : await resolveEventUser(db, ev);
  if (!userId) {
    if (ev.fact.kind !== "ignored")
      log.warn("stripe webhook: no user for the event", { type: ev.type, eventId: ev.eventId });
    return ignored(db, ev);
  }

  const result: ApplyResult = await userObject(env, userId).applyPaymentEvent(userId, ev);
  return { status: 200, body: { received: true, outcome: result.outcome, duplicate: result.duplicate } };
}
