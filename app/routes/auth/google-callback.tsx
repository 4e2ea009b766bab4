import { getUser } from "@workers/http/auth";
import { getDeps, requestContext } from "@workers/http/context";
import { failureHeaders, STATUS } from "@workers/http/result";
import { finishGoogleSignIn } from "@workers/services/accounts/google";
import { finishGoogleReauth, isReauthReturn } from "@workers/services/accounts/google-reauth";
import { secureCookies } from "@workers/services/current-user";
import { data, Link, redirect } from "react-router";
import type { Route } from "./+types/google-callback";

// GET /auth/google/callback: Google sends the browser back here with a code;
// the service checks it and says where to go. A return from confirming an
// account deletion (docs/decisions/0112-account-deletion-and-export.md) is
// checked against the signed-in session instead and never signs anyone in;
// a refusal is shown here with its 4xx status.
export async function loader({ request, context }: Route.LoaderArgs) {
  const { env, db } = context.get(requestContext);
  const secure = secureCookies(env, request);
  if (isReauthReturn(request)) {
    const user = getUser(context);
    const who = user?.verified ? { userId: user.id, sessionId: user.sessionId } : null;
    const outcome = await finishGoogleReauth(getDeps(context), request, who, secure);
    const headers = outcome.ok ? new Headers() : failureHeaders(outcome);
    for (const cookie of outcome.cookies) headers.append("Set-Cookie", cookie);
    if (outcome.ok) return redirect(outcome.location, { headers });
    return data({ error: outcome.error }, { status: STATUS[outcome.code], headers });
  }
  const { location, cookies } = await finishGoogleSignIn({ db, env }, request, secure);
  const headers = new Headers();
  for (const cookie of cookies) headers.append("Set-Cookie", cookie);
  return redirect(location, { headers });
}

export const meta: Route.MetaFunction = () => [{ title: "Google confirmation · Stagewise" }];

export default function GoogleCallback({ loaderData }: Route.ComponentProps) {
  return (
    <div className="container-page max-w-xl py-10">
      <h1 className="text-2xl font-extrabold tracking-tight">Google confirmation refused</h1>
      <p className="alert-error mt-4" role="alert" data-testid="reauth-error">
        {loaderData.error}
      </p>
      <p className="mt-4">
        <Link to="/settings" className="underline">
          Back to Settings
        </Link>
      </p>
    </div>
  );
}
