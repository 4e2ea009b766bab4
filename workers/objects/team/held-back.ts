import type { Database } from "@db/client";
import { teamLedger, teamPaymentReversals } from "@db/schema";
import type { Stmt } from "@workers/objects/user/batch";
import { and, asc, eq, gte, isNull, lte, sql } from "drizzle-orm";
import { ledger } from "./ledger-row";

// Credits of a reversed seat payment do not come back through a failed job or a returned result
// (docs/decisions/0349-team-credits-of-a-reversed-payment-do-not-come-back.md), as a person's do not (ADR 0339).
// A reversal that could not take all it was due, because members' jobs held credits at that moment, records the
// rest as `owed`. A credit coming back from a reservation made before that reversal is kept against it first.

export const TEAM_HELD_BACK_REASON = "Held back: the seat payment that bought this credit was refunded or disputed";

/**
 * The credits members' jobs hold now that no earlier reversal still counts as owed (ADR 0352). An earlier reversal's
 * owed part can come back only from jobs reserved before it that are still out, so it claims from those alone, oldest
 * reversal first; the part of it whose jobs were delivered since claims nothing, as it can never be held back.
 */
export function outUnclaimed(
  held: readonly { at: number; amount: number }[],
  earlier: readonly { at: number; left: number }[],
): number {
  const total = held.reduce((n, r) => n + r.amount, 0);
  let claimed = 0;
  for (const r of [...earlier].sort((a, b) => a.at - b.at)) {
    const before = held.filter((h) => h.at <= r.at).reduce((n, h) => n + h.amount, 0);
    claimed += Math.max(0, Math.min(Number(r.left), before - claimed));
  }
  return total - claimed;
}

/**
 * How much of `amount`, coming back to the pool from a reservation made at `madeAt`, is kept against the owed part
 * of reversals that followed it (oldest first, disputes won excluded), and the writes that record it: each reversal's
 * `held_back`, and one `adjust` ledger row so the ledger still sums to the pool. The caller adds `amount - held`.
 */
export async function holdBack(
  db: Database,
  teamId: string,
  come: { madeAt: number; amount: number; key: string; memberId: string },
  now: number,
): Promise<{ held: number; writes: Stmt[] }> {
  const open = await db
    .select({ id: teamPaymentReversals.id, owed: teamPaymentReversals.owed, heldBack: teamPaymentReversals.heldBack })
    .from(teamPaymentReversals)
    .where(
      and(
        eq(teamPaymentReversals.teamId, teamId),
        isNull(teamPaymentReversals.restoredAt),
        gte(teamPaymentReversals.createdAt, come.madeAt),
        sql`${teamPaymentReversals.heldBack} < ${teamPaymentReversals.owed}`,
      ),
    )
    .orderBy(asc(teamPaymentReversals.createdAt))
    .all();
  let left = come.amount;
  const writes: Stmt[] = [];
  for (const r of open) {
    if (left === 0) break;
    const n = Math.min(left, r.owed - r.heldBack);
    left -= n;
    writes.push(
      db
        .update(teamPaymentReversals)
        .set({ heldBack: sql`${teamPaymentReversals.heldBack} + ${n}` })
        .where(and(eq(teamPaymentReversals.id, r.id), lte(sql`${teamPaymentReversals.heldBack} + ${n}`, r.owed))),
    );
  }
  const held = come.amount - left;
  if (held > 0)
    writes.push(
      db.insert(teamLedger).values(
        ledger(teamId, "adjust", -held, TEAM_HELD_BACK_REASON, `held-back:${come.key}`, now, {
          memberId: come.memberId,
        }),
      ),
    );
  return { held, writes };
}
