import { failureJson } from "@workers/http/result";
import { IDEMPOTENCY_HEADER, idempotencyKey } from "@workers/services/api-idempotency";
import type { ApiCaller } from "@workers/services/api-keys";

// What the JSON routes share about their answers: a person's data is never kept by a cache, and a request sent
// again under its Idempotency-Key (a page's job request, a re-roll, the public API's writes) is checked the same
// way and marked the same way when it is answered with what the first sending did
// (docs/decisions/0148-page-job-requests-sent-once.md, 0120-public-api.md).

/** A person's data: kept by no cache, shared or the browser's. */
export const NO_STORE = { "Cache-Control": "private, no-store" };

/** The request's Idempotency-Key, checked: the key (null when absent), or the 400 answer when malformed. */
export function requestKey(headers: Headers): { key: string | null } | Response {
  const key = idempotencyKey(headers.get(IDEMPOTENCY_HEADER));
  return "ok" in key ? failureJson(key) : key;
}

/**
 * The public API's Idempotency-Key, in the caller's own namespace: a team's keys share one runner (ADR 0295), so a
 * team key's names are its own, and key A sending a name key B used starts its own request (ADR 0348).
 */
export function callerRequestKey(headers: Headers, caller: ApiCaller): { key: string | null } | Response {
  const key = requestKey(headers);
  if (key instanceof Response || key.key === null || !caller.team) return key;
  return { key: `key:${caller.keyId}:${key.key}` };
}

/** An answer's headers: NO_STORE, and `Idempotent-Replayed: true` when it repeats an earlier sending's. */
export function answerHeaders(replayed = false): Record<string, string> {
  return replayed ? { ...NO_STORE, "Idempotent-Replayed": "true" } : { ...NO_STORE };
}
