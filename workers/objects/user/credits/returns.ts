import type { Database } from "@db/client";
import { creditLedger, creditReservations } from "@db/schema";
import { type Along, run } from "@workers/objects/user/batch";
import { eq } from "drizzle-orm";
import {
  balanceDelta,
  expireGrants,
  giveBack,
  type LedgerResult,
  ledgerRow,
  recordedQuery,
  refusal,
} from "./ledger-rows";
import { balanceQuery, cachedBalance } from "./view";

// A spent credit given back after the fact (docs/decisions/0261-this-result-changed-the-room.md): the credits of a
// committed reservation go back to the grants they came from, as a refund does, under an idempotency key of their
// own, with the caller's rows in the same batch. Runs only inside the user's object, in its serial order.

/** Why nothing can be returned: the result was not charged (a free re-roll), or not by this user. */
export const NOT_CHARGED = "This result was not charged, so there is no credit to return.";
/** Why a second return is refused. */
export const ALREADY_RETURNED = "This result's credit was already returned.";

export async function returnCommitted(
  db: Database,
  userId: string,
  key: string,
  reason: string,
  idempotencyKey: string,
  now: number,
  along: Pick<Along, "writes"> = {},
): Promise<LedgerResult<{ returned: number }>> {
  const [reservations, balances, recorded] = await db.batch([
    db.select().from(creditReservations).where(eq(creditReservations.key, key)),
    balanceQuery(db, userId),
    recordedQuery(db, idempotencyKey),
  ]);
  const r = reservations[0];
  const balance = balances[0]?.credits ?? 0;
  if (recorded.length > 0) return refusal("conflict", ALREADY_RETURNED, balance);
  if (!r || r.userId !== userId || r.status !== "committed" || r.amount <= 0) {
    return refusal("conflict", NOT_CHARGED, balance);
  }
  // Less what a reversed payment's grants owe (ADR 0339).
  const back = await giveBack(db, userId, r.allocations, idempotencyKey, now);
  await run(db, [
    ...back.writes,
    db
      .insert(creditLedger)
      .values(ledgerRow(userId, "refund", r.amount, reason, idempotencyKey, now, { reservationKey: key })),
    balanceDelta(db, userId, back.given, now),
    ...(along.writes ?? []),
  ]);
  // A credit given back into a grant that expired meanwhile is expired again at once (as every refund's).
  await expireGrants(db, userId, now);
  return { ok: true, returned: back.given, balance: (await cachedBalance(db, userId)) ?? 0 };
}
