import { gunzipSync } from "node:zlib";
import { json, listen } from "./http.ts";
import { type Envelope, EnvelopeError, eventsOf, parseEnvelope } from "./sentry-envelope.ts";

// The error-reporting sink: speaks the part of Sentry's ingest API the SDK uses (POST /api/<project>/envelope/,
// the key in `sentry_key` or X-Sentry-Auth), parses each envelope as Sentry's documentation publishes it
// (sentry-envelope.ts), keeps what arrived and prints one line per event, so `npm start` shows the Worker's errors
// in its terminal. The DSN that points at it is http://<key>@127.0.0.1:<port>/1 (emulators/index.ts).

export interface ReceivedEnvelope {
  receivedAt: string;
  project: string;
  header: Envelope["header"];
  /** Each item's type, in order (event, check_in, client_report, …). */
  types: string[];
  events: Record<string, unknown>[];
}

function keyOf(url: URL, auth: string | undefined): string | null {
  const fromQuery = url.searchParams.get("sentry_key");
  if (fromQuery) return fromQuery;
  return /sentry_key=([^,\s]+)/.exec(auth ?? "")?.[1] ?? null;
}

/** One line for the terminal: what failed and under which request. */
function summary(event: Record<string, unknown>): string {
  const exception = (event.exception as { values?: { type?: string; value?: string }[] } | undefined)?.values?.at(-1);
  const what = exception ? `${exception.type}: ${exception.value}` : String(event.message ?? "event");
  const tags = (event.tags ?? {}) as Record<string, string>;
  return `[sentry] ${what} (request ${tags.request_id ?? "-"}, where ${tags.where ?? "-"})`;
}

export async function startSentryEmulator(opts: { port: number; publicKey: string; quiet?: boolean }) {
  const received: ReceivedEnvelope[] = [];
  return listen("sentry", opts.port, (req, body, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const match = /^\/api\/([^/]+)\/envelope\/?$/.exec(url.pathname);
    if (req.method === "POST" && match) {
      if (keyOf(url, req.headers["x-sentry-auth"] as string | undefined) !== opts.publicKey)
        return json(res, 401, { detail: "invalid sentry_key" });
      let envelope: Envelope;
      try {
        const bytes = req.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body;
        envelope = parseEnvelope(new Uint8Array(bytes));
      } catch (err) {
        if (err instanceof EnvelopeError) return json(res, 400, { detail: `invalid envelope: ${err.message}` });
        throw err;
      }
      const entry: ReceivedEnvelope = {
        receivedAt: new Date().toISOString(),
        project: match[1]!,
        header: envelope.header,
        types: envelope.items.map((i) => String(i.header.type)),
        events: eventsOf(envelope),
      };
      received.push(entry);
      if (received.length > 500) received.shift();
      if (!opts.quiet) for (const event of entry.events) console.log(summary(event));
      return json(res, 200, { id: envelope.header.event_id ?? null });
    }
    if (req.method === "GET" && url.pathname === "/_emulator/envelopes") return json(res, 200, received);
    if (req.method === "GET" && url.pathname === "/_emulator/events") {
      const requestId = url.searchParams.get("request_id");
      const events = received.flatMap((e) => e.events);
      return json(
        res,
        200,
        requestId
          ? events.filter((e) => (e.tags as Record<string, string> | undefined)?.request_id === requestId)
          : events,
      );
    }
    if (req.method === "DELETE" && url.pathname === "/_emulator/envelopes") {
      received.length = 0;
      return json(res, 200, { ok: true });
    }
    return json(res, 404, { error: "not found" });
  });
}
