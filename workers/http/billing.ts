import { createStripe } from "@workers/adapters/stripe";
import { accountSummary } from "@workers/services/account";
import type { BillingDeps, BillingOutcome } from "@workers/services/billing";
import type { RouterContextProvider } from "react-router";
import Stripe from "stripe";
import { PROVIDER_DOWN_MESSAGE } from "~/shared/billing-messages";
import type { LiveCredits } from "~/shared/live-credits";
import { requestContext } from "./context";

export function billingDeps(context: Readonly<RouterContextProvider>): BillingDeps {
  const { env, db } = context.get(requestContext);
  return { stripe: createStripe(env), db, origin: env.APP_ORIGIN.replace(/\/$/, "") };
}

/** Runs a call to Stripe; a declined card says so, anything else is logged and gets a calm message. */
export async function callStripe<T extends BillingOutcome>(
  fn: () => Promise<T>,
): Promise<T | { ok: false; message: string }> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof Stripe.errors.StripeCardError) return { ok: false, message: err.message };
    console.error("stripe call failed", err);
    return { ok: false, message: PROVIDER_DOWN_MESSAGE };
  }
}

/** What the plan status card starts from, for a signed-in user. */
export async function liveCreditsFor(context: Readonly<RouterContextProvider>, userId: string): Promise<LiveCredits> {
  const summary = await accountSummary(context.get(requestContext).db, userId);
  return {
    credits: summary?.credits ?? 0,
    plan: summary?.plan ? { name: summary.plan.name, credits: summary.plan.credits } : null,
  };
}
