import type { Database } from "@db/client";
import { inList } from "@db/lists";
import { type Allocation, creditGrants, creditLedger, users } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { run, type Stmt } from "@workers/objects/user/batch";
import { and, asc, eq, gt, lte, sql } from "drizzle-orm";
import type { FailureCode } from "~/shared/result";

// The ledger's primitives: its limits, the shape of its answers, and the rows
// and statements every credit operation is made of (grants.ts, reservations.ts,
// group.ts). Each operation is one atomic D1 batch whose CHECK constraints
// (credits >= 0, remaining >= 0) make a wrong computation fail instead of going
// negative. docs/decisions/0020-credit-ledger.md

export const GRANT_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;
export const RESERVATION_TIMEOUT_MS = 10 * 60 * 1000;
export const INSUFFICIENT_CREDITS = "Insufficient credits";
export const USER_NOT_FOUND = "User not found";

/** A refusal of the object: one of the project's failure codes (app/shared/result.ts) and what the person reads. */
export interface Refusal {
  ok: false;
  code: FailureCode;
  error: string;
  balance: number;
  /** A rate limit's wait, in seconds (workers/http/result.ts sends it as Retry-After). */
  retryAfterSeconds?: number;
}

/** An answer of the ledger: what it did, or a refusal (which may carry what it found, e.g. a settled status). */
export type LedgerResult<T = object> = ({ ok: true; balance: number } & T) | (Refusal & Partial<T>);

export function refusal(code: FailureCode, error: string, balance: number): Refusal {
  return { ok: false, code, error, balance };
}

export const userNotFound = (): Refusal => refusal("not_found", USER_NOT_FOUND, 0);
export const insufficient = (balance: number): Refusal =>
  refusal("insufficient_credits", INSUFFICIENT_CREDITS, balance);

export function ledgerRow(
  userId: string,
  kind: (typeof creditLedger.$inferInsert)["kind"],
  amount: number,
  reason: string,
  idempotencyKey: string,
  now: number,
  extra: Partial<typeof creditLedger.$inferInsert> = {},
) {
  return { id: randomToken(), userId, kind, amount, reason, idempotencyKey, createdAt: now, ...extra };
}

export function balanceDelta(db: Database, userId: string, delta: number, now: number): Stmt {
  return db
    .update(users)
    .set({ credits: sql`${users.credits} + ${delta}`, updatedAt: now })
    .where(eq(users.id, userId));
}

/** The ledger row already written under an idempotency key, if any, as a query to run alone or in a batch. */
export function recordedQuery(db: Database, idempotencyKey: string) {
  return db
    .select({ id: creditLedger.id, amount: creditLedger.amount })
    .from(creditLedger)
    .where(eq(creditLedger.idempotencyKey, idempotencyKey));
}

export async function alreadyRecorded(db: Database, idempotencyKey: string): Promise<boolean> {
  return Boolean(await recordedQuery(db, idempotencyKey).get());
}

/** Expires every grant of the user whose time has come. Returns the credits removed. */
export async function expireGrants(db: Database, userId: string, now: number): Promise<number> {
  const due = await db
    .select()
    .from(creditGrants)
    .where(and(eq(creditGrants.userId, userId), gt(creditGrants.remaining, 0), lte(creditGrants.expiresAt, now)))
    .all();
  if (due.length === 0) return 0;
  const stmts: Stmt[] = [];
  let total = 0;
  for (const g of due) {
    total += g.remaining;
    stmts.push(
      db
        .update(creditGrants)
        .set({ remaining: 0 })
        .where(and(eq(creditGrants.id, g.id), eq(creditGrants.remaining, g.remaining))),
      db.insert(creditLedger).values(
        ledgerRow(userId, "expire", -g.remaining, "Credits expired", `expire:${g.id}:${now}:${randomToken(8)}`, now, {
          grantId: g.id,
        }),
      ),
    );
  }
  stmts.push(balanceDelta(db, userId, -total, now));
  await run(db, stmts);
  return total;
}

/** Takes `amount` from the grants that expire first. Null when the balance is short. */
export async function allocate(
  db: Database,
  userId: string,
  amount: number,
  now: number,
): Promise<Allocation[] | null> {
  const open = await db
    .select({ id: creditGrants.id, remaining: creditGrants.remaining })
    .from(creditGrants)
    .where(and(eq(creditGrants.userId, userId), gt(creditGrants.remaining, 0), gt(creditGrants.expiresAt, now)))
    .orderBy(asc(creditGrants.expiresAt), asc(creditGrants.createdAt))
    .all();
  const allocations: Allocation[] = [];
  let left = amount;
  for (const g of open) {
    if (left === 0) break;
    const take = Math.min(g.remaining, left);
    allocations.push({ grantId: g.id, amount: take });
    left -= take;
  }
  return left === 0 ? allocations : null;
}

export function spendFromGrants(db: Database, allocations: Allocation[]): Stmt[] {
  return allocations.map((a) =>
    db
      .update(creditGrants)
      .set({ remaining: sql`${creditGrants.remaining} - ${a.amount}` })
      .where(eq(creditGrants.id, a.grantId)),
  );
}

// Credits that come back to their grants (a failed job's refund, a returned result) after the payment that bought
// them was refunded or disputed (docs/decisions/0339-credits-of-a-reversed-payment-do-not-come-back.md). The
// reversal took what was left of the payment's grants and recorded the rest, out in jobs then, as each grant's
// `owed`; what comes back into a grant is held back while it owes, so no credit of a reversed payment is spent twice.

/** What the ledger says about credits held back. */
export const HELD_BACK_REASON = "Held back: the payment that bought this credit was refunded or disputed";

/**
 * The writes that give `allocations` back to their grants, less what each grant owes, and how many credits that
 * gives the user. Read and written inside the user's object, in one turn: nothing else writes these grants between.
 */
export async function giveBack(
  db: Database,
  userId: string,
  allocations: Allocation[],
  key: string,
  now: number,
): Promise<{ given: number; writes: Stmt[] }> {
  const ids = [...new Set(allocations.map((a) => a.grantId))];
  const rows = ids.length
    ? await db
        .select({ id: creditGrants.id, owed: creditGrants.owed })
        .from(creditGrants)
        .where(and(eq(creditGrants.userId, userId), inList(creditGrants.id, ids)))
        .all()
    : [];
  const owes = new Map(rows.map((r) => [r.id, r.owed]));
  let given = 0;
  const writes: Stmt[] = [];
  for (const a of allocations) {
    const held = Math.min(owes.get(a.grantId) ?? 0, a.amount);
    owes.set(a.grantId, (owes.get(a.grantId) ?? 0) - held);
    given += a.amount - held;
    writes.push(
      db
        .update(creditGrants)
        .set({
          remaining: sql`${creditGrants.remaining} + ${a.amount - held}`,
          owed: sql`${creditGrants.owed} - ${held}`,
        })
        .where(and(eq(creditGrants.id, a.grantId), eq(creditGrants.userId, userId))),
    );
    if (held > 0) {
      writes.push(
        db.insert(creditLedger).values(
          ledgerRow(userId, "adjust", -held, HELD_BACK_REASON, `held-back:${key}:${a.grantId}`, now, {
            grantId: a.grantId,
          }),
        ),
      );
    }
  }
  return { given, writes };
}
