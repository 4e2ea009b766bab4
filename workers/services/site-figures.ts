import type { Database } from "@db/client";
import { jobs } from "@db/schema";
import { and, gte, inArray, isNotNull, lte, sql } from "drizzle-orm";
import { type SiteFigures, siteFigures } from "~/shared/site-figures";

// The landing page's measured figures (docs/decisions/0185-measured-landing-figures.md): of the jobs that reached
// the provider in the last 30 days, the share that delivered a result the user was charged for, and the median time
// from start to result. A job refused before any call never starts (no started_at) and is not counted; a provider
// failure, a timeout or a result the structure check refused ends "failed" after it started and counts against.

export const FIGURES_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

/** Reads the aggregate from D1: two statements on the (status, started_at) index, not a scan per page view. */
export async function computeSiteFigures(db: Database, now: number): Promise<SiteFigures> {
  const since = now - FIGURES_WINDOW_MS;
  const finished = and(
    inArray(jobs.status, ["succeeded", "failed"]),
    gte(jobs.startedAt, since),
    lte(jobs.startedAt, now),
    isNotNull(jobs.finishedAt),
  );
  const counts = await db
    .select({
      total: sql<number>`count(*)`,
      succeeded: sql<number>`coalesce(sum(case when ${jobs.status} = 'succeeded' then 1 else 0 end), 0)`,
    })
    .from(jobs)
    .where(finished)
    .get();
  const total = Number(counts?.total ?? 0);
  const succeeded = Number(counts?.succeeded ?? 0);
  let medianMs: number | null = null;
  if (succeeded > 0) {
    // The middle one (odd) or the middle two (even) of the delivered jobs' durations.
    const duration = sql<number>`${jobs.finishedAt} - ${jobs.startedAt}`;
    const middle = await db
      .select({ ms: duration })
      .from(jobs)
      .where(and(finished, sql`${jobs.status} = 'succeeded'`))
      .orderBy(duration)
      .limit(succeeded % 2 === 0 ? 2 : 1)
      .offset(Math.floor((succeeded - 1) / 2))
      .all();
    medianMs = middle.reduce((s, r) => s + Number(r.ms), 0) / Math.max(middle.length, 1);
  }
  return siteFigures({ total, succeeded, medianMs, computedAt: now });
}

/** The cache key of the figures for the hour `now` falls in: a new hour is a new key, so it is recomputed. */
export function figuresCacheKey(origin: string, now: number): string {
  return `${origin}/api/figures?hour=${Math.floor(now / 3_600_000)}`;
}
