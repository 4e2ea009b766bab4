import { EnvelopeError, eventsOf, itemJson, parseEnvelope } from "@emulators/sentry-envelope";
import { describe, expect, it } from "vitest";

// The sink emulator's parser against the full examples of Sentry's published envelope documentation
// (develop.sentry.dev, "Envelopes", "Full Examples"), byte for byte.

const text = new TextEncoder();
function bytes(...parts: (string | number[])[]): Uint8Array {
  const chunks = parts.map((p) => (typeof p === "string" ? text.encode(p) : new Uint8Array(p)));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

const HEADER =
  '{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","dsn":"https://e12d836b15bb49d7bbf99e64295d995b:@sentry.io/42"}\n';
const ATTACHMENT = '{"type":"attachment","length":10,"content_type":"text/plain","filename":"hello.txt"}\n';
// "\xef\xbb\xbfHello\r\n": a byte-order mark, then a Windows newline that the length includes.
const HELLO = [0xef, 0xbb, 0xbf, ...text.encode("Hello\r\n")];
const EVENT =
  '{"type":"event","length":41,"content_type":"application/json","filename":"application.log"}\n{"message":"hello world","level":"error"}';

describe("the Sentry envelope parser", () => {
  it("reads the published envelope with 2 items, with and without the last newline", () => {
    for (const tail of ["\n", ""]) {
      const envelope = parseEnvelope(bytes(HEADER, ATTACHMENT, HELLO, "\n", EVENT, tail));
      expect(envelope.header).toEqual({
        event_id: "9ec79c33ec9942ab8353589fcb2e04dc",
        dsn: "https://e12d836b15bb49d7bbf99e64295d995b:@sentry.io/42",
      });
      expect(envelope.items).toHaveLength(2);
      expect(envelope.items[0]!.header).toEqual({
        type: "attachment",
        length: 10,
        content_type: "text/plain",
        filename: "hello.txt",
      });
      expect([...envelope.items[0]!.payload]).toEqual(HELLO);
      expect(itemJson(envelope.items[1]!)).toEqual({ message: "hello world", level: "error" });
      expect(eventsOf(envelope)).toEqual([{ message: "hello world", level: "error" }]);
    }
  });

  it("reads the published envelopes with 2 empty attachments, with and without the last newline", () => {
    for (const tail of ["\n", ""]) {
      const envelope = parseEnvelope(
        bytes(
          '{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc"}\n{"type":"attachment","length":0}\n\n',
          `{"type":"attachment","length":0}\n${tail}`,
        ),
      );
      expect(envelope.items.map((i) => i.payload.length)).toEqual([0, 0]);
    }
  });

  it("reads items of implicit length, ended by a newline or by the end", () => {
    for (const tail of ["\n", ""]) {
      const envelope = parseEnvelope(
        bytes(`{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc"}\n{"type":"attachment"}\nhelloworld${tail}`),
      );
      expect(envelope.items).toHaveLength(1);
      expect(new TextDecoder().decode(envelope.items[0]!.payload)).toBe("helloworld");
    }
    const session = parseEnvelope(
      bytes('{}\n{"type":"session"}\n{"started": "2020-02-07T14:16:00Z","attrs":{"release":"sentry-test@1.0.0"}}'),
    );
    expect(session.header).toEqual({});
    expect(itemJson(session.items[0]!)).toEqual({
      started: "2020-02-07T14:16:00Z",
      attrs: { release: "sentry-test@1.0.0" },
    });
  });

  it("refuses malformed envelopes: a length past the end, a payload longer than its length, a header not JSON", () => {
    const event = (length: number) =>
      bytes(HEADER, `{"type":"event","length":${length}}\n{"message":"hello world","level":"error"}`);
    expect(() => parseEnvelope(event(42))).toThrow(EnvelopeError);
    expect(() => parseEnvelope(event(40))).toThrow(EnvelopeError);
    expect(() => parseEnvelope(bytes(HEADER, "THIS IS NOT JSON\n{}"))).toThrow(EnvelopeError);
    expect(() => parseEnvelope(bytes("{}\n{}"))).toThrow(EnvelopeError);
    expect(parseEnvelope(bytes("{}")).items).toEqual([]);
  });
});
