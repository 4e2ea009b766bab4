import type { Database } from "@db/client";
import { hourOf } from "@db/ops-counts";
import { opsCounts } from "@db/schema";
import { log } from "@workers/lib/log";
import { OUTAGE_CAUSES } from "@workers/lib/structure/verdict";
import { and, eq, inArray } from "drizzle-orm";

// The check cannot switch off unseen (issue 43 item 9, docs/decisions/0262-unchecked-results-seen.md): each delivered
// result the structure check could not judge is counted per hour (tally.ts, job_unchecked), and once an hour's
// unchecked results pass UNCHECKED_ALARM_SHARE of its results, one error report goes out, whichever user's object
// sees it first: the hour's `unchecked_reported` row is inserted once (ON CONFLICT DO NOTHING), and only the insert
// that made it reports.

/** The share of an hour's results left unchecked by an outage (OUTAGE_CAUSES) above which someone is told. */
export const UNCHECKED_ALARM_SHARE = 0.05;

/** The report's message (its first words are what an alert rule matches). */
export function uncheckedAlarm(unchecked: number, results: number): string {
  const pct = Math.round((1000 * unchecked) / results) / 10;
  return `structure check: ${unchecked} of ${results} results this hour were delivered unchecked (${pct} %, above ${UNCHECKED_ALARM_SHARE * 100} %)`;
}

/**
 * After an unchecked result was committed: reads the hour's counts and, past the share, reports once for the hour.
 * Never throws: a failed read leaves the count on the page, where it is seen anyway.
 */
export async function reportUncheckedShare(db: Database, now: number): Promise<boolean> {
  try {
    const hour = hourOf(now);
    const rows = await db
      .select({ metric: opsCounts.metric, cause: opsCounts.cause, count: opsCounts.count })
      .from(opsCounts)
      .where(
        and(eq(opsCounts.hour, hour), inArray(opsCounts.metric, ["job_succeeded", "job_refused", "job_unchecked"])),
      )
      .all();
    // Delivered results (succeeded, unchecked ones among them) and refused ones: every result the check was asked
    // of. Of the unchecked, only the check not running counts (timed out, not sent, failed): a picture too small to
    // judge, or a source that is gone, says nothing about the check.
    let results = 0;
    let unchecked = 0;
    for (const r of rows) {
      if (r.metric !== "job_unchecked") results += r.count;
      else if ((OUTAGE_CAUSES as readonly string[]).includes(r.cause)) unchecked += r.count;
    }
    if (results === 0 || unchecked / results <= UNCHECKED_ALARM_SHARE) return false;
    const first = await db
      .insert(opsCounts)
      .values({ hour, metric: "unchecked_reported", cause: "", count: 1 })
      .onConflictDoNothing()
      .returning({ hour: opsCounts.hour });
    if (first.length === 0) return false;
    log.error(uncheckedAlarm(unchecked, results), { where: "structure-check", unchecked, results });
    return true;
  } catch (err) {
    log.warn("unchecked share not read", { error: err instanceof Error ? err.message : String(err) });
    return false;
  }
}
