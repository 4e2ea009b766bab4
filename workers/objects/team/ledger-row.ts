import type { teamLedger } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";

/** One row of the pool's ledger: every change of the pool (pool.ts) and every credit held back (held-back.ts). */
export function ledger(
  teamId: string,
  kind: (typeof teamLedger.$inferInsert)["kind"],
  amount: number,
  reason: string,
  key: string,
  now: number,
  extra: Partial<typeof teamLedger.$inferInsert> = {},
) {
  return { id: randomToken(), teamId, kind, amount, reason, idempotencyKey: key, createdAt: now, ...extra };
}
