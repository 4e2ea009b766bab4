import type { Database } from "@db/client";
import type { BatchItem } from "drizzle-orm/batch";

// One D1 batch: what every part of the user's object writes with. A batch is
// atomic (D1 has no interactive transactions), so each change of a user's data
// is one batch whose constraints make a wrong computation fail, not half-write.

export type Stmt = BatchItem<"sqlite">;

/**
 * Runs `writes`, then `reads`, in one atomic D1 batch (no round trip for nothing) and answers the reads' results:
 * the rows as those writes left them.
 */
export async function run(db: Database, writes: readonly Stmt[], reads: readonly Stmt[] = []): Promise<unknown[]> {
  const all = [...writes, ...reads];
  if (all.length === 0) return [];
  const results = (await db.batch(all as unknown as [Stmt, ...Stmt[]])) as unknown[];
  return results.slice(writes.length);
}

/**
 * What a change runs in the same atomic batch as a credit operation (credits/): its own rows (a job's, a version's)
 * and reads of what the batch left (answered as `read`). The one way a change joins a credit write.
 */
export interface Along {
  writes?: readonly Stmt[];
  reads?: readonly Stmt[];
}
