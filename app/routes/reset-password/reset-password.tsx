import { readFormFields } from "@workers/http/body";
import { requestContext } from "@workers/http/context";
import { failureData } from "@workers/http/result";
import { resetPassword } from "@workers/services/accounts/password-reset";
import { isTokenUsable } from "@workers/services/accounts/tokens";
import { secureCookies } from "@workers/services/current-user";
import { clearSessionCookie } from "@workers/services/sessions";
import { Form, Link, redirect, useNavigation } from "react-router";
import { Alert, TextField } from "~/components/auth/fields";
import { accountDeps } from "~/routes/auth/auth-action.server";
import { MESSAGES } from "~/shared/account-messages";
import type { Route } from "./+types/reset-password";

export const meta: Route.MetaFunction = () => [{ title: "Choose a new password · Stagewise" }];

export async function loader({ request, context }: Route.LoaderArgs) {
  const token = new URL(request.url).searchParams.get("token") ?? "";
  const { db } = context.get(requestContext);
  const usable = await isTokenUsable(db, token, "reset_password", Date.now());
  return { token, usable, error: usable ? null : MESSAGES.linkInvalid };
}

// Sets the new password and ends every session of the account, this browser's too.
export async function action({ request, context }: Route.ActionArgs) {
  const raw = await readFormFields(request);
  if (!raw.ok) return failureData({ ...raw, fieldErrors: {} as Record<string, string> });
  const result = await resetPassword(accountDeps(context, request), {
    token: raw.fields.token ?? null,
    password: raw.fields.password ?? null,
  });
  if (!result.ok) {
    return failureData({ ...result, fieldErrors: result.fieldErrors ?? {} });
  }
  const { env } = context.get(requestContext);
  // Its API keys were revoked with the sessions: the sign-in page says so (and Settings, until a new key is made).
  return redirect(`/login?notice=${(result.revokedKeys ?? 0) > 0 ? "password-changed-keys" : "password-changed"}`, {
    headers: { "Set-Cookie": clearSessionCookie(secureCookies(env, request)) },
  });
}

export default function ResetPassword({ loaderData, actionData }: Route.ComponentProps) {
  const busy = useNavigation().state !== "idle";
  const linkDead = !loaderData.usable || (actionData?.error !== undefined && !actionData.fieldErrors?.password);
  return (
    <div className="container-page flex justify-center py-12 sm:py-16">
      <div className="card w-full max-w-md">
        <h1 className="text-2xl font-bold tracking-tight">Choose a new password</h1>
        {linkDead ? (
          <div className="mt-6 space-y-4">
            <Alert kind="error">{actionData?.error ?? loaderData.error}</Alert>
            <p className="text-sm text-muted">
              Reset links work once and for one hour. Ask for a new one with &lsquo;Forgot Password?&rsquo; on the
              sign-in page.
            </p>
            <Link to="/login" className="btn-primary w-full">
              Go to sign in
            </Link>
          </div>
        ) : (
          <Form method="post" className="mt-6 space-y-4">
            <p className="text-muted">
              Setting a new password signs you out on every device and revokes your API keys.
            </p>
            <input type="hidden" name="token" value={loaderData.token} />
            <TextField
              id="password"
              name="password"
              type="password"
              label="New password"
              autoComplete="new-password"
              required
              minLength={8}
              maxLength={128}
              hint="8 to 128 characters."
              error={actionData?.fieldErrors?.password}
            />
            <button type="submit" className="btn-primary w-full" disabled={busy}>
              Set new password
            </button>
          </Form>
        )}
      </div>
    </div>
  );
}
