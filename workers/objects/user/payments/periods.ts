import type { Database } from "@db/client";
import { type PaidPeriodRow, paidPeriods, subscriptions } from "@db/schema";
import { run } from "@workers/objects/user/batch";
import { grantStatements } from "@workers/objects/user/credits/grants";
import { alreadyRecorded } from "@workers/objects/user/credits/ledger-rows";
import { and, eq, gt, isNotNull, lte } from "drizzle-orm";
import type { BillingInterval, PlanId } from "~/shared/catalog";
import { endedBy, requirePlan } from "./subscriptions";
import type { Work } from "./types";

// Paid periods: what each paid invoice grants (credits follow money actually
// paid, docs/decisions/0080-credits-follow-payments.md), and the monthly grants
// of yearly plans, made by the alarm as they come due.

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
export async function recordPaidPeriod(
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
