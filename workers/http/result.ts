import type { ContentfulStatusCode } from "hono/utils/http-status";
import { data } from "react-router";
import type { Failure, FailureCode } from "~/shared/result";

// The one mapping from a service failure to HTTP: its status, and the
// Retry-After header of a 429. Hono routes answer JSON with failureJson();
// React Router actions return failureData() so the page shows the message and
// field errors next to the form, with the same status.

export const STATUS: Record<FailureCode, ContentfulStatusCode> = {
  invalid: 400,
  unauthenticated: 401,
  insufficient_credits: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  upgrade_required: 426,
  conflict: 409,
  gone: 410,
  too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  unavailable: 503,
};

/** The code whose status is `status`, for an answer made outside the services (Hono's own exceptions); null for none. */
export function codeForStatus(status: number): FailureCode | null {
  return (Object.keys(STATUS) as FailureCode[]).find((code) => STATUS[code] === status) ?? null;
}

export function failureHeaders(f: Failure, allow?: readonly string[]): Headers {
  const headers = new Headers({ "Cache-Control": "no-store" });
  if (f.retryAfterSeconds !== undefined)
    headers.set("Retry-After", String(Math.max(1, Math.ceil(f.retryAfterSeconds))));
  if (f.code === "method_not_allowed" && allow) headers.set("Allow", allow.join(", "));
  return headers;
}

/** A JSON answer for an API route: `{ ok: false, code, error, fieldErrors? }` with the code's status. */
export function failureJson(f: Failure, allow?: readonly string[]): Response {
  return Response.json(f, { status: STATUS[f.code], headers: failureHeaders(f, allow) });
}

/** The same failure as a React Router action's answer. */
export function failureData<F extends Failure>(f: F, allow?: readonly string[]) {
  return data(f, { status: STATUS[f.code], headers: failureHeaders(f, allow) });
}
