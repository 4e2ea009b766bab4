import { readText } from "@workers/http/body";
import { failureJson } from "@workers/http/result";
import { log } from "@workers/lib/log";
import { countWebhookFailure } from "@workers/services/operations";
import { handleStripeWebhook } from "@workers/services/stripe-webhook";
import { teamSeatSink } from "@workers/services/teams/seat-sink";
import { Hono } from "hono";
import type { ApiEnv } from "./types";

// Stripe's signed webhook. No session, no cookies: the signature on the raw
// body is the only credential (the cross-site check lets it through because a
// server-to-server POST carries neither Origin nor Sec-Fetch-Site).
const MAX_EVENT_BYTES = 512 * 1024;

export const webhooks = new Hono<ApiEnv>().post("/stripe", async (c) => {
  const body = await readText(c.req.raw, { maxBytes: MAX_EVENT_BYTES });
  if (!body.ok) return failureJson(body);
  const db = c.get("db");
  const counted = (cause: string) => countWebhookFailure(db, cause, Date.now());
  let result: Awaited<ReturnType<typeof handleStripeWebhook>>;
  try {
    const seats = teamSeatSink(c.env, db);
    result = await handleStripeWebhook(c.env, db, body.text, c.req.header("Stripe-Signature"), seats);
  } catch (err) {
    // Stripe sends it again; the operations page counts the failure (the error itself reaches api.onError).
    await counted("error").catch(() => undefined);
    throw err;
  }
  // A refused event (a bad signature) changes nothing, not even a counter: anyone can send one. It is logged.
  if (result.status !== 200) log.warn("stripe webhook refused", { status: result.status });
  // A signed reversal of a payment not yet known (ADR 0345): Stripe sends it again; the operations page counts it.
  if (result.status === 409) await counted("payment_not_yet_known").catch(() => undefined);
  return c.json(result.body, result.status);
});
