import type { Database } from "@db/client";
import { subscriptions, users } from "@db/schema";
import { currentSubscription, LIVE_STATUSES } from "@workers/objects/billing-client";
import { and, eq, isNull } from "drizzle-orm";
import type Stripe from "stripe";
import {
  ALREADY_ON_PLAN_MESSAGE,
  NO_BILLING_ACCOUNT_MESSAGE,
  PLAN_REQUIRED_MESSAGE,
  PROVIDER_DOWN_MESSAGE,
} from "~/shared/billing-messages";
import { type BillingInterval, findPlan, type Plan } from "~/shared/catalog";
import { fail, ok, type Result } from "~/shared/result";
import type { BillingMetadata } from "./stripe-events";

// Checkout, plan changes and the billing portal: the calls our pages make to
// Stripe. Credits and plans change only when Stripe's signed webhook says so
// (workers/services/stripe-webhook.ts); nothing here grants anything.

export interface BillingDeps {
  stripe: Stripe;
  db: Database;
  /** Absolute origin for Stripe's return addresses, e.g. https://stagewise.example.com */
  origin: string;
  now?: () => number;
}

export interface BillingUser {
  id: string;
  email: string;
  name: string;
}

/** Where to send the browser next (Stripe's page, or back to ours), or why not (app/shared/result.ts). */
export type BillingOutcome = Result<{ url: string; switched?: boolean }>;

export const PLAN_UNAVAILABLE_MESSAGE = "This plan is not available right now. Please try again later.";

export {
  ALREADY_ON_PLAN_MESSAGE,
  NO_BILLING_ACCOUNT_MESSAGE,
  PLAN_REQUIRED_MESSAGE,
  PROVIDER_DOWN_MESSAGE,
} from "~/shared/billing-messages";
export const CHECKOUT_SUCCESS_PATH = "/dashboard?checkout=success";

/** Requests repeated within this window (a double click, a retried submit) reuse Stripe's first answer. */
const DEDUPE_WINDOW_MS = 10 * 60 * 1000;

function bucket(deps: BillingDeps): number {
  return Math.floor((deps.now?.() ?? Date.now()) / DEDUPE_WINDOW_MS);
}

/** The user's Stripe customer, created (once, even under concurrent requests) before their first checkout. */
export async function ensureCustomer(deps: BillingDeps, user: BillingUser): Promise<string> {
  const { db, stripe } = deps;
  const row = await db.select({ id: users.stripeCustomerId }).from(users).where(eq(users.id, user.id)).get();
  if (row?.id) return row.id;
  const customer = await stripe.customers.create(
    { email: user.email, name: user.name, metadata: { userId: user.id } },
    { idempotencyKey: `customer:${user.id}` },
  );
  await db
    .update(users)
    .set({ stripeCustomerId: customer.id })
    .where(and(eq(users.id, user.id), isNull(users.stripeCustomerId)));
  const stored = await db.select({ id: users.stripeCustomerId }).from(users).where(eq(users.id, user.id)).get();
  return stored?.id ?? customer.id;
}

async function priceFor(stripe: Stripe, plan: Plan, interval: BillingInterval): Promise<Stripe.Price | null> {
  const list = await stripe.prices.list({ lookup_keys: [plan.lookupKeys[interval]], active: true, limit: 1 });
  return list.data[0] ?? null;
}

/** The customer's live subscription as Stripe sees it now (the webhook may not have told us yet). */
async function liveSubscription(stripe: Stripe, customerId: string): Promise<Stripe.Subscription | null> {
  const list = await stripe.subscriptions.list({ customer: customerId, status: "all", limit: 10 });
  return list.data.find((s) => LIVE_STATUSES.has(s.status)) ?? null;
}

function metadata(user: BillingUser, plan: Plan, interval: BillingInterval): BillingMetadata & Stripe.MetadataParam {
  return { userId: user.id, planId: plan.id, interval };
}

/**
 * Sends the user to pay for a plan: a new Stripe Checkout Session, or, when
 * they already subscribe, an immediate switch of their subscription to the new
 * price (charged now, with the unused time credited; a new period starts and
 * its plan credits are granted when Stripe confirms the payment).
 */
export async function startCheckout(
  deps: BillingDeps,
  user: BillingUser,
  planId: string,
  interval: BillingInterval,
): Promise<BillingOutcome> {
  const plan = findPlan(planId);
  if (!plan) return fail("invalid", PLAN_REQUIRED_MESSAGE);
  const { stripe } = deps;
  const customer = await ensureCustomer(deps, user);
  const price = await priceFor(stripe, plan, interval);
  if (!price) return fail("unavailable", PLAN_UNAVAILABLE_MESSAGE);
  const meta = metadata(user, plan, interval);

  const current = await liveSubscription(stripe, customer);
  if (current) {
    const item = current.items.data[0];
    if (!item) return fail("unavailable", PROVIDER_DOWN_MESSAGE);
    if (item.price.id === price.id) return fail("conflict", ALREADY_ON_PLAN_MESSAGE);
    await stripe.subscriptions.update(
      current.id,
      {
        items: [{ id: item.id, price: price.id }],
        metadata: meta,
        billing_cycle_anchor: { type: "now" },
        proration_behavior: "always_invoice",
        payment_behavior: "error_if_incomplete",
        cancel_at_period_end: false,
      },
      { idempotencyKey: `switch:${current.id}:${price.id}:${bucket(deps)}` },
    );
    return ok({ url: "/billing?changed=1", switched: true });
  }

  const session = await stripe.checkout.sessions.create(
    {
      mode: "subscription",
      customer,
      client_reference_id: user.id,
      line_items: [{ price: price.id, quantity: 1 }],
      metadata: meta,
      subscription_data: { metadata: meta },
      success_url: `${deps.origin}${CHECKOUT_SUCCESS_PATH}`,
      cancel_url: `${deps.origin}/checkout?${new URLSearchParams({ planId: plan.id, interval, canceled: "1" })}`,
    },
    { idempotencyKey: `checkout:${user.id}:${price.id}:${bucket(deps)}` },
  );
  if (!session.url) return fail("unavailable", PROVIDER_DOWN_MESSAGE);
  return ok({ url: session.url });
}

/** Opens the Stripe Billing Portal: to manage payment details, or straight at cancelling the plan. */
export async function openBillingPortal(
  deps: BillingDeps,
  user: BillingUser,
  intent: "manage" | "cancel",
): Promise<BillingOutcome> {
  const { db, stripe } = deps;
  const row = await db.select({ customer: users.stripeCustomerId }).from(users).where(eq(users.id, user.id)).get();
  if (!row?.customer) return fail("conflict", NO_BILLING_ACCOUNT_MESSAGE);
  const params: Stripe.BillingPortal.SessionCreateParams = {
    customer: row.customer,
    return_url: `${deps.origin}/billing`,
  };
  if (intent === "cancel") {
    const rows = await db.select().from(subscriptions).where(eq(subscriptions.userId, user.id)).all();
    const sub = currentSubscription(rows);
    if (sub && !sub.cancelAtPeriodEnd) {
      params.flow_data = {
        type: "subscription_cancel",
        subscription_cancel: { subscription: sub.id },
        after_completion: { type: "redirect", redirect: { return_url: `${deps.origin}/billing?canceled=1` } },
      };
    }
  }
  // A portal session is single use: a fresh key per request still makes the SDK's own retries safe.
  const session = await stripe.billingPortal.sessions.create(params, {
    idempotencyKey: `portal:${user.id}:${intent}:${crypto.randomUUID()}`,
  });
  return ok({ url: session.url });
}
