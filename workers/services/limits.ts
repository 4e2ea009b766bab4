import { RATE_LIMITED_MESSAGE, type RateRule } from "@workers/objects/limits-client";
import { type Failure, fail } from "~/shared/result";
import type { Deps } from "./request-deps";

// Per-key attempt limits shared by every isolate (counted in the RateLimiter
// Durable Object). Each rule lives beside the service it protects.

/** Checkout sessions a user may open in ten minutes (each one is a call to Stripe). */
export const CHECKOUT_RULE: RateRule = { name: "checkout", limit: 20, windowMs: 10 * 60 * 1000 };
/** Uploads a user may declare in an hour. */
export const UPLOAD_RULE: RateRule = { name: "upload-create", limit: 300, windowMs: 60 * 60 * 1000 };

/** Removal masks a user may store in an hour (each brushed removal stores one; docs/decisions/0195). */
export const MASK_RULE: RateRule = { name: "mask-store", limit: 300, windowMs: 60 * 60 * 1000 };

/** Counts one attempt against every key; a rate_limited failure (with Retry-After) when any is over the rule. */
export async function overLimit(
  deps: Pick<Deps, "rateLimit">,
  rule: RateRule,
  keys: (string | null | undefined)[],
): Promise<Failure | null> {
  const r = await deps.rateLimit(rule, keys);
  return r.allowed ? null : fail("rate_limited", RATE_LIMITED_MESSAGE, { retryAfterSeconds: r.retryAfterSeconds });
}
