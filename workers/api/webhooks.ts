import { readText } from "@workers/http/body";
import { failureJson } from "@workers/http/result";
import { handleStripeWebhook } from "@workers/services/stripe-webhook";
import { Hono } from "hono";
import type { ApiEnv } from "./types";

// Stripe's signed webhook. No session, no cookies: the signature on the raw
// body is the only credential (the cross-site check lets it through because a
// server-to-server POST carries neither Origin nor Sec-Fetch-Site).
const MAX_EVENT_BYTES = 512 * 1024;

export const webhooks = new Hono<ApiEnv>().post("/stripe", async (c) => {
  const body = await readText(c.req.raw, { maxBytes: MAX_EVENT_BYTES });
  if (!body.ok) return failureJson(body);
  const result = await handleStripeWebhook(c.env, c.get("db"), body.text, c.req.header("Stripe-Signature"));
  return c.json(result.body, result.status);
});
