import { handleStripeWebhook } from "@workers/services/stripe-webhook";
import { Hono } from "hono";
import type { ApiEnv } from "./types";

// Stripe's signed webhook. No session, no cookies: the signature on the raw
// body is the only credential (the cross-site check lets it through because a
// server-to-server POST carries neither Origin nor Sec-Fetch-Site).
const MAX_EVENT_BYTES = 512 * 1024;

export const webhooks = new Hono<ApiEnv>().post("/stripe", async (c) => {
  const length = Number(c.req.header("Content-Length") ?? 0);
  if (length > MAX_EVENT_BYTES) return c.json({ error: "Event too large." }, 413);
  const raw = await c.req.text();
  if (raw.length > MAX_EVENT_BYTES) return c.json({ error: "Event too large." }, 413);
  const result = await handleStripeWebhook(c.env, c.get("db"), raw, c.req.header("Stripe-Signature"));
  return c.json(result.body, result.status);
});
