import type { Database } from "@db/client";
import { apiIdempotency } from "@db/schema";
import { canonicalJson } from "@workers/lib/canonical-json";
import { sha256Hex } from "@workers/lib/crypto";
import { IDEMPOTENCY_TTL_MS, KEY_MISMATCH, SUBMISSION_REUSED } from "@workers/objects/client";
import { and, eq, isNull, lt, not } from "drizzle-orm";
import { type Failure, fail } from "~/shared/result";

// Idempotency-Key for the public API's POSTs (docs/decisions/0120-public-api.md).
// The first request with a key claims it in D1 (an INSERT that only one
// request can win); its 2xx answer is stored and replayed to every retry.
// A retry that arrives while the first still runs gets 409 with Retry-After;
// a key reused for a different request gets 409 too. Failures are not stored:
// nothing was written, so a retry may run again.
// Job creation does the same inside the user's Durable Object instead, so
// concurrent retries wait for each other and all get the first answer.

export const IDEMPOTENCY_HEADER = "Idempotency-Key";

/** Stored answers are kept this long: the rule the user's object applies to keyed jobs. */
export { IDEMPOTENCY_TTL_MS };

/** A claim whose request has not finished in this long is taken over (its request died). */
const CLAIM_LEASE_MS = 2 * 60 * 1000;

/** The key was used before with another request: the object and this module answer it alike. */
export const MISMATCH = KEY_MISMATCH;

/**
 * A keyed team job the user's object refused as another request under its key (SUBMISSION_REUSED: another photo,
 * choice or callback address), said as the API says it of an Idempotency-Key.
 */
export function inKeyTerms(failure: Failure): Failure {
  return failure.error === SUBMISSION_REUSED ? fail("conflict", MISMATCH) : failure;
}

/** A retry that arrives while the key's first request still runs. */
const STILL_RUNNING = "A request with this Idempotency-Key is still running.";

/** The key from the header: 1-255 visible ASCII characters, or a failure; null when none was sent. */
export function idempotencyKey(header: string | null | undefined): { key: string | null } | Failure {
  if (header === null || header === undefined) return { key: null };
  if (!/^[\x21-\x7e]{1,255}$/.test(header)) {
    return fail("invalid", "Idempotency-Key must be 1 to 255 visible ASCII characters.");
  }
  return { key: header };
}

/** A stable digest of what was asked: the route and its canonical input. */
export function requestHash(route: string, input: unknown): string {
  return sha256Hex(`${route}\n${canonicalJson(input)}`);
}

export interface StoredAnswer {
  status: number;
  body: unknown;
  /** The first request's answer, given again to a retry with the same key. */
  replayed?: boolean;
}

/**
 * Runs `work` once per (user, key): the first call's 2xx answer is stored and
 * returned to every later call with the same request.
 */
export async function onceForKey(
  db: Database,
  userId: string,
  key: string | null,
  hash: string,
  now: number,
  work: () => Promise<StoredAnswer>,
): Promise<StoredAnswer | Failure> {
  if (key === null) return work();
  await db
    .delete(apiIdempotency)
    .where(
      and(
        eq(apiIdempotency.userId, userId),
        eq(apiIdempotency.key, key),
        lt(apiIdempotency.createdAt, now - IDEMPOTENCY_TTL_MS),
      ),
    );
  const claimed = await db
    .insert(apiIdempotency)
    .values({ userId, key, requestHash: hash, status: null, response: null, createdAt: now })
    .onConflictDoNothing()
    .returning({ key: apiIdempotency.key });
  if (claimed.length === 0) {
    const row = await db
      .select()
      .from(apiIdempotency)
      .where(and(eq(apiIdempotency.userId, userId), eq(apiIdempotency.key, key)))
      .get();
    if (!row) return fail("conflict", "This request is being retried; please try again.", { retryAfterSeconds: 1 });
    if (row.requestHash !== hash) return fail("conflict", MISMATCH);
    if (row.status !== null && row.response !== null) {
      return { status: row.status, body: JSON.parse(row.response), replayed: true };
    }
    // Still running, or taken over by another retry since its request died.
    const takeover = await db
      .update(apiIdempotency)
      .set({ createdAt: now })
      .where(
        and(
          eq(apiIdempotency.userId, userId),
          eq(apiIdempotency.key, key),
          isNull(apiIdempotency.status),
          lt(apiIdempotency.createdAt, now - CLAIM_LEASE_MS),
        ),
      )
      .run();
    if (takeover.meta.changes !== 1) {
      return fail("conflict", STILL_RUNNING, { retryAfterSeconds: 1 });
    }
  }
  let answer: StoredAnswer;
  try {
    answer = await work();
  } catch (err) {
    await release(db, userId, key);
    throw err;
  }
  if (answer.status >= 200 && answer.status < 300) {
    await db
      .update(apiIdempotency)
      .set({ status: answer.status, response: JSON.stringify(answer.body), createdAt: now })
      .where(and(eq(apiIdempotency.userId, userId), eq(apiIdempotency.key, key)));
  } else {
    await release(db, userId, key);
  }
  return answer;
}

/**
 * A keyed job's answer the user's object stored under this key while it is kept: replayed for the same request, a
 * mismatch for another, null when the key names no job. A request now paid from a team's pool (its photo moved into
 * a team listing since the first sending) asks here first, so the key never starts a second job.
 */
export async function storedJobAnswer(
  db: Database,
  userId: string,
  key: string,
  hash: string,
  now: number,
): Promise<{ replay: unknown } | Failure | null> {
  const row = await db
    .select()
    .from(apiIdempotency)
    .where(and(eq(apiIdempotency.userId, userId), eq(apiIdempotency.key, key)))
    .get();
  if (!row || row.createdAt < now - IDEMPOTENCY_TTL_MS) return null;
  if (row.requestHash !== hash) return fail("conflict", MISMATCH);
  if (row.response === null) return fail("conflict", STILL_RUNNING, { retryAfterSeconds: 1 });
  return { replay: JSON.parse(row.response) };
}

/**
 * After a keyed job paid from a team's pool (docs/decisions/0354-a-team-key-compares-the-request.md): the request
 * that started its job stores its answer under the key, so the same request sent again is replayed before the job is
 * compared (a sky or removal sent again after it ran would start from its own result), and another request is refused.
 * A request the user's object answered with an earlier sending's job (`replayed`) writes nothing; it is refused when
 * the stored sending asked something else (another callback address). Null when the answer stands.
 */
export async function keepJobAnswer(
  db: Database,
  userId: string,
  sent: { key: string; hash: string; answer: unknown; replayed: boolean },
  now: number,
): Promise<Failure | null> {
  const { key, hash } = sent;
  const expired = lt(apiIdempotency.createdAt, now - IDEMPOTENCY_TTL_MS);
  if (!sent.replayed) {
    // One write: a new row, or one whose stored answer has expired taken over; a live one is left as it is.
    const row = { requestHash: hash, status: 202, response: JSON.stringify(sent.answer), createdAt: now };
    await db
      .insert(apiIdempotency)
      .values({ userId, key, ...row })
      .onConflictDoUpdate({ target: [apiIdempotency.userId, apiIdempotency.key], set: row, setWhere: expired });
    return null;
  }
  const row = await db
    .select({ requestHash: apiIdempotency.requestHash })
    .from(apiIdempotency)
    .where(and(eq(apiIdempotency.userId, userId), eq(apiIdempotency.key, key), not(expired)))
    .get();
  return row && row.requestHash !== hash ? fail("conflict", MISMATCH) : null;
}

async function release(db: Database, userId: string, key: string): Promise<void> {
  await db.delete(apiIdempotency).where(and(eq(apiIdempotency.userId, userId), eq(apiIdempotency.key, key)));
}

/** Daily cron: forget stored answers older than a day (and claims whose request died). */
export async function purgeIdempotency(db: Database, now = Date.now()): Promise<void> {
  await db.delete(apiIdempotency).where(lt(apiIdempotency.createdAt, now - IDEMPOTENCY_TTL_MS));
}
