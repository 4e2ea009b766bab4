import type { Database } from "@db/client";
import type { SubscriptionRow } from "@db/schema";
import type { Reversal } from "@workers/lib/reversal-facts";
import type { Stmt } from "@workers/objects/user/batch";
import type { BillingInterval, PlanId } from "~/shared/catalog";

// The shapes payments share: a verified Stripe event as plain data (the
// webhook parses it, the user's Durable Object applies it, apply.ts), and the
// work one event's application builds up for its single D1 batch.

export type PaymentFact =
  | {
      kind: "checkout_completed";
      customerId: string;
      subscriptionId: string;
      /** The subscription's first invoice; its credits are granted once, by this or by invoice.paid. */
      invoiceId: string | null;
      planId: PlanId;
      interval: BillingInterval;
      /** The checkout's total in cents (0 with a 100% discount: no credits). */
      total: number | null;
    }
  | {
      kind: "invoice_paid";
      customerId: string;
      subscriptionId: string;
      invoiceId: string;
      planId: PlanId;
      interval: BillingInterval;
      periodStart: number;
      periodEnd: number;
      /** Stripe's billing_reason: subscription_create, subscription_cycle, subscription_update, … */
      billingReason: string | null;
      /** The invoice total in cents after proration credits and discounts (negative: a credit to the customer). */
      total: number;
      paymentIntentId: string | null;
    }
  | {
      kind: "subscription";
      customerId: string;
      subscriptionId: string;
      planId: PlanId;
      interval: BillingInterval;
      status: string;
      cancelAtPeriodEnd: boolean;
      /**
       * What cancelAtPeriodEnd was before this event, when the event says it changed it (Stripe's
       * previous_attributes); null otherwise. It orders a cancellation or resumption within one second.
       */
      cancelChangedFrom: boolean | null;
      periodStart: number | null;
      periodEnd: number | null;
      endedAt: number | null;
    }
  /** A refund (cumulative fraction of the charge) or a dispute (all of it): take back unspent credits. */
  | Exclude<Reversal, { kind: "ignored" }>
  | { kind: "ignored"; why: string };

export interface PaymentEvent {
  eventId: string;
  type: string;
  /** Stripe's event.created in milliseconds. */
  createdAt: number;
  /** The user id our server put in the checkout (client_reference_id / metadata), if any. */
  userHint: string | null;
  fact: PaymentFact;
}

export interface ApplyResult {
  duplicate: boolean;
  outcome: "applied" | "ignored";
  credits: number;
}

export interface Work {
  db: Database;
  userId: string;
  now: number;
  stmts: Stmt[];
  subs: Map<string, SubscriptionRow>;
  changedSubs: Set<string>;
}
