import { getUser } from "@workers/http/auth";
import { readFormFields } from "@workers/http/body";
import { requestContext } from "@workers/http/context";
import { failureData } from "@workers/http/result";
import { secureCookies } from "@workers/services/current-user";
import { clearSessionCookie, invalidateSession } from "@workers/services/sessions";
import { redirect } from "react-router";
import type { Route } from "./+types/logout";

export async function action({ request, context }: Route.ActionArgs) {
  // The sign-out form posts no fields, but only a form may sign anyone out.
  const form = await readFormFields(request);
  if (!form.ok) return failureData(form, ["POST"]);
  const user = getUser(context);
  const { db, env } = context.get(requestContext);
  if (user) await invalidateSession(db, user.sessionId);
  return redirect("/", { headers: { "Set-Cookie": clearSessionCookie(secureCookies(env, request)) } });
}

export function loader() {
  // Signing out changes state, so it is a POST; a GET just goes home.
  return redirect("/");
}
