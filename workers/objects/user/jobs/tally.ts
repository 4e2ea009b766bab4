import type { Database } from "@db/client";
import { countStatement, latencyBucket } from "@db/ops-counts";
import { type ProviderCallRecord, ProviderError } from "@workers/adapters/provider";
import { log } from "@workers/lib/log";
import type { Stmt } from "@workers/objects/user/batch";
import type { StoredCheck } from "./job-rows";
import { PaidPhotoGone } from "./paid-photos";

// What a job's end adds to the operations page's counters (docs/decisions/0184-operations-aggregates.md), written
// in the batch that ends the job: its provider calls' latencies and failures, and how the job ended.

/** A list the provider client appends each call to as it ends, logging one line per call. */
export function providerCalls(): { calls: ProviderCallRecord[]; onCall: (call: ProviderCallRecord) => void } {
  const calls: ProviderCallRecord[] = [];
  return {
    calls,
    onCall(call) {
      calls.push(call);
      log.info("provider call", { op: call.op, ms: call.ms, failure: call.failure });
    },
  };
}

/** The counters of the calls not yet counted (the list is emptied: a call is counted once). */
export function callStatements(db: Database, now: number, calls: ProviderCallRecord[]): Stmt[] {
  const taken = calls.splice(0);
  const counts = new Map<string, { metric: "provider_ms" | "provider_failure"; cause: string; n: number }>();
  const add = (metric: "provider_ms" | "provider_failure", cause: string) => {
    const key = `${metric} ${cause}`;
    const entry = counts.get(key) ?? { metric, cause, n: 0 };
    entry.n++;
    counts.set(key, entry);
  };
  for (const call of taken) {
    add("provider_ms", latencyBucket(call.ms));
    if (call.failure) add("provider_failure", call.failure);
  }
  return [...counts.values()].map((c) => countStatement(db, now, c.metric, c.cause, c.n));
}

/** Why a job failed, as counted: the provider's failure, or "unexpected" for an error nobody planned for. */
export function failureCause(err: unknown): string {
  if (err instanceof PaidPhotoGone) return "photo_gone";
  return err instanceof ProviderError ? err.failure : "unexpected";
}

/**
 * A delivered result, counted, with what the structure check said of it (issue 43 item 9): unchecked by cause (the
 * check Worker down or late, the queue refusing, the Worker unable to judge, the source gone), flagged by why.
 */
export function succeededStatements(db: Database, now: number, checked: StoredCheck | undefined): Stmt[] {
  const succeeded = countStatement(db, now, "job_succeeded");
  if (checked?.verdict === "unchecked")
    return [succeeded, countStatement(db, now, "job_unchecked", checked.cause ?? "failed")];
  if (checked?.verdict === "flagged")
    return [succeeded, countStatement(db, now, "job_flagged", checked.flaggedBy ?? "score")];
  return [succeeded];
}

export function failedStatement(db: Database, now: number, cause: string): Stmt {
  return countStatement(db, now, "job_failed", cause);
}
