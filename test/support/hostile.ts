import { env } from "cloudflare:workers";
import { stateDigest } from "@workers/services/fixtures";
import { workerFetch } from "./worker";

// What the hand-written hostile suites (test/integration/hostile-*.test.ts) share: the stored state to compare
// before and after an attack, a request as a signed-in page sends it, and a body past every route's limit.

/** A digest of every D1 table and R2 object: equal before and after, the attack changed nothing. */
export const stateNow = () => stateDigest({ env, bucket: env.PHOTOS });

/** A request through the Worker with the user's session cookie and our own Origin. */
export const sendAs = (cookie: string, path: string, init: RequestInit = {}) =>
  workerFetch(path, { ...init, headers: { Cookie: cookie, Origin: "http://localhost", ...init.headers } });

/** A POST of about 2.6 MB of JSON that opens with `start`, sent in chunks with no length: past every body limit. */
export function chunkedOversized(start: string): RequestInit {
  const chunk = new TextEncoder().encode(`${start}${"a".repeat(64 * 1024)}`);
  const body = new ReadableStream({
    start(c) {
      for (let i = 0; i < 40; i++) c.enqueue(chunk);
      c.close();
    },
  });
  // @ts-expect-error: a streamed body needs duplex, which RequestInit's type does not list.
  return { method: "POST", headers: { "Content-Type": "application/json" }, body, duplex: "half" };
}
