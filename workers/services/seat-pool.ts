import { FROZEN_STATUSES, type SeatFact } from "./seat-events";

// What a seat fact does to a team's pool, as plain data: the seat count (and
// so the invitation cap), whether the pool is frozen, the credits to grant and
// whom to tell. Pure, so the team's Durable Object stores `SeatPool` wherever
// it keeps its state and applies the returned grant and notice in the same
// write. Idempotent by invoice id: a fact about an invoice already applied
// changes nothing and grants nothing (the grant's key also makes a ledger's
// unique index refuse a second row).
// docs/decisions/0290-seats-billed-as-stripe-bills-seats.md

export interface SeatPool {
  seats: number;
  /** When the seat count was last set (ms of the Stripe object that set it): older facts do not undo newer ones. */
  seatsAt: number;
  /** No new jobs while frozen; the pool's credits stay as they are. */
  frozen: boolean;
  /** When `frozen` was last set (ms). */
  frozenAt: number;
  /** The declined invoice that froze the pool: paying it thaws the pool. */
  failedInvoice: string | null;
  /** Invoices already applied (grants and notices are once per invoice). */
  invoices: string[];
}

export const EMPTY_POOL: SeatPool = {
  seats: 0,
  seatsAt: 0,
  frozen: false,
  frozenAt: 0,
  failedInvoice: null,
  invoices: [],
};

export type SeatNotice =
  | { kind: "payment_failed"; invoiceId: string; amountDueCents: number; nextPaymentAttempt: number | null }
  | { kind: "payment_recovered" };

export interface SeatOutcome {
  pool: SeatPool;
  /** Credits for the team's ledger, once, under `key`. */
  grant: { credits: number; key: string } | null;
  /** What every member is told (by the team's mail and its live channel). */
  notice: SeatNotice | null;
  duplicate: boolean;
}

export function applySeatFact(pool: SeatPool, fact: SeatFact): SeatOutcome {
  const same = { pool, grant: null, notice: null };
  if (fact.kind === "ignored") return { ...same, duplicate: false };

  if (fact.kind === "seat_status") {
    const frozen = FROZEN_STATUSES.has(fact.status);
    if (fact.at < pool.frozenAt || frozen === pool.frozen) return { ...same, duplicate: false };
    return {
      pool: { ...pool, frozen, frozenAt: fact.at, failedInvoice: frozen ? pool.failedInvoice : null },
      grant: null,
      notice: frozen ? null : { kind: "payment_recovered" },
      duplicate: false,
    };
  }

  const key = fact.kind === "payment_failed" ? `failed:${fact.invoiceId}` : fact.invoiceId;
  if (pool.invoices.includes(key)) return { ...same, duplicate: true };
  const invoices = [...pool.invoices, key];

  if (fact.kind === "payment_failed") {
    return {
      pool: {
        ...pool,
        invoices,
        frozen: true,
        frozenAt: Math.max(pool.frozenAt, fact.at),
        failedInvoice: fact.invoiceId,
      },
      grant: null,
      notice: {
        kind: "payment_failed",
        invoiceId: fact.invoiceId,
        amountDueCents: fact.amountDueCents,
        nextPaymentAttempt: fact.nextPaymentAttempt,
      },
      duplicate: false,
    };
  }

  const newer = fact.at >= pool.seatsAt;
  const seats = newer ? fact.quantity : pool.seats;
  const seatsAt = newer ? fact.at : pool.seatsAt;
  // Paying the declined invoice (a retry that went through) thaws the pool.
  const recovered = pool.frozen && pool.failedInvoice === fact.invoiceId;
  const grant =
    fact.credits > 0
      ? { credits: fact.credits, key: `${fact.kind === "seats_changed" ? "seats" : "period"}:${fact.invoiceId}` }
      : null;
  return {
    pool: recovered
      ? { ...pool, invoices, seats, seatsAt, frozen: false, failedInvoice: null }
      : { ...pool, invoices, seats, seatsAt },
    grant,
    notice: recovered ? { kind: "payment_recovered" } : null,
    duplicate: false,
  };
}
