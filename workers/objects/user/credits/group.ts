import type { Database } from "@db/client";
import { inList } from "@db/lists";
import { type Allocation, creditGrants, creditLedger, creditReservations } from "@db/schema";
import { run, type Stmt } from "@workers/objects/user/batch";
import { eq, sql } from "drizzle-orm";
import { balanceDelta, expireGrants, insufficient, type LedgerResult, ledgerRow, userNotFound } from "./ledger-rows";
import { type CreditView, loadView, toView, viewQueries } from "./view";

// Group commit of reservations (docs/decisions/0135-ledger-group-commit.md).
//
// The user's object keeps its own view of the balance and the open grants while
// it lives. It is exact because the object is the only writer of that user's
// credits: the view is loaded from D1 on first use, advanced only after a
// group's batch has been written or read at the end of a grant's own batch
// (runAndView), and dropped after any other change and after any failed write
// (the next group loads it again).

/** Reservations decided together and written in one D1 batch, at most. */
export const MAX_GROUP = 100;
/** A reservation row binds 6 parameters, a reserve ledger row 8 (the rest are defaults). */
const RESERVATION_ROWS_PER_INSERT = 15;
const LEDGER_ROWS_PER_INSERT = 12;

export interface ReserveRequest {
  key: string;
  amount: number;
  reason: string;
  /** Written in the same batch as this reservation, only if it is taken (e.g. the job row). */
  writes?: Stmt[];
}

export type ReserveAnswer = LedgerResult<{ status: "held" | "committed" | "refunded" }>;

/** The query (none for no keys) for the status of each of `unique` (distinct keys) that is already reserved. */
function keyStatusQueries(db: Database, unique: string[]) {
  if (unique.length === 0) return [];
  // The keys as one parameter (db/lists.ts): D1 binds at most 100 values a statement.
  return [
    db
      .select({ key: creditReservations.key, status: creditReservations.status })
      .from(creditReservations)
      .where(inList(creditReservations.key, unique)),
  ];
}

/**
 * In one D1 round trip: the status of every key already reserved and, when
 * `view` is null, the view itself (`undefined` then means the user does not exist).
 */
async function lookUp(
  db: Database,
  userId: string,
  keys: string[],
  view: CreditView | null,
): Promise<{ existing: Map<string, ReserveStatus>; view: CreditView | null }> {
  const keyQueries = keyStatusQueries(db, [...new Set(keys)]);
  const queries = [...(view ? [] : viewQueries(db, userId)), ...keyQueries];
  const results = await run(db, [], queries);
  const keyRows = results.slice(view ? 0 : 2) as { key: string; status: ReserveStatus }[][];
  const existing = new Map(keyRows.flat().map((r) => [r.key, r.status]));
  if (view) return { existing, view };
  return {
    existing,
    view: toView(results[0] as { credits: number }[], results[1] as CreditView["grants"]),
  };
}

type ReserveStatus = "held" | "committed" | "refunded";

/**
 * Decides `requests` in order against `view` (no I/O): each takes its credits
 * from the grants that expire first or is refused; a key already known (in D1
 * or earlier in the group) gets that reservation's status. Returns one answer
 * per request, the statements that write the taken ones (each its reservation
 * row and ledger row; each grant and users.credits updated once), and the view
 * once those statements are written.
 */
export function decideReservations(
  db: Database,
  userId: string,
  view: CreditView,
  requests: ReserveRequest[],
  existing: Map<string, ReserveStatus>,
  now: number,
): { answers: ReserveAnswer[]; stmts: Stmt[]; next: CreditView } {
  const grants = view.grants.filter((g) => g.expiresAt > now).map((g) => ({ ...g }));
  const known = new Map(existing);
  const spent = new Map<string, number>();
  const answers: ReserveAnswer[] = [];
  const rows: Stmt[] = [];
  const reservationRows: (typeof creditReservations.$inferInsert)[] = [];
  const ledgerRows: (typeof creditLedger.$inferInsert)[] = [];
  let balance = view.balance;
  for (const req of requests) {
    const status = known.get(req.key);
    if (status) {
      answers.push({ ok: true, status, balance });
      continue;
    }
    const allocations: Allocation[] = [];
    let left = req.amount;
    for (const g of grants) {
      if (left === 0) break;
      const take = Math.min(g.remaining, left);
      if (take > 0) allocations.push({ grantId: g.id, amount: take });
      left -= take;
    }
    if (left > 0) {
      answers.push(insufficient(balance));
      continue;
    }
    for (const a of allocations) {
      const g = grants.find((x) => x.id === a.grantId);
      if (g) g.remaining -= a.amount;
      spent.set(a.grantId, (spent.get(a.grantId) ?? 0) + a.amount);
    }
    balance -= req.amount;
    known.set(req.key, "held");
    reservationRows.push({ key: req.key, userId, amount: req.amount, allocations, status: "held", createdAt: now });
    ledgerRows.push(
      ledgerRow(userId, "reserve", -req.amount, req.reason, `reserve:${req.key}`, now, { reservationKey: req.key }),
    );
    rows.push(...(req.writes ?? []));
    answers.push({ ok: true, status: "held", balance });
  }
  // Many rows per INSERT (fewer statements to run), within D1's 100 bound parameters per statement.
  for (let i = 0; i < reservationRows.length; i += RESERVATION_ROWS_PER_INSERT) {
    rows.unshift(db.insert(creditReservations).values(reservationRows.slice(i, i + RESERVATION_ROWS_PER_INSERT)));
  }
  for (let i = 0; i < ledgerRows.length; i += LEDGER_ROWS_PER_INSERT) {
    rows.unshift(db.insert(creditLedger).values(ledgerRows.slice(i, i + LEDGER_ROWS_PER_INSERT)));
  }
  const taken = view.balance - balance;
  const stmts =
    taken === 0
      ? []
      : [
          ...[...spent].map(([grantId, amount]) =>
            db
              .update(creditGrants)
              .set({ remaining: sql`${creditGrants.remaining} - ${amount}` })
              .where(eq(creditGrants.id, grantId)),
          ),
          ...rows,
          balanceDelta(db, userId, -taken, now),
        ];
  return { answers, stmts, next: { balance, grants: grants.filter((g) => g.remaining > 0) } };
}

/**
 * Reserves for every request in one D1 batch (see decideReservations), from
 * `view` or, when null, from a fresh load. Returns the answers and the view
 * after the write; throws when the batch fails, having written nothing (the
 * caller drops its view). Grants due to expire are expired first, as
 * `reserve` does.
 */
export async function reserveGroup(
  db: Database,
  userId: string,
  view: CreditView | null,
  requests: ReserveRequest[],
  now: number,
  opts: {
    /** Set after an optimistic batch failed: decide from D1 this time. */
    fromD1?: boolean;
    /** Queries run at the end of the group's write batch; their results come back as `read` once it is written. */
    reads?: readonly Stmt[];
  } = {},
): Promise<{ answers: ReserveAnswer[]; view: CreditView | null; wrote: boolean; expired: boolean; read?: unknown[] }> {
  const { fromD1 = false, reads = [] } = opts;
  for (const r of requests) {
    if (!Number.isInteger(r.amount) || r.amount <= 0) throw new Error("reserve amount must be a positive integer");
  }
  if (requests.length === 0) return { answers: [], view, wrote: false, expired: false };
  if (view === null && !fromD1) {
    // Load the view alone (two reads, no key look-up) and decide optimistically as below; a user that does not
    // exist or a grant due to expire takes the full path.
    const loaded = await loadView(db, userId);
    if (loaded && !loaded.grants.some((g) => g.expiresAt <= now))
      return reserveGroup(db, userId, loaded, requests, now, { reads });
  }
  if (view && !fromD1 && !view.grants.some((g) => g.expiresAt <= now)) {
    // With a view in hand, decide as if no key were known yet, and write in the same batch that asks
    // for the keys it refused. A taken key is inserted: one that exists (its reservation row or ledger
    // row) makes the atomic batch fail, having written nothing, and the group is decided again below
    // from D1. A refused key might be a repeat of a held one: its status, read in the same batch,
    // answers it instead (it took nothing, so no other request's decision depends on it).
    const optimistic = decideReservations(db, userId, view, requests, new Map(), now);
    const refused = [...new Set(requests.filter((_, i) => !optimistic.answers[i]?.ok).map((r) => r.key))];
    const queries = keyStatusQueries(db, refused);
    try {
      const results = await run(db, optimistic.stmts, [...queries, ...reads]);
      const found = new Map(
        (results.slice(0, queries.length) as { key: string; status: ReserveStatus }[][])
          .flat()
          .map((r) => [r.key, r.status]),
      );
      const answers = optimistic.answers.map((a, i): ReserveAnswer => {
        const status = a.ok ? undefined : found.get(requests[i]?.key ?? "");
        return status ? { ok: true, status, balance: a.balance } : a;
      });
      return {
        answers,
        view: optimistic.next,
        wrote: optimistic.stmts.length > 0,
        expired: false,
        read: results.slice(queries.length),
      };
    } catch {
      return reserveGroup(db, userId, null, requests, now, { fromD1: true, reads });
    }
  }
  const { existing, view: loaded } = await lookUp(
    db,
    userId,
    requests.map((r) => r.key),
    view,
  );
  let current = loaded;
  if (current === null) {
    const answers = requests.map((r): ReserveAnswer => {
      const status = existing.get(r.key);
      return status ? { ok: true, status, balance: 0 } : userNotFound();
    });
    return { answers, view: null, wrote: false, expired: false };
  }
  const expired = current.grants.some((g) => g.expiresAt <= now);
  if (expired) {
    await expireGrants(db, userId, now);
    current = await loadView(db, userId);
    if (current === null) throw new Error("The user's view vanished after expiring grants.");
  }
  const { answers, stmts, next } = decideReservations(db, userId, current, requests, existing, now);
  const read = await run(db, stmts, reads);
  return { answers, view: next, wrote: stmts.length > 0, expired, read };
}
