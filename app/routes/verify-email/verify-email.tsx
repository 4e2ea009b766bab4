import { readFormFields } from "@workers/http/body";
import { requestContext } from "@workers/http/context";
import { failureData } from "@workers/http/result";
import { isTokenUsable } from "@workers/services/accounts/tokens";
import { verifyEmail } from "@workers/services/accounts/verification";
import { Form, Link, redirect, useNavigation } from "react-router";
import { Alert, TextField } from "~/components/auth/fields";
import { accountDeps } from "~/routes/auth/auth-action.server";
import { MESSAGES } from "~/shared/account-messages";
import type { Route } from "./+types/verify-email";

export const meta: Route.MetaFunction = () => [{ title: "Verify your email · Stagewise" }];

// The link in the verification e-mail opens this page; the button spends it.
// Opening a link changes nothing (mail scanners open links too).
export async function loader({ request, context }: Route.LoaderArgs) {
  const token = new URL(request.url).searchParams.get("token") ?? "";
  const { db } = context.get(requestContext);
  const usable = await isTokenUsable(db, token, "verify_email", Date.now());
  return { token, usable, error: usable ? null : MESSAGES.linkInvalid };
}

export async function action({ request, context }: Route.ActionArgs) {
  const raw = await readFormFields(request);
  if (!raw.ok) return failureData(raw);
  const result = await verifyEmail(accountDeps(context, request), raw.fields.token ?? "", raw.fields.password ?? "");
  if (!result.ok) return failureData(result);
  const params = new URLSearchParams({ notice: "verified" });
  if (result.redirectTo) params.set("redirectTo", result.redirectTo);
  return redirect(`/login?${params}`);
}

export default function VerifyEmail({ loaderData, actionData }: Route.ComponentProps) {
  const busy = useNavigation().state !== "idle";
  // A wrong password leaves the link usable: the form stays, with the error above it.
  const usable = loaderData.usable && (!actionData?.error || actionData.code !== "invalid");
  return (
    <div className="container-page flex justify-center py-12 sm:py-16">
      <div className="card w-full max-w-md">
        <h1 className="text-2xl font-bold tracking-tight">Verify your email</h1>
        {usable ? (
          <Form method="post" className="mt-6 space-y-4">
            <p className="text-muted">
              Confirm that this email address is yours with the password you chose when you created the account.
            </p>
            {actionData?.error ? <Alert kind="error">{actionData.error}</Alert> : null}
            <input type="hidden" name="token" value={loaderData.token} />
            <TextField
              id="verify-password"
              label="Password"
              name="password"
              type="password"
              autoComplete="current-password"
              required
            />
            <button type="submit" className="btn-primary w-full" disabled={busy}>
              Verify email
            </button>
            <p className="text-sm text-muted">
              Did not create this account? Someone may have used your address.{" "}
              <Link to="/login" className="underline">
                Reset its password from the sign-in page
              </Link>
              : that verifies the address too, and the password they chose stops working.
            </p>
          </Form>
        ) : (
          <div className="mt-6 space-y-4">
            <Alert kind="error">{actionData?.error ?? loaderData.error}</Alert>
            <p className="text-sm text-muted">
              If your email is already verified, just sign in. Otherwise sign in with your email and password and ask
              for a new verification email there.
            </p>
            <Link to="/login" className="btn-primary w-full">
              Go to sign in
            </Link>
          </div>
        )}
      </div>
    </div>
  );
}
