import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "./client";

// A row that may be made only while its kind stays under a cap (open uploads, API keys, folders), safe when several
// are made at once: the row is inserted and its kind counted in one batch, and taken back when a count passes its
// cap. A count read before the insert lets every concurrent request pass it.

/** A count of the row's kind (selected as `n`, the new row included) and the most it may reach. */
export interface Cap {
  count: BatchItem<"sqlite">;
  max: number;
}

/** Inserts the row; null when it stays, else the index of the cap it passed (and the row was taken back). */
export async function insertUnderCaps(
  db: Database,
  insert: BatchItem<"sqlite">,
  caps: readonly Cap[],
  takeBack: () => Promise<unknown>,
): Promise<number | null> {
  const [, ...counted] = (await db.batch([insert, ...caps.map((c) => c.count)] as [BatchItem<"sqlite">])) as unknown[];
  const over = caps.findIndex((c, i) => ((counted[i] as { n: number }[])[0]?.n ?? 0) > c.max);
  if (over === -1) return null;
  await takeBack();
  return over;
}
