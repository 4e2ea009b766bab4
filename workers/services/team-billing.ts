import type Stripe from "stripe";
import { PROVIDER_DOWN_MESSAGE } from "~/shared/billing-messages";
import { TEAM_PLAN } from "~/shared/catalog";
import { fail, ok, type Result } from "~/shared/result";

// A team's seats at Stripe, through the real SDK: buying the team plan for a
// number of seats (a Checkout Session with line_items[0].quantity) and changing
// the seats of its subscription (the item's quantity, prorated and invoiced at
// once: always_invoice with error_if_incomplete, so a change applies only
// when its proration is paid, and credits follow money paid). Nothing here
// touches the team's tables or grants anything: the signed webhook's seat facts
// (seat-events.ts) do, in the team's Durable Object.
// docs/decisions/0290-seats-billed-as-stripe-bills-seats.md

export interface TeamBillingDeps {
  stripe: Stripe;
  /** Absolute origin for Stripe's return addresses. */
  origin: string;
  now?: () => number;
}

export const SEATS_RANGE_MESSAGE = `A team has between ${TEAM_PLAN.minSeats} and ${TEAM_PLAN.maxSeats} seats.`;
export const SAME_SEATS_MESSAGE = "The team already has this many seats.";
export const NOT_TEAM_SUBSCRIPTION_MESSAGE = "This subscription is not a team plan.";
export const SEATS_PAYMENT_DUE_MESSAGE =
  "The team's last payment did not go through. Update the payment method before changing seats.";
export const SEATS_DECLINED_MESSAGE = "The card on file was declined, so the seats were not changed.";
export const TEAM_PLAN_UNAVAILABLE_MESSAGE = "The team plan is not available right now. Please try again later.";

/** Requests repeated within this window (a double click, a retried submit) reuse Stripe's first answer. */
const DEDUPE_WINDOW_MS = 10 * 60 * 1000;

function validSeats(quantity: number): boolean {
  return Number.isInteger(quantity) && quantity >= TEAM_PLAN.minSeats && quantity <= TEAM_PLAN.maxSeats;
}

/** The team's metadata on its checkout and subscription: how the webhook knows a team's events from a person's. */
export function teamMetadata(teamId: string): Stripe.MetadataParam & { teamId: string; planId: "team" } {
  return { teamId, planId: TEAM_PLAN.id };
}

/** Sends the owner to pay for the team plan with `seats` seats (a Stripe Checkout Session). */
export async function startTeamCheckout(
  deps: TeamBillingDeps,
  team: { id: string; customerId: string },
  seats: number,
): Promise<Result<{ url: string }>> {
  if (!validSeats(seats)) return fail("invalid", SEATS_RANGE_MESSAGE);
  const { stripe } = deps;
  const prices = await stripe.prices.list({ lookup_keys: [TEAM_PLAN.lookupKey], active: true, limit: 1 });
  const price = prices.data[0];
  if (!price) return fail("unavailable", TEAM_PLAN_UNAVAILABLE_MESSAGE);
  const meta = teamMetadata(team.id);
  const bucket = Math.floor((deps.now?.() ?? Date.now()) / DEDUPE_WINDOW_MS);
  const session = await stripe.checkout.sessions.create(
    {
      mode: "subscription",
      customer: team.customerId,
      client_reference_id: team.id,
      line_items: [{ price: price.id, quantity: seats }],
      metadata: meta,
      subscription_data: { metadata: meta },
      success_url: `${deps.origin}/teams/${encodeURIComponent(team.id)}?checkout=success`,
      cancel_url: `${deps.origin}/teams/${encodeURIComponent(team.id)}?checkout=canceled`,
    },
    { idempotencyKey: `team-checkout:${team.id}:${seats}:${bucket}` },
  );
  if (!session.url) return fail("unavailable", PROVIDER_DOWN_MESSAGE);
  return ok({ url: session.url });
}

/**
 * Sets the seats of a team's subscription. Stripe invoices the proration at once and charges it; when the card
 * is declined nothing changes (402 from Stripe, "conflict" here). Applied to the team when Stripe's signed
 * invoice.paid arrives (a "seats_changed" fact), never on this answer.
 */
export async function setSeats(
  deps: TeamBillingDeps,
  subscriptionId: string,
  quantity: number,
): Promise<Result<{ subscription: string; quantity: number; previousQuantity: number; invoiceId: string | null }>> {
  if (!validSeats(quantity)) return fail("invalid", SEATS_RANGE_MESSAGE);
  const { stripe } = deps;
  let sub: Stripe.Subscription;
  try {
    sub = await stripe.subscriptions.retrieve(subscriptionId);
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return fail("not_found", NOT_TEAM_SUBSCRIPTION_MESSAGE);
    throw err;
  }
  const item = sub.items.data[0];
  if (!item || item.price.lookup_key !== TEAM_PLAN.lookupKey) return fail("conflict", NOT_TEAM_SUBSCRIPTION_MESSAGE);
  if (sub.status !== "active") return fail("conflict", SEATS_PAYMENT_DUE_MESSAGE);
  const previousQuantity = item.quantity ?? 1;
  if (previousQuantity === quantity) return fail("conflict", SAME_SEATS_MESSAGE);
  try {
    const updated = await stripe.subscriptions.update(
      sub.id,
      {
        items: [{ id: item.id, quantity }],
        proration_behavior: "always_invoice",
        payment_behavior: "error_if_incomplete",
      },
      // From a known count to a new one: a retried request replays Stripe's answer, a new change is a new key.
      { idempotencyKey: `seats:${sub.id}:${previousQuantity}->${quantity}:${sub.latest_invoice ?? ""}` },
    );
    const invoice = updated.latest_invoice;
    const invoiceId = typeof invoice === "string" ? invoice : (invoice?.id ?? null);
    return ok({ subscription: sub.id, quantity, previousQuantity, invoiceId });
  } catch (err) {
    if ((err as { type?: string }).type === "StripeCardError") return fail("conflict", SEATS_DECLINED_MESSAGE);
    throw err;
  }
}
