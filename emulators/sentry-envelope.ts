// Sentry's envelope format, as published in Sentry's developer documentation ("Envelopes"):
//   Envelope = Headers { "\n" Item } [ "\n" ]      Item = Headers "\n" Payload
// Each header is one line of JSON. An item header with `length` is followed by exactly that many bytes, then "\n"
// or the end; without it the payload runs to the next "\n" (or the end). Pure code on bytes (no Node API), so the
// sink emulator (emulators/sentry.ts) and the tests in workerd read envelopes with the same parser.

export interface EnvelopeItem {
  header: Record<string, unknown> & { type?: string; length?: number };
  payload: Uint8Array;
}

export interface Envelope {
  header: Record<string, unknown>;
  items: EnvelopeItem[];
}

export class EnvelopeError extends Error {}

const NEWLINE = 0x0a;
const decoder = new TextDecoder();

function headerAt(bytes: Uint8Array, start: number): { value: Record<string, unknown>; next: number } {
  let end = bytes.indexOf(NEWLINE, start);
  if (end === -1) end = bytes.length;
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes.subarray(start, end)));
  } catch {
    throw new EnvelopeError(`header at byte ${start} is not JSON`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new EnvelopeError(`header at byte ${start} is not a JSON object`);
  return { value: value as Record<string, unknown>, next: end + 1 };
}

/** Splits an envelope into its header and items; throws EnvelopeError when it is malformed. */
export function parseEnvelope(bytes: Uint8Array): Envelope {
  const first = headerAt(bytes, 0);
  const items: EnvelopeItem[] = [];
  let at = first.next;
  while (at < bytes.length) {
    // A trailing newline after the last item ends the envelope.
    if (at === bytes.length - 1 && bytes[at] === NEWLINE) break;
    const { value: header, next } = headerAt(bytes, at);
    if (next > bytes.length) throw new EnvelopeError("an item header with no payload after it");
    const length = header.length;
    let payload: Uint8Array;
    if (length !== undefined) {
      if (typeof length !== "number" || !Number.isInteger(length) || length < 0)
        throw new EnvelopeError(`item length ${String(length)} is not a whole number`);
      if (next + length > bytes.length) throw new EnvelopeError("the envelope ends before the item's length");
      payload = bytes.subarray(next, next + length);
      at = next + length;
      if (at < bytes.length && bytes[at] !== NEWLINE)
        throw new EnvelopeError("an item with a length is not followed by a newline");
      at += 1;
    } else {
      let end = bytes.indexOf(NEWLINE, next);
      if (end === -1) end = bytes.length;
      payload = bytes.subarray(next, end);
      at = end + 1;
    }
    items.push({ header: header as EnvelopeItem["header"], payload });
  }
  return { header: first.value, items };
}

/** The JSON payload of an item (an event, a check-in, a session). */
export function itemJson<T = Record<string, unknown>>(item: EnvelopeItem): T {
  return JSON.parse(decoder.decode(item.payload)) as T;
}

/** The events (error reports) an envelope carries. */
export function eventsOf(envelope: Envelope): Record<string, unknown>[] {
  return envelope.items.filter((i) => i.header.type === "event").map((i) => itemJson(i));
}
