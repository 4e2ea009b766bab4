import { checkUrl, urlPolicy } from "@workers/lib/safe-url";
import type { Deps } from "@workers/services/request-deps";
import { fail, ok, type Result } from "~/shared/result";

// A public API job's callback address, checked before its credit is reserved. Only the public API's routes import
// this module: a job started from the pages names no callback, so the resolver and its pinned fetch stay off its way
// in (docs/decisions/0336-a-callback-carries-its-check.md).

/** How a callback's address is checked before anything is reserved: ok, or the 400 the request gets. */
export type CallbackCheck = (url: string) => Promise<Result<{ url: string }>>;

/**
 * A job's callback address, checked as its delivery will check it (workers/lib/safe-url.ts, ADR 0152): the address
 * itself, then every address its host name resolves to. Before the credit is reserved: a name that resolves to a
 * private network is refused here (400, nothing reserved), not accepted and refused at delivery
 * (docs/decisions/0207-callbacks-resolved-before-the-reservation.md). Delivery checks again, each time.
 */
export async function checkCallbackUrl(env: Deps["env"], url: string): Promise<Result<{ url: string }>> {
  const checked = await checkUrl(url, urlPolicy(env));
  if (!checked.ok) return fail("invalid", checked.reason, { fieldErrors: { callbackUrl: checked.reason } });
  return ok({ url });
}

/**
 * A callback as a job request carries it: where the event goes, the key that signs it, and its address's check under
 * this Worker's policy (its resolver and its own origin).
 */
export function jobCallback(env: Deps["env"], url: string, apiKeyId: string) {
  const check: CallbackCheck = (u) => checkCallbackUrl(env, u);
  return { url, apiKeyId, check };
}
