// The one result shape of the services, read by Hono routes, React Router
// actions and the pages that show their answers (isomorphic: no server code).
// A failure carries one code from a small closed set; workers/http/result.ts
// maps each code to one HTTP status, so a route never picks a status by hand.

export const FAILURE_CODES = [
  /** The input is malformed or breaks a rule (400). */
  "invalid",
  /** No session, or an expired or forged one (401). */
  "unauthenticated",
  /** Signed in, but not allowed to do this (403). */
  "forbidden",
  /** Not there, or not yours: the two look the same (404). */
  "not_found",
  /** The method is not one this route takes (405). */
  "method_not_allowed",
  /** The address speaks another protocol: the live channel asked without a WebSocket upgrade (426). */
  "upgrade_required",
  /** It clashes with the current state: a duplicate, the last admin (409). */
  "conflict",
  /** It existed and is gone for good: a revoked link (410). */
  "gone",
  /** Not enough credits for what was asked (402). */
  "insufficient_credits",
  /** Well-formed, but its content cannot be used: a file that is not the image it claims to be (422). */
  "unprocessable",
  /** The body is larger than this route takes (413). */
  "too_large",
  /** The body is not of a media type this route reads (415). */
  "unsupported_media_type",
  /** Too many attempts; retry after `retryAfterSeconds` (429). */
  "rate_limited",
  /** An outside service (Stripe, the AI provider, e-mail) failed; nothing was changed (503). */
  "unavailable",
] as const;

export type FailureCode = (typeof FAILURE_CODES)[number];

export interface Failure<F extends string = string> {
  ok: false;
  code: FailureCode;
  /** What the person reads: a clear sentence, never a stack or an internal name. */
  error: string;
  /** Per-field messages for forms (field name -> message). */
  fieldErrors?: Partial<Record<F, string>>;
  retryAfterSeconds?: number;
}

export type Ok<T extends object = object> = { ok: true } & T;
export type Result<T extends object = object, F extends string = string> = Ok<T> | Failure<F>;

export function ok<T extends object>(value: T): Ok<T> {
  return { ok: true, ...value };
}

export function fail<F extends string = string>(
  code: FailureCode,
  error: string,
  extra: Partial<Pick<Failure<F>, "fieldErrors" | "retryAfterSeconds">> = {},
): Failure<F> {
  return { ok: false, code, error, ...extra };
}

/** The one "not there, or not yours" answer: a stranger's id and a missing one look the same. */
export const NOT_FOUND: Failure = Object.freeze(fail("not_found", "Not found."));

export function isFailure(v: unknown): v is Failure {
  return typeof v === "object" && v !== null && (v as { ok?: unknown }).ok === false && "code" in v;
}
