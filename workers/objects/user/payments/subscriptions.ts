import type { SubscriptionRow } from "@db/schema";
import { type BillingInterval, findPlan, type Plan, type PlanId } from "~/shared/catalog";
import type { PaymentFact, Work } from "./types";

// A user's subscriptions as Stripe's events describe them, in any order: which
// state wins, which subscription gives the plan, and the plan fields cached on
// the user (docs/decisions/0021-webhook-idempotency-and-ordering.md).

/** Statuses in which the customer has a plan (Stripe retries past_due payments). */
export const LIVE_STATUSES: ReadonlySet<string> = new Set(["active", "trialing", "past_due"]);
const TERMINAL_STATUSES: ReadonlySet<string> = new Set(["canceled", "incomplete_expired"]);
const STATUS_RANK: Record<string, number> = {
  incomplete: 0,
  trialing: 1,
  active: 2,
  past_due: 2,
  unpaid: 2,
  paused: 2,
  canceled: 3,
  incomplete_expired: 3,
};

/**
 * Whether an incoming subscription state replaces the stored one. Newer
 * event.created wins; Stripe's times are whole seconds, so within one second
 * the further-along status wins (incomplete < active < canceled), then the
 * later period, then a cancellation or resumption that changes exactly the
 * stored state (its previous_attributes say it was what is stored: it came
 * after it). A canceled subscription is final.
 */
export function supersedes(
  stored: Pick<SubscriptionRow, "status" | "stateVersion" | "currentPeriodEnd" | "cancelAtPeriodEnd">,
  incoming: {
    version: number;
    status: string;
    periodEnd: number | null;
    cancelAtPeriodEnd?: boolean;
    cancelChangedFrom?: boolean | null;
  },
): boolean {
  if (TERMINAL_STATUSES.has(stored.status)) return false;
  if (TERMINAL_STATUSES.has(incoming.status)) return true;
  if (incoming.version !== stored.stateVersion) return incoming.version > stored.stateVersion;
  const a = STATUS_RANK[incoming.status] ?? 1;
  const b = STATUS_RANK[stored.status] ?? 1;
  if (a !== b) return a > b;
  const incomingEnd = incoming.periodEnd ?? 0;
  const storedEnd = stored.currentPeriodEnd ?? 0;
  if (incomingEnd !== storedEnd) return incomingEnd > storedEnd;
  return (
    incoming.cancelChangedFrom === stored.cancelAtPeriodEnd && incoming.cancelAtPeriodEnd !== stored.cancelAtPeriodEnd
  );
}

/** The subscription that gives the user their plan: the live one whose period started last. */
export function currentSubscription(rows: Iterable<SubscriptionRow>): SubscriptionRow | null {
  const live = [...rows].filter((r) => LIVE_STATUSES.has(r.status));
  live.sort(
    (x, y) =>
      (y.currentPeriodStart ?? 0) - (x.currentPeriodStart ?? 0) ||
      y.stateVersion - x.stateVersion ||
      (x.id < y.id ? 1 : -1),
  );
  return live[0] ?? null;
}

/** The user's cached plan fields, derived from their current subscription. */
export function planFields(sub: SubscriptionRow | null) {
  const plan = sub ? findPlan(sub.planId) : undefined;
  if (!sub || !plan) {
    return {
      plan: null,
      planCredits: 0,
      planPriceCents: 0,
      planInterval: null,
      planFeatures: [] as string[],
      nextPaymentAt: null,
      stripeSubscriptionId: null,
    };
  }
  return {
    plan: plan.name,
    planCredits: plan.credits,
    planPriceCents: (sub.interval === "year" ? plan.yearlyPrice : plan.price) * 100,
    planInterval: sub.interval,
    planFeatures: plan.features,
    nextPaymentAt: sub.cancelAtPeriodEnd ? null : sub.currentPeriodEnd,
    stripeSubscriptionId: sub.id,
  };
}

export function requirePlan(planId: string): Plan {
  const plan = findPlan(planId);
  if (!plan) throw new Error(`unknown plan ${planId}`);
  return plan;
}

/** A subscription row known only from a checkout or an invoice (no subscription event yet). */
export function inferSubscription(
  w: Work,
  f: { subscriptionId: string; customerId: string; planId: PlanId; interval: BillingInterval },
  period: { start: number; end: number } | null,
): void {
  const row = w.subs.get(f.subscriptionId);
  if (!row) {
    w.subs.set(f.subscriptionId, {
      id: f.subscriptionId,
      userId: w.userId,
      customerId: f.customerId,
      planId: f.planId,
      interval: f.interval,
      status: "active",
      cancelAtPeriodEnd: false,
      currentPeriodStart: period?.start ?? null,
      currentPeriodEnd: period?.end ?? null,
      endedAt: null,
      stateVersion: 0,
      createdAt: w.now,
      updatedAt: w.now,
      windowStart: null,
      windowCredits: 0,
    });
    w.changedSubs.add(f.subscriptionId);
    return;
  }
  // A paid renewal may arrive before the subscription event announcing its period.
  if (period && !TERMINAL_STATUSES.has(row.status) && period.start > (row.currentPeriodStart ?? -1)) {
    const inferred = row.stateVersion === 0;
    w.subs.set(f.subscriptionId, {
      ...row,
      currentPeriodStart: period.start,
      currentPeriodEnd: period.end,
      ...(inferred ? { planId: f.planId, interval: f.interval } : {}),
      updatedAt: w.now,
    });
    w.changedSubs.add(f.subscriptionId);
  }
}

export function applySubscriptionState(
  w: Work,
  createdAt: number,
  f: Extract<PaymentFact, { kind: "subscription" }>,
): void {
  const row = w.subs.get(f.subscriptionId);
  const incoming = {
    version: createdAt,
    status: f.status,
    periodEnd: f.periodEnd,
    cancelAtPeriodEnd: f.cancelAtPeriodEnd,
    cancelChangedFrom: f.cancelChangedFrom,
  };
  if (row && !supersedes(row, incoming)) return;
  w.subs.set(f.subscriptionId, {
    id: f.subscriptionId,
    userId: w.userId,
    customerId: f.customerId,
    planId: f.planId,
    interval: f.interval,
    status: f.status,
    cancelAtPeriodEnd: f.cancelAtPeriodEnd,
    currentPeriodStart: f.periodStart,
    currentPeriodEnd: f.periodEnd,
    endedAt: f.endedAt,
    stateVersion: createdAt,
    createdAt: row?.createdAt ?? w.now,
    updatedAt: w.now,
    windowStart: row?.windowStart ?? null,
    windowCredits: row?.windowCredits ?? 0,
  });
  w.changedSubs.add(f.subscriptionId);
}

/** Whether a subscription had ended by `at` (its monthly grants stop then). */
export function endedBy(sub: SubscriptionRow | undefined, at: number): boolean {
  if (!sub) return false;
  const ended = sub.endedAt ?? (TERMINAL_STATUSES.has(sub.status) ? sub.updatedAt : null);
  return ended !== null && ended <= at;
}
