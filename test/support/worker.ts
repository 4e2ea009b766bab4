import { exports } from "cloudflare:workers";

const worker = (exports as unknown as { default: Fetcher }).default;

/** Sends a request through the Worker's own fetch handler. */
export function workerFetch(path: string, init: RequestInit = {}): Promise<Response> {
  return worker.fetch(new Request(new URL(path, "http://localhost"), init));
}
