import Stripe from "stripe";
import { PLANS, TEAM_PLAN } from "../app/shared/catalog.ts";
import { HANDLED_EVENT_TYPES } from "../app/shared/stripe-event-types.ts";

// One-time (and repeatable) setup of a Stripe account for this app:
//  - a recurring price per plan and interval, found by its lookup key
//    (app/shared/catalog.ts lookupKeys), so no price id lives in code or config,
//    and the team plan's monthly price of one seat (TEAM_PLAN.lookupKey);
//  - a default Billing Portal configuration that allows cancelling at the
//    period's end and updating the payment method (/billing opens it);
//  - with --webhook-url, the webhook endpoint for the events we handle; its
//    signing secret is printed once, for `npx wrangler secret put STRIPE_WEBHOOK_SECRET`.
//
//   STRIPE_SECRET_KEY=sk_live_... npm exec -- node scripts/stripe-setup.ts [--webhook-url https://host/api/webhooks/stripe]
//
// STRIPE_API_URL points it at the local emulator instead (it has every price already).

const EVENTS = HANDLED_EVENT_TYPES;

const key = process.env.STRIPE_SECRET_KEY;
if (!key) throw new Error("Set STRIPE_SECRET_KEY (never commit it).");
const config: Stripe.StripeConfig = {};
if (process.env.STRIPE_API_URL) {
  const url = new URL(process.env.STRIPE_API_URL);
  Object.assign(config, { host: url.hostname, port: url.port, protocol: url.protocol.replace(":", "") });
}
const stripe = new Stripe(key, config);

async function ensurePrice(
  lookupKey: string,
  unitAmount: number,
  interval: "month" | "year",
  product: { name: string; planId: string },
): Promise<void> {
  const found = await stripe.prices.list({ lookup_keys: [lookupKey], active: true, limit: 1 });
  if (found.data[0]) {
    console.log(`ok      ${lookupKey} -> ${found.data[0].id}`);
    return;
  }
  const price = await stripe.prices.create(
    {
      currency: "usd",
      unit_amount: unitAmount,
      recurring: { interval },
      lookup_key: lookupKey,
      product_data: { name: product.name, metadata: { planId: product.planId } },
      metadata: { planId: product.planId, interval },
    },
    { idempotencyKey: `setup-price:${lookupKey}` },
  );
  console.log(`created ${lookupKey} -> ${price.id}`);
}

for (const plan of PLANS) {
  for (const interval of ["month", "year"] as const) {
    const amount = (interval === "month" ? plan.price : plan.yearlyPrice) * 100;
    await ensurePrice(plan.lookupKeys[interval], amount, interval, { name: plan.name, planId: plan.id });
  }
}
// One seat of the team plan for a month: a subscription's quantity is its number of seats (ADR 0290).
await ensurePrice(TEAM_PLAN.lookupKey, TEAM_PLAN.pricePerSeat * 100, "month", {
  name: `${TEAM_PLAN.name} seat`,
  planId: TEAM_PLAN.id,
});

const portal = await stripe.billingPortal.configurations.list({ is_default: true, limit: 1 });
if (portal.data[0]) console.log(`ok      billing portal configuration ${portal.data[0].id}`);
else {
  const created = await stripe.billingPortal.configurations.create({
    features: {
      payment_method_update: { enabled: true },
      invoice_history: { enabled: true },
      subscription_cancel: { enabled: true, mode: "at_period_end" },
    },
  });
  console.log(`created billing portal configuration ${created.id}`);
}

const webhookIndex = process.argv.indexOf("--webhook-url");
const webhookUrl = webhookIndex > 0 ? process.argv[webhookIndex + 1] : undefined;
if (webhookUrl) {
  const endpoint = await stripe.webhookEndpoints.create({ url: webhookUrl, enabled_events: [...EVENTS] });
  console.log(`created webhook endpoint ${endpoint.id} for ${webhookUrl}`);
  console.log(`its signing secret (store it now, it is not shown again): ${endpoint.secret}`);
  console.log("  npx wrangler secret put STRIPE_WEBHOOK_SECRET");
}
