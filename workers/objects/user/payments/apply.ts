import type { Database } from "@db/client";
import { stripeEvents, subscriptions, users } from "@db/schema";
import { recordEvent } from "@db/stripe-events";
import { run } from "@workers/objects/user/batch";
import { cachedBalance } from "@workers/objects/user/credits/view";
import { eq } from "drizzle-orm";
import { recordPaidPeriod } from "./periods";
import { reversalStatements, undoReversalStatements } from "./reversals";
import { applySubscriptionState, currentSubscription, inferSubscription, planFields } from "./subscriptions";
import type { ApplyResult, PaymentEvent, Work } from "./types";

// What a verified Stripe event means for one user, as plain data (the webhook
// parses it, the user's Durable Object applies it). Every event is applied in
// ONE D1 batch: its record in stripe_events, the subscription state, the paid
// period, the ledger grant and the user's plan fields. A repeated event finds
// its record and does nothing; events arriving in any order converge on the
// state one in-order delivery gives (docs/decisions/0021-webhook-idempotency-and-ordering.md).

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
  w.stmts.push(recordEvent(db, ev, outcome, now, userId));
  await run(db, w.stmts);
  return { duplicate: false, outcome, credits: (await cachedBalance(db, userId)) ?? 0 };
}
