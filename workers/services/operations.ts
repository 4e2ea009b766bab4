import type { Database } from "@db/client";
import { countStatement, HOUR_MS, hourOf, LATENCY_BUCKETS_MS } from "@db/ops-counts";
import { cronRuns, dataExports, jobs, opsCounts, users } from "@db/schema";
import { currentRequestId, log, newRequestId } from "@workers/lib/log";
import { providerGateStats } from "@workers/services/provider-gate-stats";
import { and, count, desc, eq, gte, inArray, isNotNull, isNull, lt } from "drizzle-orm";

// The operations page's reads (app/routes/admin/operations.tsx): a handful of small queries in one round trip, over
// counters kept as jobs, provider calls and webhooks end (docs/decisions/0184-operations-aggregates.md), never a
// scan of the jobs table.

export interface Percentiles {
  calls: number;
  /** The upper bound (ms) of the latency bucket the percentile falls in; null past the last bucket or with no call. */
  p50Ms: number | null;
  p95Ms: number | null;
}

export interface Tally {
  cause: string;
  count: number;
}

export interface WindowView {
  label: string;
  since: number;
  provider: Percentiles & { failures: Tally[] };
  /** flagged and unchecked: delivered results the structure check marked, or could not judge (issue 43 item 9). */
  jobs: { succeeded: number; failed: Tally[]; refused: number; flagged: Tally[]; unchecked: Tally[] };
  webhooks: { callbacks: Tally[]; stripe: Tally[] };
}

/** Provider calls in flight and waiting across all users (the global cap, issue 36 part 6). */
export interface ProviderSlots {
  cap: number;
  inFlight: number;
  waiting: number;
}

export interface OperationsView {
  now: number;
  windows: WindowView[];
  jobsQueued: number;
  jobsRunning: number;
  lastCron: { startedAt: number; finishedAt: number; ok: boolean; failed: string[] } | null;
  exportsQueued: number;
  deletionsPending: number;
  /** null until the global provider cap reports its numbers (providerSlots below). */
  providerSlots: ProviderSlots | null;
}

/**
 * The product-wide provider gate's numbers now (docs/decisions/0186-one-provider-gate.md): one RPC to its single
 * instance, not a scan. Null when the gate does not answer, and the page says "not measured yet".
 */
export async function providerSlots(env: Env): Promise<ProviderSlots | null> {
  try {
    const stats = await providerGateStats(env);
    return { cap: stats.cap, inFlight: stats.inUse, waiting: stats.waiting };
  } catch (err) {
    log.warn("provider gate stats not read", { error: err instanceof Error ? err.message : String(err) });
    return null;
  }
}

/** Percentiles from latency bucket counts: the bound of the bucket where the cumulative count reaches the share. */
export function percentiles(buckets: Tally[]): Percentiles {
  const bound = (cause: string) => (cause === "inf" ? Number.POSITIVE_INFINITY : Number(cause));
  const sorted = [...buckets].sort((a, b) => bound(a.cause) - bound(b.cause));
  const calls = sorted.reduce((n, b) => n + b.count, 0);
  const at = (share: number): number | null => {
    if (calls === 0) return null;
    let seen = 0;
    for (const b of sorted) {
      seen += b.count;
      if (seen >= share * calls) return Number.isFinite(bound(b.cause)) ? bound(b.cause) : null;
    }
    return null;
  };
  return { calls, p50Ms: at(0.5), p95Ms: at(0.95) };
}

type Row = { hour: number; metric: string; cause: string; count: number };

function windowOf(rows: Row[], label: string, since: number): WindowView {
  const inWindow = rows.filter((r) => r.hour >= since);
  const tallies = (metric: string): Tally[] => {
    const by = new Map<string, number>();
    for (const r of inWindow) if (r.metric === metric) by.set(r.cause, (by.get(r.cause) ?? 0) + r.count);
    return [...by].map(([cause, n]) => ({ cause, count: n })).sort((a, b) => b.count - a.count);
  };
  const total = (metric: string) => tallies(metric).reduce((n, t) => n + t.count, 0);
  return {
    label,
    since,
    provider: { ...percentiles(tallies("provider_ms")), failures: tallies("provider_failure") },
    jobs: {
      succeeded: total("job_succeeded"),
      failed: tallies("job_failed"),
      refused: total("job_refused"),
      flagged: tallies("job_flagged"),
      unchecked: tallies("job_unchecked"),
    },
    webhooks: { callbacks: tallies("callback_failed"), stripe: tallies("stripe_webhook_failed") },
  };
}

export async function readOperations(db: Database, env: Env, now = Date.now()): Promise<OperationsView> {
  const thisHour = hourOf(now);
  const dayStart = thisHour - 23 * HOUR_MS;
  const [counts, open, cron, exportsQueued, deletions] = await db.batch([
    db
      .select({ hour: opsCounts.hour, metric: opsCounts.metric, cause: opsCounts.cause, count: opsCounts.count })
      .from(opsCounts)
      .where(gte(opsCounts.hour, dayStart)),
    db
      .select({ status: jobs.status, n: count() })
      .from(jobs)
      .where(inArray(jobs.status, ["queued", "running"]))
      .groupBy(jobs.status),
    db.select().from(cronRuns).orderBy(desc(cronRuns.id)).limit(1),
    db.select({ n: count() }).from(dataExports).where(eq(dataExports.status, "queued")),
    db
      .select({ n: count() })
      .from(users)
      .where(and(isNotNull(users.deletedAt), isNull(users.purgedAt))),
  ]);
  const last = cron[0];
  return {
    now,
    windows: [windowOf(counts, "This hour", thisHour), windowOf(counts, "Last 24 hours", dayStart)],
    jobsQueued: open.find((r) => r.status === "queued")?.n ?? 0,
    jobsRunning: open.find((r) => r.status === "running")?.n ?? 0,
    lastCron: last
      ? { startedAt: last.startedAt, finishedAt: last.finishedAt, ok: last.ok, failed: last.failed?.split(",") ?? [] }
      : null,
    exportsQueued: exportsQueued[0]?.n ?? 0,
    deletionsPending: deletions[0]?.n ?? 0,
    providerSlots: await providerSlots(env),
  };
}

/** The daily cron's run, kept for the page (runs older than 30 days go in the same batch). */
export async function recordCronRun(
  db: Database,
  run: { startedAt: number; finishedAt: number; failed: string[] },
): Promise<void> {
  await db.batch([
    db.insert(cronRuns).values({
      startedAt: run.startedAt,
      finishedAt: run.finishedAt,
      ok: run.failed.length === 0,
      failed: run.failed.length > 0 ? run.failed.join(",") : null,
      requestId: currentRequestId() ?? newRequestId(),
    }),
    db.delete(cronRuns).where(lt(cronRuns.startedAt, run.startedAt - 30 * 24 * HOUR_MS)),
  ]);
}

/** A Stripe webhook that failed (refused, or an error of ours): counted for the page. */
export async function countWebhookFailure(db: Database, cause: string, now: number): Promise<void> {
  await countStatement(db, now, "stripe_webhook_failed", cause).run();
}

export { LATENCY_BUCKETS_MS };
