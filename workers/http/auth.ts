import { safeRedirectPath } from "@workers/services/accounts/landing";
import { type CurrentUser, resolveCurrentUser, secureCookies } from "@workers/services/current-user";
import type { Deps } from "@workers/services/request-deps";
import {
  NAV_HINT_COOKIE,
  type NavHint,
  navHintCookie,
  navHintOf,
  readCookie,
  SESSION_COOKIE,
  type SessionReads,
} from "@workers/services/sessions";
import { createContext, type MiddlewareFunction, type RouterContextProvider, redirect } from "react-router";
import { isAdmin } from "~/shared/access";
import { devToolsEnabled, requestContext } from "./context";
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

/**
 * The signed-in hint a response should leave in the browser (docs/decisions/0145): who is signed in after it (none
 * when it clears the session cookie), compared with what the browser holds; a cookie only when they differ.
 */
export function navHintUpdate(
  request: Request,
  user: Pick<CurrentUser, "role" | "verified" | "credits" | "plan"> | null,
  response: Response,
  secure: boolean,
): string | null {
  const signedOut = response.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=;`));
  const wanted: NavHint | null = signedOut || !user ? null : navHintOf(user);
  const held = readCookie(request.headers.get("Cookie"), NAV_HINT_COOKIE);
  if ((held ?? null) === wanted) return null;
  return navHintCookie(wanted, secure);
}

/** Root middleware: resolves the session once per request, renews its cookie and keeps the signed-in hint in step. */
export const authMiddleware: MiddlewareFunction<Response> = async ({ request, context }, next) => {
  const rc = context.get(requestContext);
  // The page's own reads (the dashboard's) go in the same D1 statement as the session's: one round trip.
  const page = pageReads(request);
  const { user, setCookie, reads } = await sessionFor(rc.env, request, rc.deps, page?.reads);
  context.set(userContext, user);
  if (page && reads) context.set(libraryPreload, page.keep(reads));
  const response = await next();
  if (setCookie) response.headers.append("Set-Cookie", setCookie);
  const hint = navHintUpdate(request, user, response, secureCookies(rc.env, request));
  if (hint) response.headers.append("Set-Cookie", hint);
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
  if (!user || !isAdmin(user)) throw new Response("Not Found", { status: 404 });
  return user;
}

/** The 405 of a page that takes no form (React Router renders its error page with the status). */
const NO_FORM = () => new Response("Method Not Allowed", { status: 405 });

/**
 * The action of an admin page that takes no form. Without one React Router answers 405 to anyone before the loader
 * runs, which tells a stranger the page is there; this answers the loader's 404 first, and 405 only to an admin.
 */
export function adminPageTakesNoForm({ context }: { context: Readonly<RouterContextProvider> }): never {
  requireAdmin(context);
  throw NO_FORM();
}

/** The same for a development page: 404 wherever dev tools are off, as its loader answers. */
export function devPageTakesNoForm({ context }: { context: Readonly<RouterContextProvider> }): never {
  if (!devToolsEnabled(context.get(requestContext).env)) throw new Response("Not Found", { status: 404 });
  throw NO_FORM();
}
