import type { Database } from "@db/client";
import { type PaidPeriodRow, paidPeriods, type SubscriptionRow, stripeEvents, subscriptions, users } from "@db/schema";
import { and, eq, gt, isNotNull, lte } from "drizzle-orm";
import { type BillingInterval, findPlan, type Plan, type PlanId } from "~/shared/catalog";
import { alreadyRecorded, cachedBalance, grantStatements, run, type Stmt } from "./ledger";
import { reversalStatements, undoReversalStatements } from "./reversals";

// What a verified Stripe event means for one user, as plain data (the webhook
// parses it, the user's Durable Object applies it). Every event is applied in
// ONE D1 batch: its record in stripe_events, the subscription state, the paid
// period, the ledger grant and the user's plan fields. A repeated event finds
// its record and does nothing; events arriving in any order converge on the
// state one in-order delivery gives (docs/decisions/0021-webhook-idempotency-and-ordering.md).

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
  | {
      /** A refund (cumulative fraction of the charge) or a dispute (all of it): take back unspent credits. */
      kind: "reversal";
      customerId: string | null;
      paymentIntentId: string;
      cause: "refund" | "dispute";
      /** The refund (charge id and cumulative amount) or dispute id: one reversal each. */
      ref: string;
      fraction: number;
    }
  | { kind: "reversal_undone"; customerId: string | null; paymentIntentId: string; ref: string }
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

/** The same day and time `months` calendar months later (clamped to the month's last day), in UTC. */
export function addMonthsUtc(ms: number, months: number): number {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return Date.UTC(
    y,
    m,
    Math.min(d.getUTCDate(), lastDay),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds(),
  );
}

/** When the next monthly grant of a paid period is due: yearly periods grant at the start of each of their 12 months. */
export function nextGrantAt(
  interval: BillingInterval,
  periodStart: number | null,
  periodEnd: number | null,
  monthsGranted: number,
): number | null {
  if (interval !== "year" || periodStart === null || monthsGranted >= 12) return null;
  const at = addMonthsUtc(periodStart, monthsGranted);
  return periodEnd !== null && at >= periodEnd ? null : at;
}

export function planGrantKey(invoiceId: string, month: number): string {
  return `plan:${invoiceId}:${month}`;
}

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

function requirePlan(planId: string): Plan {
  const plan = findPlan(planId);
  if (!plan) throw new Error(`unknown plan ${planId}`);
  return plan;
}

export interface Work {
  db: Database;
  userId: string;
  now: number;
  stmts: Stmt[];
  subs: Map<string, SubscriptionRow>;
  changedSubs: Set<string>;
}

/** A subscription row known only from a checkout or an invoice (no subscription event yet). */
function inferSubscription(
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

/** One paid period of a subscription as the credit rules see it. */
export interface PeriodFact {
  /** Start of the period in ms (null: recorded from a checkout before its invoice arrived, i.e. the first period). */
  start: number | null;
  /** Stripe's billing_reason: subscription_update is a plan change, anything else opens a credit window. */
  reason: string | null;
  /** The invoice total in cents after proration credits and discounts (null: not known, counted as paid). */
  total: number | null;
  /** The plan's monthly credits. */
  credits: number;
  /** Starts (ms) of the later months of a yearly period already granted by the alarm (months 1..n). */
  laterMonths: number[];
}

const paid = (total: number | null) => total === null || total > 0;

/**
 * The first-month credits a subscription's paid periods are worth together
 * (docs/decisions/0080-credits-follow-payments.md), computed from the SET of
 * periods so that every delivery order of the webhooks ends at the same figure:
 * - a new subscription or a renewal (and each later month of a yearly plan) opens a credit window worth
 *   its plan's credits, or nothing when its invoice charged nothing;
 * - a plan change whose invoice charged money joins the window it starts in and raises the window to its
 *   plan's credits if those are higher; one that charged nothing ($0 or negative: a downgrade) adds nothing;
 * - so a window never yields more than its highest paid plan, however often the plan changes.
 * Plan changes whose window's opener has not arrived yet are held together until it does; the value only
 * grows as periods arrive, so granting the growth at each arrival converges in any order.
 * Months 1..11 of a yearly plan are granted by the alarm, not here: their windows count only what a plan
 * change adds on top of them.
 */
export function firstMonthCredits(periods: PeriodFact[]): number {
  const openers: { start: number; value: number; byAlarm: boolean }[] = [];
  for (const p of periods) {
    if (p.reason !== "subscription_update") {
      openers.push({
        start: p.start ?? Number.NEGATIVE_INFINITY,
        value: paid(p.total) ? p.credits : 0,
        byAlarm: false,
      });
    }
    for (const at of p.laterMonths) openers.push({ start: at, value: p.credits, byAlarm: true });
  }
  openers.sort((a, b) => a.start - b.start);
  const windows = openers.map((o) => ({ ...o, top: o.value }));
  let orphans = 0;
  for (const p of periods) {
    if (p.reason !== "subscription_update" || !paid(p.total)) continue;
    const start = p.start ?? Number.NEGATIVE_INFINITY;
    let w: (typeof windows)[number] | undefined;
    for (const candidate of windows) if (candidate.start <= start) w = candidate;
    if (w) w.top = Math.max(w.top, p.credits);
    else orphans = Math.max(orphans, p.credits);
  }
  return windows.reduce((n, w) => n + (w.byAlarm ? w.top - w.value : w.top), orphans);
}

/**
 * What a newly recorded period grants for its first month: the growth of the subscription's
 * first-month value (firstMonthCredits) over what its periods have already granted, never below 0.
 */
export function firstMonthGrant(recorded: (PeriodFact & { granted: number })[], incoming: PeriodFact): number {
  const before = recorded.reduce((n, p) => n + p.granted, 0);
  return Math.max(0, firstMonthCredits([...recorded, incoming]) - before);
}

/** The months 1..n of a yearly period that the alarm has granted, by their start. */
function laterMonths(row: PaidPeriodRow): number[] {
  const out: number[] = [];
  for (let k = 1; k < row.monthsGranted; k++) {
    const at = nextGrantAt(row.interval, row.periodStart, row.periodEnd, k);
    if (at !== null) out.push(at);
  }
  return out;
}

/** Records a paid invoice and grants its first month of credits (once, whichever event brings it first). */
async function recordPaidPeriod(
  w: Work,
  p: {
    invoiceId: string;
    subscriptionId: string;
    planId: PlanId;
    interval: BillingInterval;
    periodStart: number | null;
    periodEnd: number | null;
    billingReason: string | null;
    total: number | null;
    paymentIntentId: string | null;
    /** A checkout names its first invoice before invoice.paid brings the invoice itself. */
    fromCheckout: boolean;
  },
): Promise<void> {
  const { db } = w;
  const existing = await db.select().from(paidPeriods).where(eq(paidPeriods.invoiceId, p.invoiceId)).get();
  if (!existing) {
    const plan = requirePlan(p.planId);
    const sub = w.subs.get(p.subscriptionId);
    const recorded = await db.select().from(paidPeriods).where(eq(paidPeriods.subscriptionId, p.subscriptionId)).all();
    const grant = firstMonthGrant(
      recorded.map((r) => ({
        start: r.periodStart,
        reason: r.billingReason,
        total: r.invoiceTotal,
        credits: r.credits,
        laterMonths: laterMonths(r),
        granted: r.firstGrant,
      })),
      {
        start: p.periodStart,
        reason: p.billingReason,
        total: p.total,
        credits: plan.credits,
        laterMonths: [],
      },
    );
    if (sub && p.billingReason !== "subscription_update" && (p.periodStart ?? 0) >= (sub.windowStart ?? 0)) {
      // Informational: the latest window this subscription opened.
      w.subs.set(sub.id, {
        ...sub,
        windowStart: p.periodStart,
        windowCredits: paid(p.total) ? plan.credits : 0,
      });
      w.changedSubs.add(sub.id);
    }
    // A period paid with nothing (a 100% discount) buys no monthly grants either; a downgrade's does.
    const unpaidNewPeriod = p.billingReason !== "subscription_update" && p.total !== null && p.total <= 0;
    w.stmts.push(
      db.insert(paidPeriods).values({
        invoiceId: p.invoiceId,
        userId: w.userId,
        subscriptionId: p.subscriptionId,
        planId: p.planId,
        interval: p.interval,
        credits: plan.credits,
        periodStart: p.periodStart,
        periodEnd: p.periodEnd,
        monthsGranted: 1,
        nextGrantAt: unpaidNewPeriod ? null : nextGrantAt(p.interval, p.periodStart, p.periodEnd, 1),
        createdAt: w.now,
        billingReason: p.billingReason,
        // A checkout only knows its session's total; the invoice's own arrives with invoice.paid.
        invoiceTotal: p.total,
        firstGrant: grant,
        paymentIntentId: p.paymentIntentId,
      }),
    );
    const key = planGrantKey(p.invoiceId, 0);
    if (grant > 0 && !(await alreadyRecorded(db, key))) {
      const what = p.billingReason === "subscription_update" ? `${plan.name} upgrade` : `${plan.name} payment`;
      w.stmts.push(
        ...grantStatements(db, w.userId, { amount: grant, source: "plan", reason: what, idempotencyKey: key }, w.now),
      );
    }
    return;
  }
  const fill: Partial<PaidPeriodRow> = {};
  if (existing.periodStart === null && p.periodStart !== null) {
    fill.periodStart = p.periodStart;
    fill.periodEnd = p.periodEnd;
    fill.nextGrantAt = nextGrantAt(existing.interval, p.periodStart, p.periodEnd, existing.monthsGranted);
  }
  if (existing.paymentIntentId === null && p.paymentIntentId) fill.paymentIntentId = p.paymentIntentId;
  if (existing.billingReason === null && p.billingReason) fill.billingReason = p.billingReason;
  // The invoice's own total replaces what the checkout session said.
  if (!p.fromCheckout && existing.invoiceTotal !== p.total) fill.invoiceTotal = p.total;
  if (fill.periodStart !== undefined && existing.billingReason !== "subscription_update") {
    // The checkout recorded this period before its dates were known: its window starts with them.
    const sub = w.subs.get(existing.subscriptionId);
    if (sub && sub.windowStart === null) {
      w.subs.set(sub.id, { ...sub, windowStart: fill.periodStart ?? null });
      w.changedSubs.add(sub.id);
    }
  }
  if (Object.keys(fill).length > 0) {
    w.stmts.push(db.update(paidPeriods).set(fill).where(eq(paidPeriods.invoiceId, p.invoiceId)));
  }
}

function applySubscriptionState(w: Work, createdAt: number, f: Extract<PaymentFact, { kind: "subscription" }>): void {
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

/** Applies one payment event for the user. Must run inside the user's Durable Object. */
export async function applyPaymentEvent(
  db: Database,
  userId: string,
  ev: PaymentEvent,
  now: number,
): Promise<ApplyResult> {
  const already = await db
    .select({ id: stripeEvents.id })
    .from(stripeEvents)
    .where(eq(stripeEvents.id, ev.eventId))
    .get();
  const user = await db.query.users.findFirst({
    where: (u, { eq }) => eq(u.id, userId),
    columns: { credits: true, stripeCustomerId: true },
  });
  if (already || !user) return { duplicate: Boolean(already), outcome: "ignored", credits: user?.credits ?? 0 };

  const rows = await db.select().from(subscriptions).where(eq(subscriptions.userId, userId)).all();
  const w: Work = { db, userId, now, stmts: [], subs: new Map(rows.map((r) => [r.id, r])), changedSubs: new Set() };
  const f = ev.fact;
  let customerId: string | null = null;
  switch (f.kind) {
    case "checkout_completed":
      customerId = f.customerId;
      inferSubscription(w, f, null);
      if (f.invoiceId) {
        await recordPaidPeriod(w, {
          ...f,
          invoiceId: f.invoiceId,
          periodStart: null,
          periodEnd: null,
          billingReason: "subscription_create",
          paymentIntentId: null,
          fromCheckout: true,
        });
      }
      break;
    case "invoice_paid":
      customerId = f.customerId;
      inferSubscription(w, f, { start: f.periodStart, end: f.periodEnd });
      await recordPaidPeriod(w, { ...f, fromCheckout: false });
      break;
    case "subscription":
      customerId = f.customerId;
      applySubscriptionState(w, ev.createdAt, f);
      break;
    case "reversal":
      customerId = f.customerId;
      w.stmts.push(...(await reversalStatements(w, f)));
      break;
    case "reversal_undone":
      customerId = f.customerId;
      w.stmts.push(...(await undoReversalStatements(w, f)));
      break;
    case "ignored":
      break;
  }

  for (const id of w.changedSubs) {
    const s = w.subs.get(id);
    if (!s) continue;
    const { id: _id, createdAt: _created, ...rest } = s;
    w.stmts.push(db.insert(subscriptions).values(s).onConflictDoUpdate({ target: subscriptions.id, set: rest }));
  }
  const derived = planFields(currentSubscription(w.subs.values()));
  w.stmts.push(
    db
      .update(users)
      .set({
        ...derived,
        ...(user.stripeCustomerId === null && customerId ? { stripeCustomerId: customerId } : {}),
        updatedAt: now,
      })
      .where(eq(users.id, userId)),
  );
  const outcome = f.kind === "ignored" ? "ignored" : "applied";
  w.stmts.push(
    db.insert(stripeEvents).values({
      id: ev.eventId,
      type: ev.type,
      userId,
      eventCreatedAt: ev.createdAt,
      outcome,
      processedAt: now,
    }),
  );
  await run(db, w.stmts);
  return { duplicate: false, outcome, credits: (await cachedBalance(db, userId)) ?? 0 };
}

/** Whether a subscription had ended by `at` (its monthly grants stop then). */
function endedBy(sub: SubscriptionRow | undefined, at: number): boolean {
  if (!sub) return false;
  const ended = sub.endedAt ?? (TERMINAL_STATUSES.has(sub.status) ? sub.updatedAt : null);
  return ended !== null && ended <= at;
}

/**
 * Whether a later paid period of the same subscription (a plan switch restarts
 * the period) had begun by `at`: the earlier period's remaining months were
 * credited back by Stripe and buy no more credits.
 */
async function supersededBy(db: Database, p: PaidPeriodRow, at: number): Promise<boolean> {
  if (p.periodStart === null) return false;
  const later = await db
    .select({ id: paidPeriods.invoiceId })
    .from(paidPeriods)
    .where(
      and(
        eq(paidPeriods.subscriptionId, p.subscriptionId),
        gt(paidPeriods.periodStart, p.periodStart),
        lte(paidPeriods.periodStart, at),
      ),
    )
    .get();
  return Boolean(later);
}

/**
 * Grants every monthly plan grant that has come due (yearly periods), catching
 * up on months missed. Each month is its own batch, keyed plan:<invoice>:<month>.
 * Returns the credits granted.
 */
export async function grantDueMonths(db: Database, userId: string, now: number): Promise<number> {
  const due = await db
    .select()
    .from(paidPeriods)
    .where(and(eq(paidPeriods.userId, userId), isNotNull(paidPeriods.nextGrantAt), lte(paidPeriods.nextGrantAt, now)))
    .all();
  let total = 0;
  for (const period of due) {
    const sub = await db.select().from(subscriptions).where(eq(subscriptions.id, period.subscriptionId)).get();
    let p: PaidPeriodRow = period;
    while (p.nextGrantAt !== null && p.nextGrantAt <= now) {
      const month = p.monthsGranted;
      if (endedBy(sub, p.nextGrantAt) || (await supersededBy(db, p, p.nextGrantAt))) {
        await db.update(paidPeriods).set({ nextGrantAt: null }).where(eq(paidPeriods.invoiceId, p.invoiceId));
        break;
      }
      const plan = requirePlan(p.planId);
      const key = planGrantKey(p.invoiceId, month);
      const next = nextGrantAt(p.interval, p.periodStart, p.periodEnd, month + 1);
      const advance = db
        .update(paidPeriods)
        .set({ monthsGranted: month + 1, nextGrantAt: next })
        .where(and(eq(paidPeriods.invoiceId, p.invoiceId), eq(paidPeriods.monthsGranted, month)));
      if (await alreadyRecorded(db, key)) await run(db, [advance]);
      else {
        await run(db, [
          ...grantStatements(
            db,
            userId,
            {
              amount: p.credits,
              source: "plan",
              reason: `${plan.name} monthly credits (month ${month + 1} of 12)`,
              idempotencyKey: key,
            },
            now,
          ),
          advance,
          // Each month of a yearly plan opens a new credit window.
          db
            .update(subscriptions)
            .set({ windowStart: p.nextGrantAt, windowCredits: p.credits })
            .where(eq(subscriptions.id, p.subscriptionId)),
        ]);
        total += p.credits;
      }
      p = { ...p, monthsGranted: month + 1, nextGrantAt: next };
    }
  }
  return total;
}
