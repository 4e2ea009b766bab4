import type { Database } from "@db/client";
import type { Deps } from "@workers/services/request-deps";
import { createContext, type RouterContextProvider } from "react-router";

/** What every loader and action gets for one request (Hono routes get the same `deps` as `c.get("deps")`). */
export interface RequestContext {
  env: Env;
  ctx: ExecutionContext;
  db: Database;
  /** The request's dependencies, built once in workers/http/build-deps.ts. */
  deps: Deps;
  /** CSP nonce for this response's inline scripts. */
  nonce: string;
}

export const requestContext = createContext<RequestContext>();

/** The request's dependencies, for a loader or action. */
export function getDeps(context: Readonly<RouterContextProvider>): Deps {
  return context.get(requestContext).deps;
}

export { devToolsEnabled } from "@workers/lib/dev-tools";
