import type { IncomingMessage, ServerResponse } from "node:http";

// A small route table for the emulators: method + path pattern -> handler.
// Patterns are literal segments and `:name` parameters ("/v1/customers/:id").

export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  body: Buffer;
  params: Record<string, string>;
}

export type RouteHandler = (ctx: RouteContext) => void | Promise<void>;

export interface Route {
  method: string;
  pattern: string;
  handler: RouteHandler;
}

export function route(method: string, pattern: string, handler: RouteHandler): Route {
  return { method, pattern, handler };
}

function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split("/").filter(Boolean);
  const got = path.split("/").filter(Boolean);
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const g = got[i]!;
    if (w.startsWith(":")) {
      if (!/^[\w-]+$/.test(g)) return null;
      params[w.slice(1)] = g;
    } else if (w !== g) return null;
  }
  return params;
}

/** The first route whose method and pattern match, with its parameters; null if none does. */
export function findRoute(
  routes: readonly Route[],
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } | null {
  for (const r of routes) {
    if (r.method !== method) continue;
    const params = match(r.pattern, path);
    if (params) return { route: r, params };
  }
  return null;
}
