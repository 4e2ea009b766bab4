import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SENTRY_LOCAL_KEY } from "../../emulators/index.ts";
import { startSentryEmulator } from "../../emulators/sentry.ts";
import { log, withLogContext } from "../../workers/lib/log.ts";
import { observed } from "../../workers/lib/observed.ts";

// The local sink (emulators/sentry.ts) receiving what the Worker's reporter really sends: @sentry/cloudflare's
// client, its envelope over HTTP, parsed by the sink. docs/decisions/0183-errors-and-logs.md

let sink: Server;
let base = "";
beforeAll(async () => {
  sink = await startSentryEmulator({ port: 0, publicKey: SENTRY_LOCAL_KEY, quiet: true });
  base = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => sink.close(() => r()));
});

async function eventsFor(requestId: string): Promise<Record<string, unknown>[]> {
  return (await fetch(`${base}/_emulator/events?request_id=${requestId}`)).json() as Promise<Record<string, unknown>[]>;
}

/** Runs a failing entry point as the Worker does and waits for what it sent. */
async function failingEntry(env: { SENTRY_DSN?: string }, requestId: string): Promise<void> {
  const sent: Promise<unknown>[] = [];
  const quiet = console.error;
  console.error = () => undefined;
  try {
    await observed(
      env,
      (p) => sent.push(p),
      { where: "test", requestId, userId: "user-1" },
      async () => {
        throw new TypeError("something nobody planned for, for ann@example.com from 203.0.113.9");
      },
    ).catch(() => undefined);
  } finally {
    console.error = quiet;
  }
  await Promise.all(sent);
}

describe("the Sentry sink", () => {
  it("receives one event per unexpected error, with the request id and no personal data", async () => {
    const dsn = `http://${SENTRY_LOCAL_KEY}@127.0.0.1:${(sink.address() as AddressInfo).port}/1`;
    await failingEntry({ SENTRY_DSN: dsn }, "req-sink-1");
    const events = await eventsFor("req-sink-1");
    expect(events).toHaveLength(1);
    const event = events[0]!;
    expect(event.tags).toMatchObject({ request_id: "req-sink-1", where: "test" });
    expect(event.user).toEqual({ id: "user-1" });
    const text = JSON.stringify(event);
    expect(text).toContain("something nobody planned for");
    expect(text).not.toContain("ann@example.com");
    expect(text).not.toContain("203.0.113.9");
    const envelopes = (await (await fetch(`${base}/_emulator/envelopes`)).json()) as { header: { sdk?: unknown } }[];
    expect(envelopes.at(-1)?.header.sdk).toMatchObject({ name: "sentry.javascript.cloudflare" });
  });

  it("receives nothing when SENTRY_DSN is unset", async () => {
    const before = ((await (await fetch(`${base}/_emulator/envelopes`)).json()) as unknown[]).length;
    await failingEntry({}, "req-sink-2");
    expect(await eventsFor("req-sink-2")).toEqual([]);
    expect(((await (await fetch(`${base}/_emulator/envelopes`)).json()) as unknown[]).length).toBe(before);
  });

  it("refuses an envelope under another key, and one that is malformed", async () => {
    const post = (key: string, body: string) =>
      fetch(`${base}/api/1/envelope/?sentry_key=${key}&sentry_version=7`, { method: "POST", body });
    expect((await post("not-the-key", '{}\n{"type":"event"}\n{}')).status).toBe(401);
    expect((await post(SENTRY_LOCAL_KEY, '{}\n{"type":"event","length":99}\n{}')).status).toBe(400);
  });

  it("writes every log line as one JSON object with the request id, masking e-mails and addresses", () => {
    const lines: string[] = [];
    const keep = console.log;
    console.log = (line: string) => lines.push(line);
    try {
      withLogContext({ requestId: "req-log-1", userId: "user-9" }, () =>
        log.info("signed in", { note: "ann@example.com from 198.51.100.7", count: 2, nested: { no: 1 } }),
      );
    } finally {
      console.log = keep;
    }
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      {
        level: "info",
        event: "signed in",
        requestId: "req-log-1",
        userId: "user-9",
        note: "[email] from [ip]",
        count: 2,
      },
    ]);
  });
});
