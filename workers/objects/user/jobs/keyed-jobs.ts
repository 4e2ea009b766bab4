import { sha256Hex } from "@workers/lib/crypto";

// What names a public API job made with an Idempotency-Key (docs/decisions/0120-public-api.md), apart from the code
// that makes it (api-jobs.ts), so the services that read a key's stored answer need not load that code.

/** Stored answers of Idempotency-Keys are kept this long (workers/services/api-idempotency.ts, the daily purge). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** The key was used before with another request (a 409 in the API's words, workers/services/api-idempotency.ts). */
export const KEY_MISMATCH = "This Idempotency-Key was already used for a different request.";

/**
 * The id of the job a keyed job request creates: the same key in the same generation (the time its claim was
 * written) always names the same job, so it is charged once; once its stored answer has expired, the key's next
 * use is a new generation and names a new job.
 */
export function idempotentJobId(userId: string, key: string, generation: number): string {
  return `k${sha256Hex(`job:${userId}:${key}:${generation}`).slice(0, 31)}`;
}
