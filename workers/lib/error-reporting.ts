import {
  CloudflareClient,
  createTransport,
  type ErrorEvent,
  type Event,
  linkedErrorsIntegration,
  Scope,
  type StackFrame,
} from "@sentry/cloudflare";
import type { ReportContext } from "./log";
import { scrub } from "./log";

// Unexpected errors go to Sentry through its Workers SDK (@sentry/cloudflare): its client builds the event and the
// envelope and sends it. Off when SENTRY_DSN is unset: no client is made and nothing is sent. The SDK's wrappers
// (withSentry, instrumentDurableObjectWithSentry) are not used: they proxy every binding and every RPC method and
// make a span per request even with no DSN, and the errors that matter most here (a job's run in the user's object)
// are caught where they happen, after the request that started them has answered. Each entry point reports
// through the log context instead (workers/lib/log.ts). docs/decisions/0183-errors-and-logs.md

interface ReportingEnv {
  SENTRY_DSN?: string;
  SENTRY_ENVIRONMENT?: string;
  SENTRY_RELEASE?: string;
  APP_ENV?: string;
}

let cached: { key: string; client: CloudflareClient } | undefined;

/** V8's "    at fn (file:line:col)" lines as Sentry frames, oldest call first (what Sentry expects). */
export function parseStack(stack: string, skipFirstLines = 0): StackFrame[] {
  const frames: StackFrame[] = [];
  for (const line of stack.split("\n").slice(skipFirstLines)) {
    const m = /^\s*at (?:(.+?) \()?(.+?):(\d+):(\d+)\)?$/.exec(line);
    if (!m) continue;
    frames.push({
      function: m[1] ?? "?",
      filename: m[2],
      lineno: Number(m[3]),
      colno: Number(m[4]),
      in_app: !m[2]!.includes("node_modules"),
    });
  }
  return frames.slice(0, 50).reverse();
}

/** What leaves for Sentry: the user's id only, the request's method and path without its query, text scrubbed. */
export function scrubEvent<T extends Event>(event: T): T {
  if (event.user) event.user = event.user.id ? { id: event.user.id } : {};
  if (event.request) {
    const url = event.request.url ? new URL(event.request.url) : undefined;
    event.request = { method: event.request.method, ...(url ? { url: `${url.origin}${url.pathname}` } : {}) };
  }
  for (const value of event.exception?.values ?? []) if (value.value) value.value = scrub(value.value);
  if (event.message) event.message = scrub(event.message);
  delete event.breadcrumbs;
  return event;
}

function clientFor(env: ReportingEnv): CloudflareClient | null {
  const dsn = env.SENTRY_DSN;
  if (!dsn) return null;
  const environment = env.SENTRY_ENVIRONMENT ?? env.APP_ENV ?? "production";
  const key = `${dsn} ${environment} ${env.SENTRY_RELEASE ?? ""}`;
  if (cached?.key === key) return cached.client;
  const client = new CloudflareClient({
    dsn,
    environment,
    release: env.SENTRY_RELEASE,
    integrations: [linkedErrorsIntegration()],
    stackParser: parseStack,
    beforeSend: (event: ErrorEvent) => scrubEvent(event),
    transport: (options) =>
      createTransport(options, async (request) => {
        const res = await fetch(options.url, { method: "POST", body: request.body as BodyInit });
        await res.body?.cancel();
        return {
          statusCode: res.status,
          headers: {
            "x-sentry-rate-limits": res.headers.get("X-Sentry-Rate-Limits"),
            "retry-after": res.headers.get("Retry-After"),
          },
        };
      }),
  });
  client.init();
  cached = { key, client };
  return client;
}

/**
 * A reporter for one entry point (a request, a cron run, an object's alarm or job run): undefined when reporting
 * is off. `waitUntil` keeps the isolate alive until the event is sent.
 */
export function reporterFor(
  env: ReportingEnv,
  waitUntil: (p: Promise<unknown>) => void,
): ((err: unknown, context: ReportContext) => void) | undefined {
  if (!env.SENTRY_DSN) return undefined;
  return (err, context) => {
    const client = clientFor(env);
    if (!client) return;
    const scope = new Scope();
    scope.setClient(client);
    if (context.requestId) scope.setTag("request_id", context.requestId);
    if (context.where) scope.setTag("where", context.where);
    if (context.jobId) scope.setTag("job_id", context.jobId);
    if (context.userId) scope.setUser({ id: context.userId });
    scope.setExtra("event", context.event);
    client.captureException(err, { mechanism: { type: "stagewise.log", handled: false } }, scope);
    waitUntil(client.flush(5_000).catch(() => false));
  };
}
