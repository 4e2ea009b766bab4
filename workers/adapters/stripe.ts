import Stripe from "stripe";

// The Stripe client. In production it talks to api.stripe.com with the secret
// set through `wrangler secret put STRIPE_SECRET_KEY`; locally STRIPE_API_URL
// points the real SDK at the Stripe emulator (emulators/stripe.ts) through the
// SDK's host/port/protocol options. See docs/decisions/0022-stripe-emulator.md.

export class StripeNotConfigured extends Error {}

export function createStripe(
  env: Pick<Env, "STRIPE_SECRET_KEY" | "STRIPE_API_URL">,
  fetcher: typeof fetch = (input, init) => fetch(input, init),
): Stripe {
  if (!env.STRIPE_SECRET_KEY) throw new StripeNotConfigured("STRIPE_SECRET_KEY is not set");
  const config: Stripe.StripeConfig = {
    httpClient: Stripe.createFetchHttpClient(fetcher),
    maxNetworkRetries: 2,
    timeout: 20_000,
  };
  if (env.STRIPE_API_URL) {
    const url = new URL(env.STRIPE_API_URL);
    const protocol = url.protocol === "http:" ? "http" : "https";
    config.host = url.hostname;
    config.port = url.port || (protocol === "http" ? "80" : "443");
    config.protocol = protocol;
  }
  return new Stripe(env.STRIPE_SECRET_KEY, config);
}

/**
 * Verifies a webhook's signature on the raw body (SubtleCrypto: workerd has no
 * Node crypto HMAC) and parses it. Throws on a bad or stale (over 5 minutes)
 * signature.
 */
export function verifyWebhook(rawBody: string, signature: string, secret: string): Promise<Stripe.Event> {
  return Stripe.webhooks.constructEventAsync(
    rawBody,
    signature,
    secret,
    undefined,
    Stripe.createSubtleCryptoProvider(),
  );
}

export type { Stripe };
