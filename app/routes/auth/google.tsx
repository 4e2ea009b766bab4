import { readFormFields } from "@workers/http/body";
import { requestContext } from "@workers/http/context";
import { failureHeaders, STATUS } from "@workers/http/result";
import { startGoogleSignIn } from "@workers/services/accounts/google";
import { safeRedirectPath } from "@workers/services/accounts/landing";
import { secureCookies } from "@workers/services/current-user";
import { redirect } from "react-router";
import type { Route } from "./+types/google";

// POST /auth/google: leaves for Google's consent screen with a fresh state and
// PKCE verifier, kept in a short-lived HttpOnly cookie until the callback.
export async function action({ request, context }: Route.ActionArgs) {
  const { env } = context.get(requestContext);
  const raw = await readFormFields(request);
  if (!raw.ok) return new Response(raw.error, { status: STATUS[raw.code], headers: failureHeaders(raw, ["POST"]) });
  const redirectTo = safeRedirectPath(raw.fields.redirectTo ?? "", env.APP_ORIGIN);
  const started = await startGoogleSignIn(env, redirectTo, secureCookies(env, request));
  if (!started.ok) return redirect("/login?notice=google-failed");
  return redirect(started.url, { headers: { "Set-Cookie": started.cookie } });
}

export function loader() {
  // Starting a sign-in sets a cookie, so it is a POST; a GET goes to the sign-in page.
  return redirect("/login");
}
