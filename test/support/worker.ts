import { exports } from "cloudflare:workers";

const worker = (exports as unknown as { default: Fetcher }).default;

/** Sends a request through the Worker's own fetch handler. */
export function workerFetch(path: string, init: RequestInit = {}): Promise<Response> {
  return worker.fetch(new Request(new URL(path, "http://localhost"), init));
}

/**
 * A public API request (`/api/v1` + `path`) under a bearer key: `json` is sent as the JSON body, `idem` as the
 * Idempotency-Key.
 */
export function apiV1(
  token: string,
  path: string,
  init: RequestInit & { json?: unknown; idem?: string } = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${token}`);
  if (init.idem) headers.set("Idempotency-Key", init.idem);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("Content-Type", "application/json");
    body = JSON.stringify(init.json);
  }
  return workerFetch(`/api/v1${path}`, { ...init, headers, body });
}
