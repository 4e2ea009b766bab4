import { googleOAuth } from "@workers/adapters/google-oauth";
import { requestContext } from "@workers/http/context";
import { timingSafeEqual } from "@workers/lib/crypto";
import { clearOauthStateCookie, readOauthState, signInWithGoogle } from "@workers/services/accounts/google";
import { secureCookies } from "@workers/services/current-user";
import { sessionCookie } from "@workers/services/sessions";
import { redirect } from "react-router";
import type { Route } from "./+types/google-callback";

function sameState(a: string, b: string): boolean {
  const enc = new TextEncoder();
  return timingSafeEqual(enc.encode(a), enc.encode(b));
}

// GET /auth/google/callback: Google sends the browser back here with a code.
// The state must match the cookie; the code is exchanged with the PKCE
// verifier; the ID token's signature and claims are checked by the adapter.
export async function loader({ request, context }: Route.LoaderArgs) {
  const { env, db } = context.get(requestContext);
  const secure = secureCookies(env, request);
  const headers = new Headers({ "Set-Cookie": clearOauthStateCookie(secure) });
  const fail = (notice: string) => redirect(`/login?notice=${notice}`, { headers });

  const url = new URL(request.url);
  const pending = readOauthState(request.headers.get("Cookie"));
  if (url.searchParams.get("error")) return fail("google-denied");
  const code = url.searchParams.get("code");
  const state = url.searchParams.get("state");
  if (!pending || !code || !state || !sameState(state, pending.state)) return fail("google-expired");

  try {
    const identity = await googleOAuth(env).finish(code, pending.codeVerifier);
    const result = await signInWithGoogle({ db, env }, identity, {
      redirectTo: pending.redirectTo,
      userAgent: request.headers.get("User-Agent"),
    });
    if (!result.ok) return fail(`google-${result.reason}`);
    headers.append("Set-Cookie", sessionCookie(result.token, result.expiresAt, secure));
    return redirect(result.landing, { headers });
  } catch (err) {
    console.error("google sign-in failed", err);
    return fail("google-failed");
  }
}
