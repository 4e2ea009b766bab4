import { expect } from "vitest";
import { FAILURE_CODES } from "../../../app/shared/result.ts";
import { baseUrl } from "../browser.ts";

// The hostile-input harness: each case is sent to the running production
// build; it must answer 4xx (or the listed status) with a clear message, never
// 5xx, and leave D1 and R2 exactly as they were (GET /api/dev/state digests).

export interface HostileCase {
  name: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** A string is sent as is; an object is sent as JSON; FormData as a form. */
  body?: string | Record<string, unknown> | FormData | Uint8Array;
  /** Expected status; default: any 4xx. */
  status?: number;
  /** Text the answer must contain (the clear message). */
  message?: string | RegExp;
}

export async function stateDigest(): Promise<unknown> {
  const res = await fetch(`${baseUrl()}/api/dev/state`);
  if (!res.ok) throw new Error(`state digest: ${res.status}`);
  return res.json();
}

/**
 * Waits until the stored state stops moving: a job's result gets its thumbnail after the commit (at the next quiet
 * moment of the user's object, about a second later), so fixtures that ran jobs settle before the cases compare
 * digests. Two digests `quietMs` apart must match.
 */
export async function waitForQuietState(quietMs = 2500, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = JSON.stringify(await stateDigest());
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, quietMs));
    const now = JSON.stringify(await stateDigest());
    if (now === last) return;
    last = now;
  }
  throw new Error(`the stored state was still changing after ${timeoutMs} ms`);
}

export async function send(c: HostileCase): Promise<{ status: number; text: string; type: string }> {
  const headers: Record<string, string> = { Origin: baseUrl(), ...c.headers };
  let body: BodyInit | undefined;
  if (typeof c.body === "string" || c.body instanceof FormData || c.body instanceof Uint8Array)
    body = c.body as BodyInit;
  else if (c.body) {
    body = JSON.stringify(c.body);
    headers["Content-Type"] ??= "application/json";
  }
  const res = await fetch(`${baseUrl()}${c.path}`, { method: c.method, headers, body, redirect: "manual" });
  return { status: res.status, text: await res.text(), type: res.headers.get("Content-Type") ?? "" };
}

export async function expectRefusedWithoutChange(c: HostileCase): Promise<void> {
  const before = await stateDigest();
  const { status, text, type } = await send(c);
  const label = `${c.name}: ${c.method} ${c.path} answered ${status} ${text.slice(0, 200)}`;
  expect(status, label).toBeLessThan(500);
  if (c.status !== undefined) expect(status, label).toBe(c.status);
  else expect(status >= 400 && status < 500, label).toBe(true);
  if (c.message) expect(text, label).toMatch(c.message);
  if (status >= 400 && type.startsWith("application/json")) expectFailureShape(text, label);
  expect(await stateDigest(), `${label} changed stored state`).toEqual(before);
}

/**
 * A refusal in JSON is the one failure shape (docs/decisions/0101-one-body-reader-one-result.md), whichever route
 * answered: `{ ok: false, code, error }` with a code from the closed set and a sentence to show.
 */
export function expectFailureShape(text: string, label: string): void {
  const body = JSON.parse(text) as { ok?: unknown; code?: unknown; error?: unknown };
  expect(body.ok, label).toBe(false);
  expect(FAILURE_CODES, label).toContain(body.code);
  expect(typeof body.error === "string" && body.error.length > 0, label).toBe(true);
}

const big = "x".repeat(2 * 1024 * 1024);
export const HUGE_JSON = { reason: big, amount: 1 };
export const CONTROL_CHARS = "bad\u0000name\u0007\u001b[31m";
export const SQL_META = "' OR 1=1; DROP TABLE users; --";
export const TRAVERSAL = "../../../../etc/passwd";

/** A form body, as a browser without JavaScript would post it. */
export function form(fields: Record<string, string>): FormData {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.set(k, v);
  return fd;
}
