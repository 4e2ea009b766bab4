import type { Database } from "@db/client";
import { stripeEvents, teamLedger, teamPaymentReversals, teams } from "@db/schema";
import { run, type Stmt } from "@workers/objects/user/batch";
import { and, eq, isNull, or, sql } from "drizzle-orm";
import type { SeatFact } from "~/shared/seat-pool";
import { grantStatements } from "./pool";

// A refunded or disputed payment for a team's seats (docs/decisions/0343-seat-payments-reversed-from-the-pool.md),
// applied in the team's turn, in one batch with the event's record: a refund takes back the refunded share of what
// that payment granted (its `period:` and `seats:` grants), a dispute all of it, as far as the pool still holds
// credits (the pool is one balance: what members already spent is recorded, not taken). A dispute won gives back
// what its dispute took, once.

type Reversal = Extract<SeatFact, { kind: "seat_reversal" | "seat_reversal_undone" }>;
/** The event's record and the answer, as seats.ts has them (a reversal tells the members nothing). */
type EventMeta = { eventId: string; type: string; createdAt: number };
type Answer = { outcome: "applied" | "ignored"; duplicate: boolean; notify: false };

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

export async function applySeatReversal(
  db: Database,
  teamId: string,
  fact: Reversal,
  event: EventMeta,
  now: number,
): Promise<Answer> {
  const [seen, teamRows] = await db.batch([
    db.select({ id: stripeEvents.id }).from(stripeEvents).where(eq(stripeEvents.id, event.eventId)),
    db.select({ credits: teams.credits }).from(teams).where(eq(teams.id, teamId)),
  ]);
  const team = teamRows[0];
  if (!team) return { outcome: "ignored", duplicate: false, notify: false };
  if (seen[0]) return { outcome: "applied", duplicate: true, notify: false };
  const writes: Stmt[] = [
    db.insert(stripeEvents).values({
      id: event.eventId,
      type: event.type,
      userId: null,
      eventCreatedAt: event.createdAt,
      outcome: "applied",
      processedAt: now,
    }),
  ];
  if (fact.kind === "seat_reversal") writes.push(...(await reversalStatements(db, teamId, team.credits, fact, now)));
  else writes.push(...(await restoreStatements(db, teamId, fact, now)));
  await run(db, writes);
  return { outcome: "applied", duplicate: false, notify: false };
}

async function reversalStatements(
  db: Database,
  teamId: string,
  pool: number,
  f: Extract<Reversal, { kind: "seat_reversal" }>,
  now: number,
): Promise<Stmt[]> {
  const [existing, before] = await db.batch([
    db.select({ id: teamPaymentReversals.id }).from(teamPaymentReversals).where(eq(teamPaymentReversals.id, f.ref)),
    db
      .select({ due: teamPaymentReversals.due })
      .from(teamPaymentReversals)
      .where(and(eq(teamPaymentReversals.teamId, teamId), eq(teamPaymentReversals.paymentIntentId, f.paymentIntentId))),
  ]);
  if (existing[0]) return [];
  const granted = await grantedBy(db, teamId, f.paymentIntentId);
  const dueBefore = before.reduce((n, r) => n + r.due, 0);
  const due = Math.max(0, Math.min(granted, Math.ceil(granted * Math.min(1, f.fraction))) - dueBefore);
  const taken = Math.min(due, pool);
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
  const row = await db.select({ taken: teamPaymentReversals.taken }).from(teamPaymentReversals).where(open).get();
  if (!row) return [];
  const reason = `Dispute won: ${row.taken} credits restored to the pool`;
  return [
    db.update(teamPaymentReversals).set({ restoredAt: now }).where(open),
    ...(row.taken > 0
      ? grantStatements(db, teamId, { amount: row.taken, key: `restore:${f.ref}`, reason, actorId: null }, now)
      : []),
  ];
}
