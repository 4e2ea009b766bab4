import { connect as socketConnect } from "cloudflare:sockets";

// Plain-http requests sent to an address we already checked
// (docs/decisions/0152-ssrf-the-checked-address-is-the-one-connected-to.md).
// fetch() resolves a host name again on its own, so a name whose DNS answer
// changes between our check and the fetch (DNS rebinding) would reach another
// address. Here the TCP connection is opened to the checked IP with connect()
// from cloudflare:sockets, and HTTP/1.1 is spoken over it by hand: one
// request, `Connection: close`, headers at most 32 KiB, the body capped, the
// whole exchange under the caller's signal. No name is looked up.

export type SocketConnect = typeof socketConnect;

/** The largest response head (status line and headers) we read. */
export const MAX_HEAD_BYTES = 32 * 1024;

export class PinnedHttpError extends Error {
  constructor(
    message: string,
    readonly kind: "network" | "timeout" | "protocol" | "too-large",
  ) {
    super(message);
  }
}

export interface PinnedRequest {
  method: string;
  headers?: HeadersInit;
  body?: string | Uint8Array | null;
  signal: AbortSignal;
  /** The response body is cut off (the stream errors) past this many bytes. */
  maxBodyBytes: number;
  connect?: SocketConnect;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

function hostForConnect(address: string): string {
  return address.includes(":") ? `[${address}]` : address;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a, 0);
  out.set(b, a.byteLength);
  return out;
}

function indexOfHeadEnd(buf: Uint8Array): number {
  for (let i = 3; i < buf.byteLength; i++) {
    if (buf[i] === 10 && buf[i - 1] === 13 && buf[i - 2] === 10 && buf[i - 3] === 13) return i + 1;
  }
  return -1;
}

function requestHead(url: URL, method: string, headers: Headers, bodyLength: number | null): Uint8Array {
  const lines = [`${method} ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`];
  for (const [name, value] of headers) {
    if (/^(host|connection|content-length|transfer-encoding|accept-encoding)$/i.test(name)) continue;
    lines.push(`${name}: ${value}`);
  }
  lines.push("Connection: close", "Accept-Encoding: identity");
  if (bodyLength !== null) lines.push(`Content-Length: ${bodyLength}`);
  return enc.encode(`${lines.join("\r\n")}\r\n\r\n`);
}

interface Head {
  status: number;
  headers: Headers;
}

function parseHead(bytes: Uint8Array): Head {
  const text = dec.decode(bytes);
  const lines = text.slice(0, -4).split("\r\n");
  const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0] ?? "");
  if (!m) throw new PinnedHttpError("The address did not answer with HTTP.", "protocol");
  const headers = new Headers();
  for (const line of lines.slice(1)) {
    const h = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*(.*?)[ \t]*$/.exec(line);
    if (!h) throw new PinnedHttpError("The address answered with a malformed header.", "protocol");
    try {
      headers.append(h[1]!, h[2]!);
    } catch {
      throw new PinnedHttpError("The address answered with a malformed header.", "protocol");
    }
  }
  return { status: Number(m[1]), headers };
}

/** How the body is delimited: a length, chunks, or the end of the connection. */
type Framing = { kind: "none" } | { kind: "length"; length: number } | { kind: "chunked" } | { kind: "close" };

function framing(head: Head, method: string): Framing {
  if (method === "HEAD" || head.status === 204 || head.status === 304) return { kind: "none" };
  const te = head.headers.get("Transfer-Encoding");
  if (te !== null) {
    const codings = te
      .toLowerCase()
      .split(",")
      .map((s) => s.trim());
    return codings.at(-1) === "chunked" ? { kind: "chunked" } : { kind: "close" };
  }
  const cl = head.headers.get("Content-Length");
  if (cl !== null) {
    const values = [...new Set(cl.split(",").map((s) => s.trim()))];
    if (values.length !== 1 || !/^\d{1,15}$/.test(values[0]!)) {
      throw new PinnedHttpError("The address answered with a malformed Content-Length.", "protocol");
    }
    return { kind: "length", length: Number(values[0]) };
  }
  return { kind: "close" };
}

/**
 * Sends one http request to `addresses` (checked IPs, tried in order until one accepts the connection) and answers
 * with a Response whose body streams from the socket. Throws PinnedHttpError.
 */
export async function pinnedHttpRequest(url: URL, addresses: readonly string[], req: PinnedRequest): Promise<Response> {
  if (url.protocol !== "http:") throw new PinnedHttpError("Only http is spoken over a pinned socket.", "protocol");
  const connect = req.connect ?? socketConnect;
  const port = url.port ? Number(url.port) : 80;
  const { signal } = req;
  if (signal.aborted) throw new PinnedHttpError("The address did not answer in time.", "timeout");

  let socket: ReturnType<SocketConnect> | null = null;
  for (const address of addresses) {
    const candidate = connect({ hostname: hostForConnect(address), port }, { allowHalfOpen: false });
    try {
      await abortable(candidate.opened, signal);
      socket = candidate;
      break;
    } catch {
      await candidate.close().catch(() => undefined);
      if (signal.aborted) throw new PinnedHttpError("The address did not answer in time.", "timeout");
    }
  }
  if (!socket) throw new PinnedHttpError("The address could not be reached.", "network");
  const open = socket;
  const closeSocket = () => open.close().catch(() => undefined);
  const onAbort = () => void closeSocket();
  signal.addEventListener("abort", onAbort, { once: true });

  const reader = open.readable.getReader();
  try {
    const body = typeof req.body === "string" ? enc.encode(req.body) : (req.body ?? null);
    const writer = open.writable.getWriter();
    await abortable(
      writer.write(requestHead(url, req.method, new Headers(req.headers), body ? body.byteLength : null)),
      signal,
    );
    if (body && body.byteLength > 0) await abortable(writer.write(body), signal);
    writer.releaseLock();

    // The head, skipping interim 1xx answers.
    let buf: Uint8Array = new Uint8Array(0);
    let head: Head;
    for (;;) {
      let end = indexOfHeadEnd(buf);
      while (end < 0) {
        if (buf.byteLength > MAX_HEAD_BYTES)
          throw new PinnedHttpError("The address's answer headers are too large.", "too-large");
        const { done, value } = await abortable(reader.read(), signal);
        if (done) throw new PinnedHttpError("The address closed the connection without an answer.", "network");
        buf = concat(buf, value);
        end = indexOfHeadEnd(buf);
      }
      if (end > MAX_HEAD_BYTES) throw new PinnedHttpError("The address's answer headers are too large.", "too-large");
      head = parseHead(buf.subarray(0, end));
      buf = buf.subarray(end);
      if (head.status >= 200) break;
      if (head.status === 101) throw new PinnedHttpError("The address tried to switch protocols.", "protocol");
    }
    if (head.status > 599) throw new PinnedHttpError("The address did not answer with HTTP.", "protocol");
    const frame = framing(head, req.method);
    if (frame.kind === "none") {
      signal.removeEventListener("abort", onAbort);
      reader.releaseLock();
      await closeSocket();
      return new Response(null, { status: head.status, headers: head.headers });
    }
    const stream = bodyStream(reader, buf, frame, req.maxBodyBytes, signal, () => {
      signal.removeEventListener("abort", onAbort);
      void closeSocket();
    });
    return new Response(stream, { status: head.status, headers: head.headers });
  } catch (err) {
    signal.removeEventListener("abort", onAbort);
    await closeSocket();
    if (err instanceof PinnedHttpError) throw err;
    if (signal.aborted) throw new PinnedHttpError("The address did not answer in time.", "timeout");
    throw new PinnedHttpError("The address could not be reached.", "network");
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new PinnedHttpError("The address did not answer in time.", "timeout"));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new PinnedHttpError("The address did not answer in time.", "timeout"));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

/** The response body, de-chunked and counted, read from the socket as the consumer pulls. */
function bodyStream(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  initial: Uint8Array,
  frame: Exclude<Framing, { kind: "none" }>,
  maxBytes: number,
  signal: AbortSignal,
  done: () => void,
): ReadableStream<Uint8Array> {
  let buf = initial;
  let delivered = 0;
  let remaining = frame.kind === "length" ? frame.length : 0;
  /** For chunked bodies: bytes left in the current chunk, or null between chunks. */
  let chunkLeft: number | null = null;
  let finished = false;

  const more = async (): Promise<boolean> => {
    const { done: eof, value } = await abortable(reader.read(), signal);
    if (eof) return false;
    buf = concat(buf, value);
    return true;
  };
  const take = (n: number): Uint8Array => {
    const out = buf.slice(0, n);
    buf = buf.subarray(n);
    return out;
  };
  const line = async (): Promise<string> => {
    for (;;) {
      for (let i = 1; i < buf.byteLength; i++) {
        if (buf[i] === 10 && buf[i - 1] === 13) {
          const text = dec.decode(buf.subarray(0, i - 1));
          buf = buf.subarray(i + 1);
          return text;
        }
      }
      if (buf.byteLength > 4096) throw new PinnedHttpError("The address sent a malformed chunk.", "protocol");
      if (!(await more())) throw new PinnedHttpError("The connection ended in the middle of the answer.", "network");
    }
  };

  const next = async (): Promise<Uint8Array | null> => {
    if (frame.kind === "length") {
      if (remaining === 0) return null;
      if (buf.byteLength === 0 && !(await more()))
        throw new PinnedHttpError("The connection ended in the middle of the answer.", "network");
      const out = take(Math.min(remaining, buf.byteLength));
      remaining -= out.byteLength;
      return out;
    }
    if (frame.kind === "close") {
      if (buf.byteLength === 0 && !(await more())) return null;
      return take(buf.byteLength);
    }
    // chunked
    if (chunkLeft === null) {
      const size = (await line()).split(";")[0]!.trim();
      if (!/^[0-9a-fA-F]{1,8}$/.test(size))
        throw new PinnedHttpError("The address sent a malformed chunk.", "protocol");
      chunkLeft = Number.parseInt(size, 16);
      if (chunkLeft === 0) {
        // Trailers, up to the empty line.
        while ((await line()) !== "") {
          /* skip */
        }
        return null;
      }
    }
    if (buf.byteLength === 0 && !(await more()))
      throw new PinnedHttpError("The connection ended in the middle of the answer.", "network");
    const out = take(Math.min(chunkLeft, buf.byteLength));
    chunkLeft -= out.byteLength;
    if (chunkLeft === 0) {
      if ((await line()) !== "") throw new PinnedHttpError("The address sent a malformed chunk.", "protocol");
      chunkLeft = null;
    }
    return out;
  };

  const finish = () => {
    if (finished) return;
    finished = true;
    try {
      reader.releaseLock();
    } catch {
      // A read is still pending; closing the socket ends it.
    }
    done();
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        for (;;) {
          const chunk = await next();
          if (chunk === null) {
            finish();
            controller.close();
            return;
          }
          if (chunk.byteLength === 0) continue;
          delivered += chunk.byteLength;
          if (delivered > maxBytes) throw new PinnedHttpError("The answer is larger than allowed.", "too-large");
          controller.enqueue(chunk);
          return;
        }
      } catch (err) {
        finish();
        controller.error(
          err instanceof PinnedHttpError ? err : new PinnedHttpError("The connection dropped.", "network"),
        );
      }
    },
    cancel() {
      finish();
    },
  });
}
