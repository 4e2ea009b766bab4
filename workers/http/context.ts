import type { Database } from "@db/client";
import { createContext } from "react-router";

/** What every loader, action and Hono route gets for one request. */
export interface RequestContext {
  env: Env;
  ctx: ExecutionContext;
  db: Database;
  /** CSP nonce for this response's inline scripts. */
  nonce: string;
}

export const requestContext = createContext<RequestContext>();

export function devToolsEnabled(env: Pick<Env, "DEV_TOOLS" | "APP_ENV">): boolean {
  return env.DEV_TOOLS === "1" && env.APP_ENV !== "production";
}
