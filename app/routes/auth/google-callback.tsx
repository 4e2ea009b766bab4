import { requestContext } from "@workers/http/context";
import { finishGoogleSignIn } from "@workers/services/accounts/google";
import { secureCookies } from "@workers/services/current-user";
import { redirect } from "react-router";
import type { Route } from "./+types/google-callback";

// GET /auth/google/callback: Google sends the browser back here with a code;
// the service checks it and says where to go.
export async function loader({ request, context }: Route.LoaderArgs) {
  const { env, db } = context.get(requestContext);
  const { location, cookies } = await finishGoogleSignIn({ db, env }, request, secureCookies(env, request));
  const headers = new Headers();
  for (const cookie of cookies) headers.append("Set-Cookie", cookie);
  return redirect(location, { headers });
}
