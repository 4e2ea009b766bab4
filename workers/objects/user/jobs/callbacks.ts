import type { Database } from "@db/client";
import { inQuery } from "@db/lists";
import { countStatement } from "@db/ops-counts";
import { type ApiCallback, apiCallbacks, apiKeys, jobs, photoVersions } from "@db/schema";
import { SIGNATURE_HEADER, signatureHeader, signingSecrets } from "@workers/lib/callback-signing";
import { guardedFetch, urlPolicy } from "@workers/lib/safe-url";
import { and, asc, eq, inArray, isNotNull, lte, min, sql } from "drizzle-orm";
import { apiVersionAddresses } from "~/shared/api-addresses";
import { structureView } from "~/shared/version-view";

// Signed callbacks of jobs created through the public API
// (docs/decisions/0120-public-api.md). A job that named a callback URL gets a
// row in the same batch as its reservation ('waiting'). After every change of
// the user, jobs that reached a final state move their row to 'pending'; the
// user's alarm POSTs the event, signed with the key's secret, and retries
// with backoff until 24 hours have passed. The row is the delivery log.

const UNREADABLE_SECRET =
  "The key's callback signing secret cannot be read (its signing key was removed); rotate it on the settings page.";
/** Retry for this long after the job finished, then give up. */
export const CALLBACK_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Waits after the 1st, 2nd, … failed attempt; the last repeats. */
export const BACKOFF_MS = [30_000, 2 * 60_000, 10 * 60_000, 30 * 60_000, 60 * 60_000, 2 * 3_600_000, 4 * 3_600_000];
const ATTEMPT_TIMEOUT_MS = 10_000;
/** How long an attempt holds its row, so an overlapping alarm does not send it twice. */
const LEASE_MS = 60_000;
const BATCH = 10;
/** A flag in the object's storage: some of this user's callbacks are not settled (saves a query per change). */
const OPEN_FLAG = "apiCallbacksOpen";

export async function markOpen(storage: DurableObjectStorage): Promise<void> {
  await storage.put(OPEN_FLAG, true);
}

/**
 * Called after every change of the user: callbacks of jobs that reached a
 * final state become due now. Returns when the alarm must next deliver one.
 */
export async function afterChange(
  storage: DurableObjectStorage,
  db: Database,
  userId: string,
  now: number,
): Promise<number | null> {
  if (!(await storage.get<boolean>(OPEN_FLAG))) return null;
  await db
    .update(apiCallbacks)
    .set({ status: "pending", nextAt: now, finishedAt: now })
    .where(
      and(
        eq(apiCallbacks.userId, userId),
        eq(apiCallbacks.status, "waiting"),
        inQuery(
          apiCallbacks.jobId,
          db
            .select({ id: jobs.id })
            .from(jobs)
            .where(and(eq(jobs.userId, userId), inArray(jobs.status, ["succeeded", "failed"]))),
        ),
      ),
    );
  const row = await db
    .select({
      next: min(apiCallbacks.nextAt),
      open: sql<number>`count(*)`,
    })
    .from(apiCallbacks)
    .where(and(eq(apiCallbacks.userId, userId), inArray(apiCallbacks.status, ["waiting", "pending"])))
    .get();
  if (!row || row.open === 0) {
    await storage.delete(OPEN_FLAG);
    return null;
  }
  return row.next ?? null;
}

/** The event a callback carries (what /docs/api and /developers describe). */
async function eventFor(db: Database, env: Pick<Env, "APP_ORIGIN">, cb: ApiCallback): Promise<string | null> {
  const job = await db.select().from(jobs).where(eq(jobs.id, cb.jobId)).get();
  if (!job || (job.status !== "succeeded" && job.status !== "failed")) return null;
  const version = job.versionId
    ? await db.select().from(photoVersions).where(eq(photoVersions.id, job.versionId)).get()
    : undefined;
  const origin = env.APP_ORIGIN.replace(/\/$/, "");
  return JSON.stringify({
    id: `evt_${job.id}`,
    type: job.status === "succeeded" ? "job.succeeded" : "job.failed",
    created: Math.floor((job.finishedAt ?? Date.now()) / 1000),
    data: {
      job: {
        id: job.id,
        photoId: job.photoId,
        kind: job.kind,
        status: job.status,
        error: job.error,
        versionId: job.versionId,
        createdAt: job.createdAt,
        finishedAt: job.finishedAt,
      },
      version: version
        ? {
            id: version.id,
            photoId: version.photoId,
            kind: version.kind,
            contentType: version.contentType,
            width: version.width,
            height: version.height,
            bytes: version.bytes,
            // A refused result carries its verdict and the keep address, never a download that would refuse.
            structure: structureView(version, `${origin}/api/v1/photos/${version.photoId}/versions/${version.id}`),
            ...apiVersionAddresses(origin, version),
          }
        : null,
    },
  });
}

function backoff(attempts: number): number {
  return BACKOFF_MS[Math.min(attempts - 1, BACKOFF_MS.length - 1)] ?? BACKOFF_MS[0]!;
}

/**
 * Sends every callback that is due; returns how many were tried (from the alarm, outside the serial queue:
 * a slow receiver never holds up the user's credit changes).
 */
export async function deliverDue(
  env: Env,
  db: Database,
  userId: string,
  now: number,
  fetcher: typeof fetch = fetch,
): Promise<number> {
  const due = await db
    .select()
    .from(apiCallbacks)
    .where(
      and(
        eq(apiCallbacks.userId, userId),
        eq(apiCallbacks.status, "pending"),
        isNotNull(apiCallbacks.nextAt),
        lte(apiCallbacks.nextAt, now),
      ),
    )
    .orderBy(asc(apiCallbacks.nextAt))
    .limit(BATCH)
    .all();
  for (const cb of due) {
    // Hold the row for this attempt.
    const held = await db
      .update(apiCallbacks)
      .set({ nextAt: now + LEASE_MS })
      .where(
        and(eq(apiCallbacks.jobId, cb.jobId), eq(apiCallbacks.status, "pending"), eq(apiCallbacks.nextAt, cb.nextAt!)),
      )
      .run();
    if (held.meta.changes !== 1) continue;
    const settle = (fields: Partial<ApiCallback>) =>
      db.update(apiCallbacks).set(fields).where(eq(apiCallbacks.jobId, cb.jobId));
    // A failed delivery (or one given up) is counted for the operations page in the same write.
    const settleFailed = (fields: Partial<ApiCallback>, cause: string) =>
      db.batch([settle(fields), countStatement(db, now, "callback_failed", cause)]);
    const key = await db
      .select({
        revokedAt: apiKeys.revokedAt,
        callbackSecret: apiKeys.callbackSecret,
        callbackSecretKey: apiKeys.callbackSecretKey,
        previousCallbackSecret: apiKeys.previousCallbackSecret,
        previousCallbackSecretKey: apiKeys.previousCallbackSecretKey,
        previousCallbackUntil: apiKeys.previousCallbackUntil,
      })
      .from(apiKeys)
      .where(eq(apiKeys.id, cb.apiKeyId))
      .get();
    if (!key || key.revokedAt !== null) {
      await settleFailed(
        { status: "failed", nextAt: null, lastError: "The API key was revoked; the callback was not sent." },
        "key_revoked",
      );
      continue;
    }
    const payload = cb.payload ?? (await eventFor(db, env, cb));
    if (payload === null) {
      await settleFailed({ status: "failed", nextAt: null, lastError: "The job no longer exists." }, "job_gone");
      continue;
    }
    // The key's own secret (docs/decisions/0182-signing-keys-rotate.md), and for a day after a rotation the one it
    // replaced (ADR 0350); unreadable only when the signing key it is sealed under was removed before the daily
    // maintenance resealed it.
    const secret = await signingSecrets(env, cb.apiKeyId, key);
    if (secret === null) {
      await settleFailed({ status: "failed", nextAt: null, lastError: UNREADABLE_SECRET }, "secret_unreadable");
      continue;
    }
    const attempts = cb.attempts + 1;
    const t = Math.floor(Date.now() / 1000);
    const signature = await signatureHeader(secret, t, payload);
    const res = await guardedFetch(cb.url, urlPolicy(env, fetcher), {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "User-Agent": "Stagewise-Callbacks/1",
        [SIGNATURE_HEADER]: signature,
      },
      body: payload,
      timeoutMs: ATTEMPT_TIMEOUT_MS,
      maxRedirects: 0,
      // Only the status is read.
      maxBodyBytes: 64 * 1024,
      fetchImpl: fetcher,
    });
    let status: number | null = null;
    let error: string | null = null;
    if (res.ok) {
      status = res.response.status;
      await res.response.body?.cancel();
      if (status < 200 || status >= 300) error = `The receiver answered ${status}.`;
    } else {
      error = res.reason;
    }
    const base = { payload, attempts, lastAttemptAt: now, lastStatus: status, lastError: error };
    if (error === null) {
      await settle({ ...base, status: "delivered", nextAt: null, deliveredAt: now });
    } else {
      const next = now + backoff(attempts);
      const giveUp = next > (cb.finishedAt ?? cb.createdAt) + CALLBACK_WINDOW_MS;
      await settleFailed(
        { ...base, status: giveUp ? "failed" : "pending", nextAt: giveUp ? null : next },
        giveUp ? "gave_up" : "will_retry",
      );
    }
  }
  return due.length;
}
