import type { Database } from "@db/client";
import { creditReservations, jobs, siteFiguresRows } from "@db/schema";
import type { RateRule } from "@workers/objects/limits-client";
import { and, eq, gte, inArray, isNotNull, isNull, lte, or, type SQL, sql } from "drizzle-orm";
import { NO_FIGURES, type RawGroup, type SiteFigures, siteFigures } from "~/shared/site-figures";

// The landing page's measured figures (docs/decisions/0185-measured-landing-figures.md,
// 0231-figures-from-the-agents-side.md), from the agent's side: of the jobs that finished in the last 30 days, the
// share delivered and charged (a failure, a refund or a result the structure check refused counts against), and
// the median time from the request that asked for the job (its created_at) to its result (finished_at), the wait in
// the user's queue and at the provider gate included. Single photos and batch members are counted apart: a batch's
// members wait for each other by design (the plan's concurrency). Computed at most once an hour into one D1 row
// (site_figures), which every other request reads.

export const FIGURES_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;
/** The figures are recomputed when they are this old. */
export const FIGURES_MAX_AGE_MS = 60 * 60 * 1000;
/** A request that claimed the recomputation and did not finish it (it failed) is replaced after this long. */
export const FIGURES_CLAIM_MS = 60 * 1000;
const ROW_ID = "landing";

/** GET /api/figures per address: the landing page asks once a view; a minute's allowance is generous. */
export const FIGURES_RULE: RateRule = { name: "figures", limit: 60, windowMs: 60 * 1000 };

/** Delivered and charged: succeeded, and its credit not given back. */
const delivered = sql`(${jobs.status} = 'succeeded' AND NOT EXISTS (
  SELECT 1 FROM ${creditReservations}
   WHERE ${creditReservations.key} = ${jobs.id} AND ${creditReservations.status} = 'refunded'))`;
const waited = sql<number>`${jobs.finishedAt} - ${jobs.createdAt}`;

/** Counts the jobs from D1 (a few statements on the finished jobs' index). */
export async function computeSiteFigures(db: Database, now: number): Promise<SiteFigures> {
  const finished = and(
    inArray(jobs.status, ["succeeded", "failed"]),
    isNotNull(jobs.finishedAt),
    gte(jobs.finishedAt, now - FIGURES_WINDOW_MS),
    lte(jobs.finishedAt, now),
  );
  const rows = await db
    .select({
      inBatch: sql<number>`${jobs.batchId} IS NOT NULL`,
      total: sql<number>`count(*)`,
      succeeded: sql<number>`coalesce(sum(CASE WHEN ${delivered} THEN 1 ELSE 0 END), 0)`,
    })
    .from(jobs)
    .where(finished)
    .groupBy(sql`${jobs.batchId} IS NOT NULL`)
    .all();
  const counted = (inBatch: boolean) => {
    const r = rows.find((x) => Boolean(Number(x.inBatch)) === inBatch);
    return { total: Number(r?.total ?? 0), succeeded: Number(r?.succeeded ?? 0) };
  };
  const median = async (where: SQL | undefined, succeeded: number): Promise<number | null> => {
    if (succeeded === 0) return null;
    // The middle one (odd) or the middle two (even) of the delivered jobs' times.
    const middle = await db
      .select({ ms: waited })
      .from(jobs)
      .where(and(finished, where, delivered))
      .orderBy(waited)
      .limit(succeeded % 2 === 0 ? 2 : 1)
      .offset(Math.floor((succeeded - 1) / 2))
      .all();
    return middle.reduce((s, r) => s + Number(r.ms), 0) / Math.max(middle.length, 1);
  };
  const single = counted(false);
  const batch = counted(true);
  const [singleMedian, batchMedian] = await Promise.all([
    median(isNull(jobs.batchId), single.succeeded),
    median(isNotNull(jobs.batchId), batch.succeeded),
  ]);
  const groups: { single: RawGroup; batch: RawGroup } = {
    single: { ...single, medianMs: singleMedian },
    batch: { ...batch, medianMs: batchMedian },
  };
  return siteFigures({ ...groups, computedAt: now });
}

/** Computes the figures now and stores them (the recomputation, and the dev fixture that seeds jobs). */
export async function refreshSiteFigures(db: Database, now: number): Promise<SiteFigures> {
  const figures = await computeSiteFigures(db, now);
  await db
    .insert(siteFiguresRows)
    .values({ id: ROW_ID, figures: JSON.stringify(figures), computedAt: now, claimedAt: null })
    .onConflictDoUpdate({
      target: siteFiguresRows.id,
      set: { figures: JSON.stringify(figures), computedAt: now, claimedAt: null },
    });
  return figures;
}

/**
 * The figures as stored; when they are an hour old (or were never computed), the one request that claims the
 * recomputation computes them and answers the new ones, while any other answers the stored ones meanwhile.
 */
export async function currentSiteFigures(db: Database, now: number): Promise<SiteFigures> {
  const row = await db.select().from(siteFiguresRows).where(eq(siteFiguresRows.id, ROW_ID)).get();
  const stored = row?.figures ? (JSON.parse(row.figures) as SiteFigures) : null;
  if (stored && row && row.computedAt > now - FIGURES_MAX_AGE_MS) return stored;
  const claimed = await db
    .insert(siteFiguresRows)
    .values({ id: ROW_ID, figures: null, computedAt: 0, claimedAt: now })
    .onConflictDoUpdate({
      target: siteFiguresRows.id,
      set: { claimedAt: now },
      setWhere: and(
        lte(siteFiguresRows.computedAt, now - FIGURES_MAX_AGE_MS),
        or(isNull(siteFiguresRows.claimedAt), lte(siteFiguresRows.claimedAt, now - FIGURES_CLAIM_MS)),
      ),
    })
    .returning({ id: siteFiguresRows.id })
    .all();
  if (claimed.length === 0) return stored ?? NO_FIGURES;
  return refreshSiteFigures(db, now);
}
