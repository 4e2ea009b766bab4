import type { Database } from "@db/client";
import { inList, notInList } from "@db/lists";
import { folders, teamExports, teams } from "@db/schema";
import { and, asc, eq, isNull, lte, or, sql } from "drizzle-orm";
import { RETENTION_MIN_DAYS } from "~/shared/teams";

// The broker's record expires (docs/decisions/0316-the-brokers-record-expires.md): the daily cron deletes a row
// once the team's retention has run from the later of its own time and the end of its listing's active period (a
// listing still active or pending never expires; a sold one ends when its original pages close), and the kept
// copies of its bytes (teams/<teamId>/record/...) once no remaining row names them. Copies go first, rows second:
// a run that dies between the two leaves the rows, and the next run finds them again and finishes.

const DAY = 86_400_000;

/** How many rows one batch reads and deletes (D1 binds the ids as one JSON parameter, so any size binds). */
export const EXPIRY_BATCH = 200;
/** Batches per cron run: a backlog is worked off over several days rather than in one long run. */
export const EXPIRY_BATCHES = 25;

/** The key of a kept copy of this team's record, or null (a page event's `/o/<token>`, anything else). */
function keptKey(teamId: string, key: string | null): string | null {
  return key?.startsWith(`teams/${teamId}/record/`) ? key : null;
}

/** One batch of rows past retention, oldest first. */
function expiredRows(db: Database, now: number, limit: number) {
  // Never under the product's least retention, whatever a row of `teams` says.
  const kept = sql`(max(${teams.retentionDays}, ${RETENTION_MIN_DAYS}) * ${DAY})`;
  const cutoff = sql`(${now} - ${kept})`;
  return db
    .select({
      id: teamExports.id,
      teamId: teamExports.teamId,
      recordKey: teamExports.recordKey,
      originalKey: teamExports.originalKey,
    })
    .from(teamExports)
    .innerJoin(teams, eq(teams.id, teamExports.teamId))
    .leftJoin(folders, eq(folders.id, teamExports.folderId))
    .where(
      and(
        lte(teamExports.at, cutoff),
        // The listing's active period (listing-status.ts): active or pending advertises; sold (or off market) ends
        // when its original pages close. A listing deleted for good has ended; its rows count from their own time.
        or(
          isNull(folders.id),
          and(
            eq(folders.listingStatus, "sold"),
            lte(sql`coalesce(${folders.originalsCloseAt}, ${folders.soldAt}, 0)`, cutoff),
          ),
        ),
      ),
    )
    .orderBy(asc(teamExports.at), asc(teamExports.id))
    .limit(limit)
    .all();
}

/** Deletes one batch; returns how many rows it read (fewer than `limit`: nothing more is due). */
async function expireBatch(db: Database, bucket: R2Bucket, now: number, limit: number): Promise<number> {
  const rows = await expiredRows(db, now, limit);
  if (rows.length === 0) return 0;
  const ids = rows.map((r) => r.id);
  const candidates = [
    ...new Set(rows.flatMap((r) => [keptKey(r.teamId, r.recordKey), keptKey(r.teamId, r.originalKey)])),
  ].filter((k): k is string => k !== null);
  if (candidates.length > 0) {
    // A copy another row still names (a newer download of the same bytes, a later pack of the same photo's
    // original) stays; so does one named by a row of this batch's future, outside it.
    const needed = await db
      .select({ recordKey: teamExports.recordKey, originalKey: teamExports.originalKey })
      .from(teamExports)
      .where(
        and(
          or(inList(teamExports.recordKey, candidates), inList(teamExports.originalKey, candidates)),
          notInList(teamExports.id, ids),
        ),
      )
      .all();
    const keep = new Set(needed.flatMap((r) => [r.recordKey, r.originalKey]));
    const gone = candidates.filter((k) => !keep.has(k));
    // R2 deletes at most 1,000 keys a call; a missing key is not an error, so a re-run deletes nothing twice.
    for (let i = 0; i < gone.length; i += 1000) await bucket.delete(gone.slice(i, i + 1000));
  }
  await db.delete(teamExports).where(inList(teamExports.id, ids)).run();
  return rows.length;
}

/** The daily cron's task: deletes expired rows of every team's record and their copies no row needs. */
export async function expireTeamRecords(
  db: Database,
  bucket: R2Bucket,
  now = Date.now(),
  opts: { batch?: number; batches?: number } = {},
): Promise<number> {
  const batch = opts.batch ?? EXPIRY_BATCH;
  let deleted = 0;
  for (let i = 0; i < (opts.batches ?? EXPIRY_BATCHES); i++) {
    const n = await expireBatch(db, bucket, now, batch);
    deleted += n;
    if (n < batch) break;
  }
  return deleted;
}
