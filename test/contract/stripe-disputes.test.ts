import { readFileSync } from "node:fs";
import { join } from "node:path";
import type Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { customerOfPayment, reversalOf } from "../../workers/lib/reversal-facts.ts";
import { startTeamCheckout } from "../../workers/services/team-billing.ts";
import { type StripeHarness, startStripeHarness } from "./stripe-harness.ts";

// A dispute names its PaymentIntent, not its customer; the webhook asks Stripe for the PaymentIntent to tell another
// product's dispute from ours (ADR 0359). Here the production reader (reversal-facts.ts) asks the Stripe emulator
// through the real `stripe` SDK, about a payment the emulator disputed, and the emulator's answer is held to
// Stripe's own sample PaymentIntent (stripe/openapi's fixtures3.json).

const SECRET = "sk_test_disputes_contract";
const WHSEC = "whsec_disputes_contract";

let harness: StripeHarness;
const events: Stripe.Event[] = [];

beforeAll(async () => {
  harness = await startStripeHarness(SECRET, WHSEC, (event) => events.push(event));
});

afterAll(() => harness?.close());

describe("a dispute's customer, asked of the Stripe emulator through the stripe SDK", () => {
  it("names the customer that paid the disputed payment, in the shape of Stripe's sample PaymentIntent", async () => {
    const { stripe, base } = harness;
    const customer = (await stripe.customers.create({ email: "owner@team.example" })).id;
    const started = await startTeamCheckout(
      { stripe, origin: "https://app.example" },
      { id: "t", customerId: customer },
      2,
    );
    if (!started.ok) throw new Error(started.error);
    const session = new URL(started.url).pathname.split("/").pop()!;
    expect((await fetch(`${base}/c/pay/${session}/pay`, { method: "POST", redirect: "manual" })).status).toBe(303);
    const sub = (await stripe.subscriptions.list({ customer })).data[0]!;
    const invoice = await stripe.invoices.retrieve(sub.latest_invoice as string);
    const disputed = await fetch(`${base}/_emulator/invoices/${invoice.id}/dispute`, { method: "POST" });
    expect(disputed.status).toBe(200);

    const created = events.find((e) => e.type === "charge.dispute.created")!;
    const reversal = reversalOf(created);
    expect(reversal).toMatchObject({ kind: "reversal", cause: "dispute", customerId: null });
    const paymentIntentId = (reversal as { paymentIntentId: string }).paymentIntentId;
    expect(await customerOfPayment(stripe, paymentIntentId)).toBe(customer);

    const intent = (await (
      await fetch(`${base}/v1/payment_intents/${paymentIntentId}`, {
        headers: { Authorization: `Bearer ${SECRET}` },
      })
    ).json()) as Record<string, unknown>;
    const sample = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures/stripe/payment_intent.json"), "utf8"))
      .object as Record<string, unknown>;
    // Every field the emulator sends is one of the sample's; where the sample has a value, the same kind of value
    // (or null: the sample awaits a payment method, ours is paid).
    const kind = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
    const strays = Object.keys(intent).filter((k) => !(k in sample));
    expect(strays).toEqual([]);
    for (const [k, v] of Object.entries(intent)) {
      if (sample[k] !== null && v !== null) expect([k, kind(v)]).toEqual([k, kind(sample[k])]);
    }
    expect(intent).toMatchObject({
      object: "payment_intent",
      status: "succeeded",
      customer,
      amount: invoice.amount_paid,
    });
    expect(intent.latest_charge).toBe((created.data.object as Stripe.Dispute).charge);
  });

  it("answers Stripe's 404 for a PaymentIntent it never made, and the reader throws (the webhook then refuses)", async () => {
    const { stripe } = harness;
    await expect(customerOfPayment(stripe, "pi_nothere")).rejects.toMatchObject({
      statusCode: 404,
      code: "resource_missing",
    });
  });
});
