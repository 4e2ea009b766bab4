import { readFormFields } from "@workers/http/body";
import { requestContext } from "@workers/http/context";
import { failureData, STATUS } from "@workers/http/result";
import { log } from "@workers/lib/log";
import type { AccountDeps, Failure } from "@workers/services/accounts/account-deps";
import { safeRedirectPath } from "@workers/services/accounts/landing";
import { signInWithPassword, signUp } from "@workers/services/accounts/password-auth";
import { requestPasswordReset } from "@workers/services/accounts/password-reset";
import { resendVerification } from "@workers/services/accounts/verification";
import { secureCookies } from "@workers/services/current-user";
import { sessionCookie } from "@workers/services/sessions";
import { data, type RouterContextProvider, redirect } from "react-router";
import { MESSAGES } from "~/shared/account-messages";
import { type AuthActionData, type AuthIntent, HONEYPOT_FIELD } from "~/shared/auth-forms";
import { cutText } from "~/shared/text";

/** The account services' dependencies for this request. */
export function accountDeps(context: Readonly<RouterContextProvider>, _request?: Request): AccountDeps {
  const { deps, env, db } = context.get(requestContext);
  return { db, env, mailer: deps.mailer, defer: deps.defer, ip: deps.ip };
}

/** Redirects with a new session cookie (after any sign-in). */
export function signedInRedirect(
  context: Readonly<RouterContextProvider>,
  request: Request,
  to: string,
  session: { token: string; expiresAt: number },
): Response {
  const { env } = context.get(requestContext);
  return redirect(to, {
    headers: { "Set-Cookie": sessionCookie(session.token, session.expiresAt, secureCookies(env, request)) },
  });
}

const FAILURE_MESSAGES: Record<AuthIntent, string> = {
  signin: MESSAGES.signInFailed,
  signup: MESSAGES.signUpFailed,
  forgot: MESSAGES.resetFailed,
  resend: MESSAGES.resendFailed,
};

function answer(body: AuthActionData, status = 200, retryAfterSeconds?: number) {
  const headers: HeadersInit = retryAfterSeconds ? { "Retry-After": String(retryAfterSeconds) } : {};
  return data(body, { status, headers });
}

function failure(intent: AuthIntent, values: AuthActionData["values"], f: Failure<string>) {
  return answer(
    {
      intent,
      values,
      error: f.error,
      fieldErrors: f.fieldErrors as AuthActionData["fieldErrors"],
      needsVerification: f.needsVerification,
      fieldsOnly: f.fieldsOnly,
    },
    STATUS[f.code],
    f.retryAfterSeconds,
  );
}

/** The one action behind /auth and /login: sign in, sign up, forgot password, resend verification. */
export async function authAction({ request, context }: { request: Request; context: Readonly<RouterContextProvider> }) {
  const body = await readFormFields(request);
  if (!body.ok) {
    return failureData({ ...body, intent: "signin" as AuthIntent, values: { name: "", email: "" } }, ["POST"]);
  }
  const field = (name: string) => body.fields[name] ?? "";
  const raw = field("intent");
  const intent: AuthIntent = raw === "signup" || raw === "forgot" || raw === "resend" ? raw : "signin";
  const values = { name: cutText(field("name"), 100), email: field("email").slice(0, 254) };
  const redirectTo = safeRedirectPath(field("redirectTo"), context.get(requestContext).env.APP_ORIGIN);
  if (field(HONEYPOT_FIELD) !== "") return answer({ intent, values, error: MESSAGES.honeypot }, 400);

  const deps = accountDeps(context, request);
  try {
    switch (intent) {
      case "signup": {
        const r = await signUp(
          deps,
          { name: values.name, email: values.email, password: field("password"), acceptTerms: field("acceptTerms") },
          redirectTo,
        );
        if (r.ok) return answer({ intent, values, signedUp: true, message: r.message });
        if (r.code === "conflict") {
          const params = new URLSearchParams({ notice: "email-in-use" });
          if (redirectTo) params.set("redirectTo", redirectTo);
          return redirect(`/login?${params}`);
        }
        return failure(intent, values, r);
      }
      case "signin": {
        const r = await signInWithPassword(
          deps,
          { email: values.email, password: field("password") },
          { redirectTo, userAgent: request.headers.get("User-Agent") },
        );
        if (r.ok) return signedInRedirect(context, request, r.landing, r);
        return failure(intent, values, r);
      }
      case "forgot": {
        const r = await requestPasswordReset(deps, { email: values.email });
        if (r.ok) return answer({ intent, values, message: r.message });
        return failure(intent, values, r);
      }
      case "resend": {
        const r = await resendVerification(deps, { email: values.email, redirectTo });
        if (r.ok) return answer({ intent, values, message: r.message });
        return failure(intent, values, r);
      }
    }
  } catch (err) {
    log.error(`${intent} failed`, { err, where: "auth" });
    return answer({ intent, values, error: FAILURE_MESSAGES[intent] }, 500);
  }
}
