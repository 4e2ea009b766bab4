import { canStage } from "~/shared/access";

// Where a person lands after signing in. A return address comes from the
// query (?redirectTo=), a form field, a verification e-mail's token or the
// Google sign-in's state cookie; every one of them goes through
// safeRedirectPath() before it reaches a Location header.

/** Only used to resolve a return address: anything that leaves this origin is refused. */
const BASE = "https://stagewise.invalid";
/** React Router's single-fetch data requests: /dashboard.data, /_root.data, ?_routes=… */
const DATA_SUFFIX = /\.data$/;
const DATA_PARAMS = ["_routes", "_data", "index"];

/**
 * A same-origin path to come back to after signing in, or null. The value is
 * resolved with the URL parser the way a browser would resolve it (which drops
 * tabs and newlines and reads backslashes as slashes), and kept only when it
 * stays on our origin; the answer is the parser's own serialisation, so it is
 * always a valid header value. A data request's address becomes its page's.
 * `origin` (the configured APP_ORIGIN) also allows absolute addresses on it.
 */
export function safeRedirectPath(value: string | null | undefined, origin?: string): string | null {
  if (typeof value !== "string" || value.length === 0 || value.length > 2000) return null;
  let url: URL;
  let own: string;
  try {
    own = origin ? new URL(origin).origin : BASE;
    // Relative forms only, unless it names our own origin in full.
    const relative = /^[\t\n\r ]*\//.test(value) && !/^[\t\n\r ]*[/\\][\t\n\r ]*[/\\]/.test(value);
    if (!relative && !(origin && value.startsWith(`${own}/`))) return null;
    url = new URL(value, `${own}/`);
  } catch {
    return null;
  }
  if (url.origin !== own || url.username || url.password) return null;
  let path = url.pathname.replace(DATA_SUFFIX, "");
  if (path === "/_root") path = "/";
  for (const p of DATA_PARAMS) url.searchParams.delete(p);
  const search = url.searchParams.toString();
  return `${path || "/"}${search ? `?${search}` : ""}${url.hash}`;
}

/** A remembered return address worth going to after a sign-in (never back to a sign-in page, which would loop). */
export function returnPath(redirectTo: string | null | undefined): string | null {
  const back = safeRedirectPath(redirectTo);
  return back && !/^\/(login|auth|logout)(\/|\?|$)/.test(back) ? back : null;
}

/**
 * Where an e-mail sign-in lands (docs/product.md): a remembered return
 * address wins; otherwise /plans for someone with neither plan nor credits,
 * /dashboard for everyone else.
 */
export function landingPath(user: { plan: string | null; credits: number }, redirectTo?: string | null): string {
  return (
    returnPath(redirectTo) ??
    (canStage({ hasPlan: user.plan !== null, credits: user.credits }) ? "/dashboard" : "/plans")
  );
}
