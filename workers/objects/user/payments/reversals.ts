import type { Database } from "@db/client";
import { inList } from "@db/lists";
import { paidBy } from "@db/paid-by";
import { auditLog, creditGrants, creditLedger, paidPeriods, paymentReversals, users } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { dueNow } from "@workers/lib/reversal-facts";
import type { Stmt } from "@workers/objects/user/batch";
import { grantStatements } from "@workers/objects/user/credits/grants";
import { and, eq, like, sql } from "drizzle-orm";
import type { PaymentFact, Work } from "./types";

// Refunds and disputes (docs/decisions/0081-refunds-and-disputes.md): part of
// applying a payment event inside the user's Durable Object, in the same batch.

/** Who the audit log names for changes Stripe's events make (no admin acted). */
export const STRIPE_ACTOR = "Stripe (webhook)";

/** The grants a payment bought (every month of its paid periods), with what is left of each. */
async function grantsOfPayment(db: Database, userId: string, paymentIntentId: string) {
  const periods = await db
    .select({ invoiceId: paidPeriods.invoiceId })
    .from(paidPeriods)
    .where(and(eq(paidPeriods.userId, userId), paidBy(paymentIntentId)))
    .all();
  const grants: { id: string; amount: number; remaining: number; owed: number }[] = [];
  for (const p of periods) {
    const rows = await db
      .select({
        id: creditGrants.id,
        amount: creditGrants.amount,
        remaining: creditGrants.remaining,
        owed: creditGrants.owed,
      })
      .from(creditLedger)
      .innerJoin(creditGrants, eq(creditGrants.id, creditLedger.grantId))
      .where(and(eq(creditLedger.userId, userId), like(creditLedger.idempotencyKey, `plan:${p.invoiceId}:%`)))
      .all();
    grants.push(...rows);
  }
  return { periods: periods.map((p) => p.invoiceId), grants };
}

/**
 * A refunded or disputed payment takes back the unspent credits of what it
 * granted (docs/decisions/0081-refunds-and-disputes.md), never below zero; what
 * was already spent is recorded, shown to admins, and not taken.
 */
export async function reversalStatements(w: Work, f: Extract<PaymentFact, { kind: "reversal" }>): Promise<Stmt[]> {
  const { db, userId, now } = w;
  const existing = await db
    .select({ id: paymentReversals.id })
    .from(paymentReversals)
    .where(eq(paymentReversals.id, f.ref))
    .get();
  if (existing) return [];
  const { periods, grants } = await grantsOfPayment(db, userId, f.paymentIntentId);
  const granted = grants.reduce((n, g) => n + g.amount, 0);
  const before = await db
    .select({ due: paymentReversals.due })
    .from(paymentReversals)
    .where(and(eq(paymentReversals.paymentIntentId, f.paymentIntentId), eq(paymentReversals.userId, userId)))
    .all();
  const dueBefore = before.reduce((n, r) => n + r.due, 0);
  const due = dueNow(granted, f.fraction, dueBefore);
  const stmts: Stmt[] = [];
  let taken = 0;
  for (const g of [...grants].sort((a, b) => b.remaining - a.remaining)) {
    const part = Math.min(g.remaining, due - taken);
    if (part <= 0) continue;
    stmts.push(
      db
        .update(creditGrants)
        .set({ remaining: sql`${creditGrants.remaining} - ${part}` })
        .where(eq(creditGrants.id, g.id)),
    );
    taken += part;
  }
  // The rest was out in jobs, held or delivered: owed by the grants it came from, so what a failed job or a returned
  // result gives back later is held back rather than spent again (ADR 0339).
  let owed = 0;
  for (const g of grants) {
    const part = Math.min(g.amount - g.remaining - g.owed, due - taken - owed);
    if (part <= 0) continue;
    stmts.push(
      db
        .update(creditGrants)
        .set({ owed: sql`${creditGrants.owed} + ${part}` })
        .where(eq(creditGrants.id, g.id)),
    );
    owed += part;
  }
  const what = f.cause === "refund" ? "Payment refunded" : "Payment disputed";
  const reason = `${what}: ${taken} of ${granted} credits taken back (${due - taken} already spent)`;
  // One audit row per refund or dispute, even when everything was already spent, so admins see it.
  stmts.push(
    db.insert(auditLog).values({
      id: randomToken(),
      actorId: null,
      actorEmail: STRIPE_ACTOR,
      action: "credits.remove",
      targetUserId: userId,
      reason,
      details: {
        cause: f.cause,
        ref: f.ref,
        paymentIntentId: f.paymentIntentId,
        granted,
        due,
        taken,
        alreadySpent: due - taken,
      },
      createdAt: now,
    }),
  );
  if (taken > 0) {
    stmts.push(
      db.insert(creditLedger).values({
        id: randomToken(),
        userId,
        kind: "adjust",
        amount: -taken,
        reason,
        idempotencyKey: `reversal:${f.ref}`,
        createdAt: now,
      }),
      db
        .update(users)
        .set({ credits: sql`${users.credits} - ${taken}`, updatedAt: now })
        .where(eq(users.id, userId)),
    );
  }
  if (f.fraction >= 1 || f.cause === "dispute") {
    // Nothing more is owed for a payment that came back whole: its remaining monthly grants stop.
    for (const invoiceId of periods) {
      stmts.push(db.update(paidPeriods).set({ nextGrantAt: null }).where(eq(paidPeriods.invoiceId, invoiceId)));
    }
  }
  stmts.push(
    db.insert(paymentReversals).values({
      id: f.ref,
      userId,
      paymentIntentId: f.paymentIntentId,
      cause: f.cause,
      granted,
      due,
      taken,
      alreadySpent: due - taken,
      restoredAt: null,
      createdAt: now,
    }),
  );
  return stmts;
}

/** A dispute won: what it took back is granted again (as a new 30-day grant). */
export async function undoReversalStatements(
  w: Work,
  f: Extract<PaymentFact, { kind: "reversal_undone" }>,
): Promise<Stmt[]> {
  const { db, userId, now } = w;
  const row = await db.select().from(paymentReversals).where(eq(paymentReversals.id, f.ref)).get();
  if (!row || row.userId !== userId || row.restoredAt !== null) return [];
  // What came back into the payment's grants since and was held back is the user's again, and they owe nothing more.
  const { grants } = await grantsOfPayment(db, userId, row.paymentIntentId);
  const ids = grants.map((g) => g.id);
  const heldBack = ids.length
    ? ((
        await db
          .select({ n: sql<number>`coalesce(-sum(${creditLedger.amount}), 0)` })
          .from(creditLedger)
          .where(
            and(
              eq(creditLedger.userId, userId),
              inList(creditLedger.grantId, ids),
              like(creditLedger.idempotencyKey, "held-back:%"),
            ),
          )
          .get()
      )?.n ?? 0)
    : 0;
  const restored = row.taken + Math.min(heldBack, row.alreadySpent);
  const stmts: Stmt[] = [
    db.update(paymentReversals).set({ restoredAt: now }).where(eq(paymentReversals.id, f.ref)),
    ...(ids.length ? [db.update(creditGrants).set({ owed: 0 }).where(inList(creditGrants.id, ids))] : []),
    db.insert(auditLog).values({
      id: randomToken(),
      actorId: null,
      actorEmail: STRIPE_ACTOR,
      action: "credits.grant",
      targetUserId: userId,
      reason: `Dispute won: ${restored} credits restored`,
      details: { cause: "dispute_won", ref: f.ref, paymentIntentId: row.paymentIntentId, restored, heldBack },
      createdAt: now,
    }),
  ];
  if (restored > 0) {
    stmts.push(
      ...grantStatements(
        db,
        userId,
        {
          amount: restored,
          source: "plan",
          reason: "Dispute won: credits restored",
          idempotencyKey: `restore:${f.ref}`,
        },
        now,
      ),
    );
  }
  return stmts;
}
