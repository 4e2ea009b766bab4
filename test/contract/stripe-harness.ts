import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";
import { startStripeEmulator } from "../../emulators/stripe.ts";

// The Stripe emulator on a free port, posting its signed events to a receiver here that verifies each with the SDK
// and hands it to `onEvent`: what the Stripe contract tests share.

export const port = (s: Server) => (s.address() as AddressInfo).port;

export interface StripeHarness {
  emulator: Server;
  /** The emulator's address, for its control routes and pay pages. */
  base: string;
  /** The real SDK pointed at the emulator, as workers/adapters/stripe.ts points it at STRIPE_API_URL. */
  stripe: Stripe;
  close(): Promise<void>;
}

export async function startStripeHarness(
  secret: string,
  webhookSecret: string,
  onEvent: (event: Stripe.Event) => void,
): Promise<StripeHarness> {
  const verifier = new Stripe("sk_test_unused");
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      onEvent(verifier.webhooks.constructEvent(raw, String(req.headers["stripe-signature"]), webhookSecret));
      res.writeHead(200, { "Content-Type": "application/json" }).end('{"received":true}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const emulator = await startStripeEmulator({
    port: 0,
    secretKey: secret,
    webhookSecret,
    appUrl: `http://127.0.0.1:${port(receiver)}`,
  });
  const stripe = new Stripe(secret, {
    host: "127.0.0.1",
    port: port(emulator),
    protocol: "http",
    maxNetworkRetries: 2,
  });
  return {
    emulator,
    base: `http://127.0.0.1:${port(emulator)}`,
    stripe,
    async close() {
      await new Promise((r) => emulator.close(r));
      await new Promise((r) => receiver.close(r));
    },
  };
}
