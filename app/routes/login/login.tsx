import { getUser } from "@workers/http/auth";
import { requestContext } from "@workers/http/context";
import { landingPath, safeRedirectPath } from "@workers/services/accounts/landing";
import { Link, redirect } from "react-router";
import { AuthForm } from "~/components/auth/auth-form";
import { Alert } from "~/components/auth/fields";
import { authAction } from "~/routes/auth/auth-action.server";
import { MESSAGES } from "~/shared/account-messages";
import type { Route } from "./+types/login";

export const meta: Route.MetaFunction = () => [{ title: "Sign in · Stagewise" }];

// Short codes in the address (set by redirects from sign-up, the e-mail links
// and Google) and the message each one shows.
const NOTICES: Record<string, { kind: "error" | "success"; text: string }> = {
  "email-in-use": { kind: "error", text: MESSAGES.emailInUse },
  verified: { kind: "success", text: MESSAGES.emailVerified },
  "password-changed": { kind: "success", text: MESSAGES.passwordChanged },
  "password-changed-keys": { kind: "success", text: MESSAGES.passwordChangedKeysRevoked },
  "google-failed": { kind: "error", text: MESSAGES.googleFailed },
  "google-expired": { kind: "error", text: MESSAGES.googleExpired },
  "google-denied": { kind: "error", text: MESSAGES.googleDenied },
  "google-email-unverified": { kind: "error", text: MESSAGES.googleEmailUnverified },
  "google-linked-elsewhere": { kind: "error", text: MESSAGES.googleLinkedElsewhere },
};

export function loader({ request, context }: Route.LoaderArgs) {
  const url = new URL(request.url);
  const redirectTo = safeRedirectPath(url.searchParams.get("redirectTo"), context.get(requestContext).env.APP_ORIGIN);
  const user = getUser(context);
  if (user?.verified) throw redirect(landingPath(user, redirectTo));
  return { redirectTo, notice: NOTICES[url.searchParams.get("notice") ?? ""] ?? null };
}

export const action = authAction;

// Passes the action's headers (Retry-After on a 429) to the page's response.
export const headers: Route.HeadersFunction = ({ actionHeaders }) => actionHeaders;

export default function Login({ loaderData, actionData }: Route.ComponentProps) {
  const { redirectTo, notice } = loaderData;
  const create = redirectTo ? `/auth?redirectTo=${encodeURIComponent(redirectTo)}` : "/auth";
  return (
    <div className="container-page flex justify-center py-12 sm:py-16">
      <div className="card w-full max-w-md">
        <h1 className="text-2xl font-bold tracking-tight">Welcome back</h1>
        <p className="mt-2 text-sm text-muted">
          Sign in to stage your photos.{" "}
          <Link to={create} className="font-medium text-brand-700 underline">
            Create a new account
          </Link>
        </p>
        {notice && !actionData ? (
          <div className="mt-6">
            <Alert kind={notice.kind}>{notice.text}</Alert>
          </div>
        ) : null}
        <div className="mt-6">
          <AuthForm mode="signin" redirectTo={redirectTo} actionData={actionData} forgotHint />
        </div>
      </div>
    </div>
  );
}
