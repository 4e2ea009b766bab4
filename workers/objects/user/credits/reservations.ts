import type { Database } from "@db/client";
import { creditLedger, creditReservations } from "@db/schema";
import { type Along, run, type Stmt } from "@workers/objects/user/batch";
import { and, eq, lte } from "drizzle-orm";
import {
  allocate,
  balanceDelta,
  expireGrants,
  giveBack,
  insufficient,
  type LedgerResult,
  ledgerRow,
  RESERVATION_TIMEOUT_MS,
  refusal,
  spendFromGrants,
  userNotFound,
} from "./ledger-rows";
import { balanceQuery, cachedBalance } from "./view";

// A job's credit: reserved before the provider call, committed when the result
// is delivered, refunded on any failure or timeout (docs/decisions/0020-credit-ledger.md).
// Reservations decided many at a time are in group.ts.

export async function reserve(
  db: Database,
  userId: string,
  key: string,
  amount: number,
  reason: string,
  now: number,
  along: Along = {},
): Promise<LedgerResult<{ status: "held" | "committed" | "refunded" }>> {
  if (!Number.isInteger(amount) || amount <= 0) throw new Error("reserve amount must be a positive integer");
  const existing = await db.select().from(creditReservations).where(eq(creditReservations.key, key)).get();
  if (existing) {
    return { ok: true, status: existing.status, balance: (await cachedBalance(db, userId)) ?? 0 };
  }
  if ((await cachedBalance(db, userId)) === null) return userNotFound();
  await expireGrants(db, userId, now);
  const balance = (await cachedBalance(db, userId)) ?? 0;
  const allocations = await allocate(db, userId, amount, now);
  if (!allocations) return insufficient(balance);
  await run(db, [
    ...spendFromGrants(db, allocations),
    db.insert(creditReservations).values({ key, userId, amount, allocations, status: "held", createdAt: now }),
    db
      .insert(creditLedger)
      .values(ledgerRow(userId, "reserve", -amount, reason, `reserve:${key}`, now, { reservationKey: key })),
    balanceDelta(db, userId, -amount, now),
    ...(along.writes ?? []),
  ]);
  return { ok: true, status: "held", balance: balance - amount };
}

/** A reservation still held, as read before settling it. */
export interface Held {
  reservation: typeof creditReservations.$inferSelect;
  balance: number;
}

/**
 * The reservation `key` of this user while it is still held, with the balance; otherwise the answer to give at
 * once: not found, or already settled (ok only when it was settled the same way, so a repeated commit or refund is
 * a no-op).
 */
export async function findHeld(
  db: Database,
  userId: string,
  key: string,
  as: "committed" | "refunded",
): Promise<{ held: Held; settled?: undefined } | { held?: undefined; settled: LedgerResult<{ status: string }> }> {
  const [reservationRows, balanceRows] = await db.batch([
    db.select().from(creditReservations).where(eq(creditReservations.key, key)),
    balanceQuery(db, userId),
  ]);
  const r = reservationRows[0];
  const balance = balanceRows[0]?.credits ?? 0;
  if (!r || r.userId !== userId) return { settled: refusal("not_found", "Reservation not found", balance) };
  if (r.status !== "held") {
    const settled: LedgerResult<{ status: string }> =
      r.status === as
        ? { ok: true, status: r.status, balance }
        : { ...refusal("conflict", `The reservation was already ${r.status}.`, balance), status: r.status };
    return { settled };
  }
  return { held: { reservation: r, balance } };
}

/** Settles a held reservation as spent, with what the change writes and reads along. */
export async function commit(
  db: Database,
  userId: string,
  key: string,
  now: number,
  along: Along = {},
): Promise<LedgerResult<{ status: string; read: unknown[] }>> {
  const found = await findHeld(db, userId, key, "committed");
  return found.settled ? { ...found.settled, read: [] } : commitHeld(db, userId, found.held, now, along);
}

/** commit, for a reservation the caller has read with findHeld (and nothing has settled since: same object turn). */
export async function commitHeld(
  db: Database,
  userId: string,
  held: Held,
  now: number,
  along: Along = {},
): Promise<LedgerResult<{ status: string; read: unknown[] }>> {
  const writes = [...commitStatements(db, userId, held.reservation.key, now), ...(along.writes ?? [])];
  return { ok: true, status: "committed", balance: held.balance, read: await run(db, writes, along.reads) };
}

/**
 * What settles a held reservation as spent. Written after its reservation in one batch, it spends a credit at once
 * (a kept result, workers/objects/user/jobs/keep.ts): nothing can stay held between the two.
 */
export function commitStatements(db: Database, userId: string, key: string, now: number): Stmt[] {
  return [
    db
      .update(creditReservations)
      .set({ status: "committed", settledAt: now })
      .where(and(eq(creditReservations.key, key), eq(creditReservations.status, "held"))),
    db
      .insert(creditLedger)
      .values(ledgerRow(userId, "commit", 0, "Image delivered", `commit:${key}`, now, { reservationKey: key })),
  ];
}

/** Gives a held reservation's credits back to the grants they came from, with what the change writes along. */
export async function refund(
  db: Database,
  userId: string,
  key: string,
  reason: string,
  now: number,
  along: Along = {},
): Promise<LedgerResult<{ status: string }>> {
  const { held, settled } = await findHeld(db, userId, key, "refunded");
  if (settled) return settled;
  const r = held.reservation;
  // Less what a reversed payment's grants owe (ADR 0339).
  const back = await giveBack(db, userId, r.allocations, `refund:${key}`, now);
  await run(db, [
    ...back.writes,
    db
      .update(creditReservations)
      .set({ status: "refunded", settledAt: now })
      .where(and(eq(creditReservations.key, key), eq(creditReservations.status, "held"))),
    db
      .insert(creditLedger)
      .values(ledgerRow(userId, "refund", r.amount, reason, `refund:${key}`, now, { reservationKey: key })),
    balanceDelta(db, userId, back.given, now),
    ...(along.writes ?? []),
  ]);
  // A refund into a grant that expired meanwhile is expired again at once.
  await expireGrants(db, userId, now);
  return { ok: true, status: "refunded", balance: (await cachedBalance(db, userId)) ?? 0 };
}

/** Reservations held longer than the timeout: their job died, so the credit goes back. */
export async function staleReservationKeys(db: Database, userId: string, now: number): Promise<string[]> {
  const rows = await db
    .select({ key: creditReservations.key })
    .from(creditReservations)
    .where(
      and(
        eq(creditReservations.userId, userId),
        eq(creditReservations.status, "held"),
        lte(creditReservations.createdAt, now - RESERVATION_TIMEOUT_MS),
      ),
    )
    .all();
  return rows.map((r) => r.key);
}
