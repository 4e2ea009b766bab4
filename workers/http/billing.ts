import { createStripe } from "@workers/adapters/stripe";
import { log } from "@workers/lib/log";
import type { BillingDeps } from "@workers/services/billing";
import { data, type RouterContextProvider } from "react-router";
import Stripe from "stripe";
import { PROVIDER_DOWN_MESSAGE } from "~/shared/billing-messages";
import { type Failure, fail, type Result } from "~/shared/result";
import { requestContext } from "./context";
import { failureHeaders } from "./result";

export function billingDeps(context: Readonly<RouterContextProvider>): BillingDeps {
  const { env, db } = context.get(requestContext);
  return { stripe: createStripe(env), db, origin: env.APP_ORIGIN.replace(/\/$/, "") };
}

/** Runs a call to Stripe; a declined card says so, anything else is logged and gets a calm message. */
export async function callStripe<T extends object>(fn: () => Promise<Result<T>>): Promise<Result<T>> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof Stripe.errors.StripeCardError) return fail("conflict", err.message);
    log.error("stripe call failed", { err, where: "stripe" });
    return fail("unavailable", PROVIDER_DOWN_MESSAGE);
  }
}

/**
 * A refused checkout or portal request as the billing pages' answer: the
 * message above the form, with 409 whatever the code (a declined card, no
 * Stripe customer yet, Stripe out of reach); the pages have always answered so.
 */
export function billingRefusal(f: Failure) {
  return data(f, { status: 409, headers: failureHeaders(f) });
}
