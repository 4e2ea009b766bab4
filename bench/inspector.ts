// A Chrome DevTools protocol session with a Worker through wrangler's inspector proxy (bench:profile,
// bench:pixels).

/** A Chrome DevTools protocol session with the app's Worker through wrangler's inspector proxy. */
export async function inspector(port: number) {
  const list = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as { webSocketDebuggerUrl: string }[];
  const url = list[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no Worker listed by the inspector on port ${port}`);
  // The proxy refuses an upgrade without an Origin it knows (miniflare's inspector proxy: localhost is one).
  const ws = new WebSocket(url, { headers: { Origin: "http://localhost" } } as unknown as string[]);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener("open", () => resolve(), { once: true });
    ws.addEventListener("error", () => reject(new Error(`inspector connection to ${url} failed`)), { once: true });
  });
  let id = 0;
  const pending = new Map<number, (result: unknown) => void>();
  ws.addEventListener("message", (e) => {
    const msg = JSON.parse(String(e.data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) pending.get(msg.id)?.(msg.result);
    if (msg.id !== undefined) pending.delete(msg.id);
  });
  const send = <T>(method: string, params: object = {}) =>
    new Promise<T>((resolve) => {
      const n = ++id;
      pending.set(n, resolve as (r: unknown) => void);
      ws.send(JSON.stringify({ id: n, method, params }));
    });
  return { send, close: () => ws.close() };
}

export interface CallFrame {
  functionName: string;
  url: string;
  /** 0-based, in the generated file. */
  lineNumber?: number;
  columnNumber?: number;
}

export interface Profile {
  /** µs, on the profiler's own clock (as timeDeltas). */
  startTime: number;
  endTime: number;
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}
