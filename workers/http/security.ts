// Headers every response carries, and the one cross-site check for every
// state-changing request (React Router actions and Hono routes alike).

import { fail } from "~/shared/result";
import { contentSecurityPolicy } from "./csp.ts";
import { failureJson } from "./result";

export { contentSecurityPolicy };

export function withSecurityHeaders(response: Response, nonce: string, dev = false): Response {
  // WebSocket upgrades cannot be re-wrapped.
  if (response.status === 101 || response.webSocket) return response;
  const res = new Response(response.body, response);
  const h = res.headers;
  if (!h.has("Content-Security-Policy")) h.set("Content-Security-Policy", contentSecurityPolicy(nonce, dev));
  h.set("Strict-Transport-Security", "max-age=63072000; includeSubDomains");
  h.set("X-Content-Type-Options", "nosniff");
  h.set("X-Frame-Options", "DENY");
  h.set("Referrer-Policy", "strict-origin-when-cross-origin");
  h.set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()");
  h.set("Cross-Origin-Opener-Policy", "same-origin");
  return res;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Whether an Origin header names anything but our configured origin (never the Host header, which a client sets). */
export function isForeignOrigin(origin: string, appOrigin: string): boolean {
  try {
    return origin !== new URL(appOrigin).origin;
  } catch {
    return true;
  }
}

/**
 * Refuses non-GET requests that a browser says come from another site or
 * origin: an Origin other than the configured APP_ORIGIN, or a Sec-Fetch-Site
 * of cross-site or same-site (a sibling subdomain is not us). Requests with
 * neither header (server-to-server, e.g. Stripe's webhooks) pass: they carry no
 * ambient cookies, and the webhook has its own signature check.
 */
export function isCrossSiteWrite(request: Request, appOrigin: string): boolean {
  if (SAFE_METHODS.has(request.method)) return false;
  const site = request.headers.get("Sec-Fetch-Site");
  if (site === "cross-site" || site === "same-site") return true;
  const origin = request.headers.get("Origin");
  if (origin === null) return false;
  return isForeignOrigin(origin, appOrigin);
}

export function crossSiteRefusal(): Response {
  return failureJson(fail("forbidden", "Cross-site request refused."));
}
