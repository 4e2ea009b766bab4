import { safeRedirectPath } from "@workers/services/accounts/landing";
import { type CurrentUser, resolveCurrentUser, secureCookies } from "@workers/services/current-user";
import type { Deps } from "@workers/services/deps";
import type { SessionReads } from "@workers/services/sessions";
import { createContext, type MiddlewareFunction, type RouterContextProvider, redirect } from "react-router";
import { requestContext } from "./context";
import { libraryPreload, pageReads } from "./page-reads";

export const userContext = createContext<CurrentUser | null>(null);

/** The signed-in user of a request, and the cookie to send when the session was extended (pages and /api alike). */
export function sessionFor(
  env: Env,
  request: Request,
  deps: Pick<Deps, "db" | "defer">,
  reads?: SessionReads,
): Promise<{ user: CurrentUser | null; setCookie: string | null; reads: Record<string, unknown> | null }> {
  return resolveCurrentUser(deps.db, request, {
    secureCookies: secureCookies(env, request),
    waitUntil: deps.defer,
    reads,
  });
}

/** Root middleware: resolves the session once per request and renews its cookie. */
export const authMiddleware: MiddlewareFunction<Response> = async ({ request, context }, next) => {
  const rc = context.get(requestContext);
  // The page's own reads (the dashboard's) go in the same D1 statement as the session's: one round trip.
  const page = pageReads(request, rc);
  const { user, setCookie, reads } = await sessionFor(rc.env, request, rc.deps, page?.reads);
  context.set(userContext, user);
  if (page && reads) context.set(libraryPreload, page.keep(reads));
  const response = await next();
  if (setCookie) response.headers.append("Set-Cookie", setCookie);
  return response;
};

export function getUser(context: Readonly<RouterContextProvider>): CurrentUser | null {
  return context.get(userContext);
}

/** To /login, remembering the page (never a .data address of a client navigation) to come back to. */
export function loginRedirect(request: Request): Response {
  const url = new URL(request.url);
  // Only the path and query: the request's own host is whatever the client sent.
  const back = safeRedirectPath(url.pathname + url.search);
  const params = new URLSearchParams(back ? { redirectTo: back } : {});
  return redirect(`/login${back ? `?${params}` : ""}`);
}

/** A signed-in, verified user, or a redirect to /login that comes back here. */
export function requireUser(context: Readonly<RouterContextProvider>, request: Request): CurrentUser {
  const user = getUser(context);
  if (!user?.verified) throw loginRedirect(request);
  return user;
}

/** The admin role, or a 404 that does not reveal the page exists. */
export function requireAdmin(context: Readonly<RouterContextProvider>): CurrentUser {
  const user = getUser(context);
  if (!user?.verified || user.role !== "admin") throw new Response("Not Found", { status: 404 });
  return user;
}
