import type { Database } from "@db/client";
import { teamLedger, teamPaymentReversals, teamReservations } from "@db/schema";
import { dueNow } from "@workers/lib/reversal-facts";
import type { Stmt } from "@workers/objects/user/batch";
import { and, eq, isNull, or, sql } from "drizzle-orm";
import type { SeatFact } from "~/shared/seat-pool";
import { outUnclaimed } from "./held-back";
import { grantStatements } from "./pool";

// A refunded or disputed payment for a team's seats (docs/decisions/0343-seat-payments-reversed-from-the-pool.md),
// applied in the team's turn, in one batch with the event's record (seats.ts): a refund takes back the refunded share of what
// that payment granted (its `period:` and `seats:` grants), a dispute all of it, as far as the pool still holds
// credits (the pool is one balance: what members already spent is recorded, not taken). What members' jobs held at
// that moment is owed: credits coming back from them are kept (held-back.ts, ADR 0349). A dispute won gives back
// what its dispute took and held back, once.

type Reversal = Extract<SeatFact, { kind: "seat_reversal" | "seat_reversal_undone" }>;

/** The credits the payment's invoices granted the pool. */
async function grantedBy(db: Database, teamId: string, paymentIntentId: string): Promise<number> {
  const paid = (prefix: string) =>
    sql`${teamLedger.idempotencyKey} IN (SELECT ${prefix} || ip.invoice_id FROM invoice_payments ip WHERE ip.payment_intent_id = ${paymentIntentId})`;
  const row = await db
    .select({ n: sql<number>`coalesce(sum(${teamLedger.amount}), 0)` })
    .from(teamLedger)
    .where(and(eq(teamLedger.teamId, teamId), eq(teamLedger.kind, "grant"), or(paid("period:"), paid("seats:"))))
    .get();
  return Number(row?.n ?? 0);
}

/** What a reversal (or a dispute won) writes, in the batch that records its event (seats.ts, applySeats). */
export async function reversalStatements(
  db: Database,
  team: { id: string; credits: number },
  fact: Reversal,
  now: number,
): Promise<Stmt[]> {
  return fact.kind === "seat_reversal"
    ? takeBackStatements(db, team.id, team.credits, fact, now)
    : restoreStatements(db, team.id, fact, now);
}

async function takeBackStatements(
  db: Database,
  teamId: string,
  pool: number,
  f: Extract<Reversal, { kind: "seat_reversal" }>,
  now: number,
): Promise<Stmt[]> {
  const [existing, before, out, owedBefore] = await db.batch([
    db.select({ id: teamPaymentReversals.id }).from(teamPaymentReversals).where(eq(teamPaymentReversals.id, f.ref)),
    db
      .select({ due: teamPaymentReversals.due })
      .from(teamPaymentReversals)
      .where(and(eq(teamPaymentReversals.teamId, teamId), eq(teamPaymentReversals.paymentIntentId, f.paymentIntentId))),
    // What members' jobs hold now: the part of the due it cannot take that may come back (ADR 0349).
    db
      .select({ at: teamReservations.createdAt, amount: teamReservations.amount })
      .from(teamReservations)
      .where(and(eq(teamReservations.teamId, teamId), eq(teamReservations.status, "held"))),
    // Of which earlier reversals still count as owed what they have not held back yet, from the jobs out before them.
    db
      .select({
        at: teamPaymentReversals.createdAt,
        left: sql<number>`${teamPaymentReversals.owed} - ${teamPaymentReversals.heldBack}`,
      })
      .from(teamPaymentReversals)
      .where(
        and(
          eq(teamPaymentReversals.teamId, teamId),
          isNull(teamPaymentReversals.restoredAt),
          sql`${teamPaymentReversals.heldBack} < ${teamPaymentReversals.owed}`,
        ),
      ),
  ]);
  if (existing[0]) return [];
  const granted = await grantedBy(db, teamId, f.paymentIntentId);
  const dueBefore = before.reduce((n, r) => n + r.due, 0);
  const due = dueNow(granted, f.fraction, dueBefore);
  const taken = Math.min(due, pool);
  const owed = Math.min(due - taken, outUnclaimed(out, owedBefore));
  const what = f.cause === "refund" ? "Seat payment refunded" : "Seat payment disputed";
  const reason = `${what}: ${taken} of ${granted} credits taken back from the pool (${due - taken} already spent)`;
  return [
    db.insert(teamPaymentReversals).values({
      id: f.ref,
      teamId,
      paymentIntentId: f.paymentIntentId,
      cause: f.cause,
      granted,
      due,
      taken,
      owed,
      heldBack: 0,
      restoredAt: null,
      createdAt: now,
    }),
    ...(taken > 0
      ? grantStatements(
          db,
          teamId,
          { amount: -taken, key: `reversal:${f.ref}`, reason, actorId: null, kind: "adjust" },
          now,
        )
      : []),
  ];
}

async function restoreStatements(
  db: Database,
  teamId: string,
  f: Extract<Reversal, { kind: "seat_reversal_undone" }>,
  now: number,
): Promise<Stmt[]> {
  // The dispute's own reversal (its ref is the dispute's id), while it has not been restored.
  const open = and(
    eq(teamPaymentReversals.id, f.ref),
    eq(teamPaymentReversals.teamId, teamId),
    eq(teamPaymentReversals.cause, "dispute"),
    isNull(teamPaymentReversals.restoredAt),
  );
  const row = await db
    .select({ taken: teamPaymentReversals.taken, heldBack: teamPaymentReversals.heldBack })
    .from(teamPaymentReversals)
    .where(open)
    .get();
  if (!row) return [];
  // What it took, and what it held back since from failed jobs and returned results (ADR 0349).
  const restored = row.taken + row.heldBack;
  const reason = `Dispute won: ${restored} credits restored to the pool`;
  return [
    db.update(teamPaymentReversals).set({ restoredAt: now }).where(open),
    ...(restored > 0
      ? grantStatements(db, teamId, { amount: restored, key: `restore:${f.ref}`, reason, actorId: null }, now)
      : []),
  ];
}
