import { googleOAuth } from "@workers/adapters/google-oauth";
import { requestContext } from "@workers/http/context";
import { oauthStateCookie } from "@workers/services/accounts/google";
import { safeRedirectPath } from "@workers/services/accounts/landing";
import { secureCookies } from "@workers/services/current-user";
import { redirect } from "react-router";
import type { Route } from "./+types/google";

// POST /auth/google: leaves for Google's consent screen with a fresh state and
// PKCE verifier, kept in a short-lived HttpOnly cookie until the callback.
export async function action({ request, context }: Route.ActionArgs) {
  const { env } = context.get(requestContext);
  const form = await request.formData();
  const redirectTo = safeRedirectPath(String(form.get("redirectTo") ?? ""));
  try {
    const { url, state, codeVerifier } = await googleOAuth(env).start();
    return redirect(url.toString(), {
      headers: { "Set-Cookie": oauthStateCookie({ state, codeVerifier, redirectTo }, secureCookies(env, request)) },
    });
  } catch (err) {
    console.error("google sign-in could not start", err);
    return redirect("/login?notice=google-failed");
  }
}

export function loader() {
  // Starting a sign-in sets a cookie, so it is a POST; a GET goes to the sign-in page.
  return redirect("/login");
}
