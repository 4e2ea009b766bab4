import { getUser } from "@workers/http/auth";
import { requestContext } from "@workers/http/context";
import { landingPath, safeRedirectPath } from "@workers/services/accounts/landing";
import { Link, redirect } from "react-router";
import { AuthForm } from "~/components/auth/auth-form";
import { findPlan } from "~/shared/catalog";
import type { Route } from "./+types/auth";
import { authAction } from "./auth-action.server";

export const meta: Route.MetaFunction = () => [{ title: "Create your account · Stagewise" }];

// /auth: sign-up and sign-in on one page. Sign-up is the default (visitors come
// here from 'Get Started'); a plan chosen on /plans (?plan=popular) forces it
// and makes that plan's checkout the place to return to.
export function loader({ request, context }: Route.LoaderArgs) {
  const url = new URL(request.url);
  const plan = findPlan(url.searchParams.get("plan"));
  const redirectTo =
    safeRedirectPath(url.searchParams.get("redirectTo"), context.get(requestContext).env.APP_ORIGIN) ??
    (plan ? `/checkout?planId=${plan.id}` : null);
  const user = getUser(context);
  if (user?.verified) throw redirect(landingPath(user, redirectTo));
  const mode = plan || url.searchParams.get("mode") !== "signin" ? "signup" : "signin";
  return { mode, redirectTo, plan: plan ? { id: plan.id, name: plan.name, credits: plan.credits } : null } as const;
}

export const action = authAction;

// Passes the action's headers (Retry-After on a 429) to the page's response.
export const headers: Route.HeadersFunction = ({ actionHeaders }) => actionHeaders;

export default function Auth({ loaderData, actionData }: Route.ComponentProps) {
  const { redirectTo, plan } = loaderData;
  // After a failed sign-in the page stays in sign-in mode even without ?mode.
  const mode = actionData?.intent === "signin" || actionData?.intent === "forgot" ? "signin" : loaderData.mode;
  const keep = redirectTo ? `&redirectTo=${encodeURIComponent(redirectTo)}` : "";
  return (
    <div className="container-page flex justify-center py-12 sm:py-16">
      <div className="card w-full max-w-md">
        <h1 className="text-2xl font-bold tracking-tight">
          {mode === "signup" ? "Create your account" : "Sign in to your account"}
        </h1>
        {plan ? (
          <p className="mt-2 text-sm text-muted" data-testid="chosen-plan">
            You chose the <strong className="text-ink">{plan.name}</strong> ({plan.credits} credits a month). Create
            your account, verify your email, and you will continue to checkout.
          </p>
        ) : null}
        <div className="mt-6">
          <AuthForm mode={mode} redirectTo={redirectTo} actionData={actionData} forgotHint={mode === "signin"} />
        </div>
        <p className="mt-6 text-center text-sm text-muted">
          {mode === "signup" ? (
            <>
              Already have an account?{" "}
              <Link to={`/auth?mode=signin${keep}`} className="font-medium text-brand-700 underline">
                Sign in
              </Link>
            </>
          ) : (
            <>
              New to Stagewise?{" "}
              <Link to={`/auth?mode=signup${keep}`} className="font-medium text-brand-700 underline">
                Create an account
              </Link>
            </>
          )}
        </p>
      </div>
    </div>
  );
}
