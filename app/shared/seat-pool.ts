// What a seat fact does to a team's pool, as plain data: the seat count (and
// so the invitation cap), whether the pool is frozen, the credits to grant and
// whom to tell. Pure, so the team's Durable Object (workers/objects/team/seats.ts)
// reads `SeatPool` from its team row, applies the fact, and writes the returned
// pool, grant and notice in one batch. Idempotent by invoice id: a fact about an
// invoice already applied changes nothing and grants nothing (the grant's key
// also makes the ledger's unique index refuse a second row). Here, not in
// workers/services, because the object applies it and objects import no service
// (docs/decisions/0291-seat-facts-applied-by-the-team-object.md).
// docs/decisions/0290-seats-billed-as-stripe-bills-seats.md

export type SeatFact =
  | {
      /** Seats changed and their proration invoice settled (always_invoice): the count to apply, the credits paid for. */
      kind: "seats_changed";
      teamId: string | null;
      customerId: string;
      subscription: string;
      quantity: number;
      previousQuantity: number;
      /** What the change cost, in cents, paid now (0 when seats were removed: Stripe keeps the unused time as a balance). */
      prorationPaidCents: number;
      invoiceId: string;
      /** Credits the seats added buy for the rest of this period (creditsForProration). */
      credits: number;
      /** Stripe's event.created, ms (every fact's `at`): orders two changes that arrive out of order. */
      at: number;
    }
  | {
      /** A period of seats paid (the first, or a renewal, or a renewal paid on a retry): the pool's grant for it. */
      kind: "period_paid";
      teamId: string | null;
      customerId: string;
      subscription: string;
      quantity: number;
      invoiceId: string;
      periodStart: number;
      periodEnd: number;
      credits: number;
      at: number;
    }
  | {
      /** A payment for the team was declined: freeze the pool (no new jobs) and tell every member. */
      kind: "payment_failed";
      teamId: string | null;
      customerId: string;
      subscription: string;
      invoiceId: string;
      amountDueCents: number;
      attemptCount: number;
      /** When Stripe tries again (ms), or null when it will not. */
      nextPaymentAttempt: number | null;
      billingReason: string | null;
      at: number;
    }
  | {
      /** The subscription's status and seats as Stripe now says: past_due (or worse) freezes, active thaws. */
      kind: "seat_status";
      teamId: string | null;
      customerId: string;
      subscription: string;
      status: string;
      quantity: number;
      at: number;
    }
  | {
      /**
       * A refund or a dispute of a payment: if it paid seats, the team's object takes back what that payment granted
       * (workers/objects/team/reversals.ts, ADR 0343); the pool itself is not this rule's.
       */
      kind: "seat_reversal";
      paymentIntentId: string;
      cause: "refund" | "dispute";
      ref: string;
      fraction: number;
      at: number;
    }
  | { kind: "seat_reversal_undone"; paymentIntentId: string; ref: string; at: number }
  | { kind: "ignored"; why: string };

/** Statuses under which a team's pool takes no new jobs (its credits are kept). */
export const FROZEN_STATUSES: ReadonlySet<string> = new Set(["past_due", "unpaid", "incomplete", "paused"]);

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

/** What a fact about an invoice is remembered by in `SeatPool.invoices` (null: facts not about one invoice). */
export function seatFactKey(fact: SeatFact): string | null {
  if (fact.kind === "payment_failed") return `failed:${fact.invoiceId}`;
  if (fact.kind === "period_paid" || fact.kind === "seats_changed") return fact.invoiceId;
  return null;
}

export function applySeatFact(pool: SeatPool, fact: SeatFact): SeatOutcome {
  const same = { pool, grant: null, notice: null };
  if (fact.kind === "ignored" || fact.kind === "seat_reversal" || fact.kind === "seat_reversal_undone")
    return { ...same, duplicate: false };

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

  const key = seatFactKey(fact) ?? fact.invoiceId;
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
  // Paying the declined invoice (a retry that went through) thaws the pool, as of the payment: a status sent before
  // it (the decline's past_due) that arrives later is older and does not freeze it again.
  const recovered = pool.frozen && pool.failedInvoice === fact.invoiceId;
  const grant =
    fact.credits > 0
      ? { credits: fact.credits, key: `${fact.kind === "seats_changed" ? "seats" : "period"}:${fact.invoiceId}` }
      : null;
  return {
    pool: recovered
      ? {
          ...pool,
          invoices,
          seats,
          seatsAt,
          frozen: false,
          frozenAt: Math.max(pool.frozenAt, fact.at),
          failedInvoice: null,
        }
      : { ...pool, invoices, seats, seatsAt },
    grant,
    notice: recovered ? { kind: "payment_recovered" } : null,
    duplicate: false,
  };
}
