import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { cronRuns, jobs } from "@db/schema";
import { type Envelope, eventsOf, parseEnvelope } from "@emulators/sentry-envelope";
import { db, signedIn } from "@test/support/factories";
import { makePhoto } from "@test/support/photos";
import { stubProvider } from "@test/support/provider-stub";
import { takeConsoleErrors } from "@test/support/setup";
import { workerFetch } from "@test/support/worker";
import worker from "@workers/app";
import { desc, eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

// Unexpected errors reach the error-reporting service (docs/decisions/0183-errors-and-logs.md). SENTRY_DSN points at
// 127.0.0.1:9 here (vitest.config.ts); the isolate's fetch is stubbed for that address, and what the SDK sends is
// read with the sink emulator's parser (emulators/sentry-envelope.ts). The provider (http://provider.test) answers
// with a response that breaks the adapter: an error nobody planned for.

const SINK = "http://127.0.0.1:9/api/1/envelope/";
let envelopes: { url: string; envelope: Envelope }[] = [];
let logLines: Record<string, unknown>[] = [];

beforeEach(() => {
  envelopes = [];
  logLines = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => {
    if (typeof line === "string" && line.startsWith("{")) logLines.push(JSON.parse(line));
  });
  const provider = stubProvider(async (req) => {
    if (!req.url.startsWith(SINK)) return null;
    envelopes.push({ url: req.url, envelope: parseEnvelope(new Uint8Array(await req.arrayBuffer())) });
    return Response.json({ id: "ok" });
  });
  provider.respond = () =>
    ({
      status: 200,
      get ok(): boolean {
        throw new TypeError("the answer broke the adapter");
      },
    }) as Response;
});

afterEach(() => {
  vi.restoreAllMocks();
});

const events = () => envelopes.flatMap((e) => eventsOf(e.envelope));

async function until<T>(read: () => T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = read();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("error reporting", () => {
  it("a job that fails unexpectedly sends one event, with the request id that started it", async () => {
    const user = await signedIn({ credits: 2 });
    const photo = await makePhoto(user.id);
    const res = await workerFetch(`/api/photos/${photo.id}/jobs`, {
      method: "POST",
      headers: { Cookie: user.cookie, "Content-Type": "application/json", Origin: "http://localhost" },
      body: JSON.stringify({ kind: "stage", roomType: "Bedroom", designStyle: "Scandinavian" }),
    });
    expect(res.status).toBe(202);
    const requestId = res.headers.get("X-Request-Id");
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    const { job } = (await res.json()) as { job: { id: string } };

    const ended = await until(() => (events().length > 0 ? events() : undefined), "an event at the sink");
    // Exactly one: nothing else arrives after it.
    await new Promise((r) => setTimeout(r, 200));
    expect(events()).toHaveLength(1);
    const [event] = ended as [Record<string, unknown>];
    expect(event.tags).toMatchObject({ request_id: requestId, where: "job", job_id: job.id });
    expect(event.user).toEqual({ id: user.id });
    const exception = (event.exception as { values: { type: string; value: string }[] }).values.at(-1)!;
    expect(exception).toMatchObject({ type: "TypeError", value: "the answer broke the adapter" });
    // The SDK's envelope: its header names the event, the sink's key is in the address.
    expect(envelopes[0]!.envelope.header.event_id).toBe(event.event_id);
    expect(envelopes[0]!.url).toContain("sentry_key=testsinkkey");

    // The job carries the request's id; it failed, refunded, with the generic message.
    const stored = await db.select().from(jobs).where(eq(jobs.id, job.id)).get();
    expect(stored?.requestId).toBe(requestId);
    expect(stored?.status).toBe("failed");
    // Every line is JSON with the request id, the provider call's included; the error line too.
    const call = logLines.find((l) => l.event === "provider call");
    expect(call).toMatchObject({ level: "info", requestId, userId: user.id, jobId: job.id, op: "stage" });
    const errors = takeConsoleErrors().map((args) => JSON.parse(String(args[0])) as Record<string, unknown>);
    expect(errors).toEqual([
      expect.objectContaining({ level: "error", event: "job failed unexpectedly", requestId, jobId: job.id }),
    ]);
  });

  it("a failing cron run sends one event with its run's id when SENTRY_DSN is set, and nothing when it is not", async () => {
    // The sessions purge fails (its DELETE is refused); the other tasks run.
    const failingDb = new Proxy(env.DB, {
      get(target, prop) {
        if (prop === "prepare")
          return (query: string) => {
            if (/^delete from "sessions"/i.test(query)) throw new Error("D1 refused the sessions purge");
            return target.prepare(query);
          };
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    for (const dsn of [env.SENTRY_DSN, undefined]) {
      envelopes = [];
      const ctx = createExecutionContext();
      const run = worker.scheduled(
        createScheduledController({ scheduledTime: Date.now(), cron: "17 3 * * *" }),
        { ...env, DB: failingDb, SENTRY_DSN: dsn },
        ctx,
      );
      await expect(run).rejects.toThrow("daily maintenance failed: sessions");
      await waitOnExecutionContext(ctx);
      const last = await db.select().from(cronRuns).orderBy(desc(cronRuns.id)).get();
      expect(last).toMatchObject({ ok: false, failed: "sessions" });
      if (dsn) {
        expect(events()).toHaveLength(1);
        expect(events()[0]!.tags).toMatchObject({ request_id: last!.requestId, where: "scheduled" });
      } else expect(envelopes).toEqual([]);
      expect(takeConsoleErrors()).toHaveLength(1);
    }
  });
});
