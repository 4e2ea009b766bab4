import { createHmac, randomBytes } from "node:crypto";
import { PLANS, TEAM_PLAN } from "../app/shared/catalog.ts";
import {
  type CheckoutSessionObject,
  type InvoiceObject,
  type PriceObject,
  type ProrationLineSpec,
  priceObject,
  type SubscriptionObject,
} from "./stripe-objects.ts";

// The Stripe emulator's state (what it keeps between requests and starts) and
// the small helpers every part of it shares.

export interface Customer {
  id: string;
  object: "customer";
  created: number;
  email: string | null;
  name: string | null;
  metadata: Record<string, string>;
  livemode: false;
}

export interface PortalSession {
  id: string;
  object: "billing_portal.session";
  customer: string;
  return_url: string | null;
  created: number;
  url: string;
  livemode: false;
  flow: null | { type: string; subscription_cancel?: { subscription: string }; after_completion?: unknown };
  /** Where to go once the flow is done (flow_data.after_completion.redirect.return_url). */
  afterUrl: string | null;
}

export interface Delivery {
  at: string;
  status: number | null;
  error?: string;
}

export interface StoredEvent {
  id: string;
  type: string;
  created: number;
  payload: string;
  deliveries: Delivery[];
}

export interface SessionExtra {
  subscriptionMetadata: Record<string, string>;
  priceId: string;
  /** line_items[0][quantity]: the seats bought (older stored sessions have none: 1). */
  quantity?: number;
}

export interface State {
  customers: Record<string, Customer>;
  sessions: Record<string, CheckoutSession>;
  subscriptions: Record<string, SubscriptionObject>;
  invoices: Record<string, InvoiceObject>;
  portalSessions: Record<string, PortalSession>;
  events: StoredEvent[];
  idempotency: Record<string, { fingerprint: string; status: number; body: unknown }>;
  requests: { method: string; path: string; idempotencyKey: string | null; at: string }[];
  invoiceCounter: number;
  /** The charge behind each paid invoice, with what was refunded and any dispute. */
  charges: Record<string, { id: string; invoice: string; amountRefunded: number; dispute: string | null }>;
  /**
   * Stripe's time, like a test clock: null runs with the wall clock; a number is a frozen time that only
   * POST /_emulator/clock moves (forward).
   */
  clock: { frozenTime: number | null };
  /** Proration items left pending by proration_behavior=create_prorations, billed on the subscription's next invoice. */
  pendingProrations: Record<string, ProrationLineSpec[]>;
  /** How many of each customer's next payments will be declined (POST /_emulator/customers/:id/fail-next-payment). */
  failNextPayments: Record<string, number>;
  /** Each customer's credit balance in cents (negative: owed to the customer), from invoices whose total was negative. */
  balances: Record<string, number>;
}

export const emptyState = (): State => ({
  customers: {},
  sessions: {},
  subscriptions: {},
  invoices: {},
  portalSessions: {},
  events: [],
  idempotency: {},
  requests: [],
  invoiceCounter: 0,
  charges: {},
  clock: { frozenTime: null },
  pendingProrations: {},
  failNextPayments: {},
  balances: {},
});

export function id(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString("base64url").replace(/[-_]/g, "x")}`;
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Stripe's time in the emulator: the frozen test-clock time when set, else the wall clock. */
export const stripeNow = (state: Pick<State, "clock">) => state.clock?.frozenTime ?? nowSeconds();

/** The catalogue's prices, as the seeding script would create them in Stripe (one per lookup key). */
export function emulatedPrices(): PriceObject[] {
  const seat = priceObject({
    id: `price_${TEAM_PLAN.lookupKey}`,
    lookupKey: TEAM_PLAN.lookupKey,
    unitAmount: TEAM_PLAN.pricePerSeat * 100,
    interval: "month",
    productId: `prod_${TEAM_PLAN.id}`,
  });
  return [...plansPrices(), seat];
}

function plansPrices(): PriceObject[] {
  return PLANS.flatMap((plan) =>
    (["month", "year"] as const).map((interval) =>
      priceObject({
        id: `price_${plan.lookupKeys[interval]}`,
        lookupKey: plan.lookupKeys[interval],
        unitAmount: (interval === "month" ? plan.price : plan.yearlyPrice) * 100,
        interval,
        productId: `prod_${plan.id}`,
      }),
    ),
  );
}

/**
 * Parses Stripe's form encoding (`metadata[userId]=u&line_items[0][price]=p`)
 * into nested objects and arrays.
 */
export function parseStripeForm(encoded: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [rawKey, value] of new URLSearchParams(encoded)) {
    const parts = rawKey.split("[").map((p) => p.replace(/\]$/, ""));
    let node: Record<string, unknown> | unknown[] = root;
    parts.forEach((part, i) => {
      const last = i === parts.length - 1;
      const key: string | number = Array.isArray(node) ? Number(part) : part;
      const container = node as Record<string | number, unknown>;
      if (last) container[key] = value;
      else {
        if (container[key] === undefined) container[key] = /^\d+$/.test(parts[i + 1] ?? "") ? [] : {};
        node = container[key] as Record<string, unknown> | unknown[];
      }
    });
  }
  return root;
}

export interface StripeEmulatorOptions {
  port: number;
  secretKey: string;
  webhookSecret: string;
  /** The app's origin; events go to {appUrl}/api/webhooks/stripe. */
  appUrl: string;
  /** Where state is kept between starts (omit to keep it in memory). */
  storeFile?: string;
}

export function signPayload(payload: string, secret: string, timestamp = nowSeconds()): string {
  const signature = createHmac("sha256", secret).update(`${timestamp}.${payload}`).digest("hex");
  return `t=${timestamp},v1=${signature}`;
}

/** A Checkout Session as the emulator keeps it: what it sends, plus what it needs when the session is paid. */
export type CheckoutSession = CheckoutSessionObject & { _extra: SessionExtra };
