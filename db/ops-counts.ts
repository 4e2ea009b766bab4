import { sql } from "drizzle-orm";
import type { Database } from "./client";
import { opsCounts } from "./schema";

// The operations page's counters (migrations/0020_operations.sql, docs/decisions/0184-operations-aggregates.md):
// one row per hour, metric and cause, added to by the write that ends what is counted.

export const HOUR_MS = 60 * 60 * 1000;

export type OpsMetric =
  | "job_succeeded"
  | "job_failed"
  | "job_refused"
  /** A delivered result the structure check could not judge (cause: timeout, unsent, unjudged, no_source). */
  | "job_unchecked"
  /** A delivered result the structure check marked (cause: score, daily_limit). */
  | "job_flagged"
  /** Once an hour at most: the hour's unchecked results passed UNCHECKED_ALARM_SHARE and were reported. */
  | "unchecked_reported"
  | "provider_ms"
  | "provider_failure"
  | "callback_failed"
  | "stripe_webhook_failed";

/** Upper bounds (ms) of the provider latency buckets; a call slower than the last counts in "inf". */
export const LATENCY_BUCKETS_MS = [250, 500, 1_000, 2_000, 4_000, 8_000, 15_000, 30_000, 60_000, 120_000] as const;

export function latencyBucket(ms: number): string {
  return String(LATENCY_BUCKETS_MS.find((b) => ms <= b) ?? "inf");
}

export function hourOf(now: number): number {
  return now - (now % HOUR_MS);
}

/** Adds `by` to a counter of the hour `now` falls in (an upsert: one statement, to join a batch). */
export function countStatement(db: Database, now: number, metric: OpsMetric, cause = "", by = 1) {
  return db
    .insert(opsCounts)
    .values({ hour: hourOf(now), metric, cause, count: by })
    .onConflictDoUpdate({
      target: [opsCounts.hour, opsCounts.metric, opsCounts.cause],
      set: { count: sql`${opsCounts.count} + ${by}` },
    });
}
