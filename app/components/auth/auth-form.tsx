import { Form, Link, useNavigation } from "react-router";
import type { AuthActionData } from "~/shared/auth-forms";
import { Alert, Honeypot, TextField } from "./fields";

interface AuthFormProps {
  mode: "signin" | "signup";
  redirectTo: string | null;
  actionData: AuthActionData | undefined;
  /** Shown on /login under 'Forgot Password?'. */
  forgotHint?: boolean;
}

function HiddenRedirect({ redirectTo }: { redirectTo: string | null }) {
  return redirectTo ? <input type="hidden" name="redirectTo" value={redirectTo} /> : null;
}

/** Sends a fresh verification link for the given address. */
export function ResendVerification({ email, redirectTo }: { email: string; redirectTo: string | null }) {
  const busy = useNavigation().formData?.get("intent") === "resend";
  return (
    <Form method="post" className="mt-3">
      <Honeypot />
      <HiddenRedirect redirectTo={redirectTo} />
      <input type="hidden" name="email" value={email} />
      <button type="submit" name="intent" value="resend" className="btn-secondary w-full" disabled={busy}>
        Resend verification email
      </button>
    </Form>
  );
}

export function GoogleButton({ redirectTo }: { redirectTo: string | null }) {
  // A full-page POST: the answer is a redirect to Google, which a fetch could not follow.
  return (
    <Form method="post" action="/auth/google" reloadDocument>
      <HiddenRedirect redirectTo={redirectTo} />
      <button type="submit" className="btn-secondary w-full">
        <svg aria-hidden="true" viewBox="0 0 24 24" className="h-5 w-5">
          <path
            fill="#4285F4"
            d="M23.5 12.3c0-.8-.1-1.6-.2-2.3H12v4.5h6.5a5.6 5.6 0 0 1-2.4 3.6v3h3.9c2.2-2.1 3.5-5.1 3.5-8.8z"
          />
          <path
            fill="#34A853"
            d="M12 24c3.2 0 6-1.1 8-2.9l-3.9-3c-1.1.7-2.5 1.2-4.1 1.2-3.1 0-5.8-2.1-6.7-5H1.3v3.1A12 12 0 0 0 12 24z"
          />
          <path fill="#FBBC05" d="M5.3 14.3a7.2 7.2 0 0 1 0-4.6V6.6h-4a12 12 0 0 0 0 10.8z" />
          <path
            fill="#EA4335"
            d="M12 4.8c1.8 0 3.3.6 4.6 1.8l3.4-3.4A12 12 0 0 0 1.3 6.6l4 3.1c.9-2.8 3.6-4.9 6.7-4.9z"
          />
        </svg>
        Sign in with Google
      </button>
    </Form>
  );
}

/**
 * The e-mail form of /auth and /login. One plain POST form: the submit button
 * says what to do (intent), so it works before (or without) JavaScript.
 */
export function AuthForm({ mode, redirectTo, actionData, forgotHint }: AuthFormProps) {
  const navigation = useNavigation();
  const busy = navigation.state !== "idle" && navigation.formMethod === "POST";
  const signup = mode === "signup";
  const data = actionData;
  const errors = data?.fieldErrors ?? {};
  const email = data?.values.email ?? "";

  // After sign-up (and after asking for the link again from there): check your inbox.
  if (signup && (data?.signedUp || (data?.intent === "resend" && data.message))) {
    return (
      <div className="space-y-4">
        <Alert kind="success">
          <p className="font-semibold">{data.message}</p>
          <p className="mt-1">
            We sent a link to {data.values.email}. You need to verify your email before you can use the app. Check your
            inbox and spam folder.
          </p>
        </Alert>
        <ResendVerification email={data.values.email} redirectTo={redirectTo} />
        <Link to="/login" className="btn-ghost w-full">
          Go to sign in
        </Link>
      </div>
    );
  }

  // Messages of the whole form (field messages sit next to their fields).
  // Messages that belong to fields are shown beside them, not again above the form.
  const formError = data?.error && data.intent !== "resend" && !data.fieldsOnly ? data.error : null;
  const notice = data?.message && !data.error ? data.message : null;

  return (
    <div className="space-y-4">
      {formError ? <Alert kind="error">{formError}</Alert> : null}
      {notice ? (
        <Alert kind="success">
          {notice}
          {data?.intent === "forgot" ? <span className="block">Check your inbox and spam folder.</span> : null}
        </Alert>
      ) : null}
      {data?.intent === "resend" && data.error ? <Alert kind="error">{data.error}</Alert> : null}

      <Form method="post" className="space-y-4" noValidate={false}>
        <Honeypot />
        <HiddenRedirect redirectTo={redirectTo} />
        {signup ? (
          <TextField
            id="name"
            name="name"
            label="Name"
            autoComplete="name"
            maxLength={100}
            defaultValue={data?.values.name}
            error={errors.name}
            hint="Leave empty to use the part of your email before the @."
          />
        ) : null}
        <TextField
          id="email"
          name="email"
          type="email"
          label="Email address"
          autoComplete="email"
          required
          maxLength={254}
          defaultValue={email}
          error={errors.email}
        />
        <TextField
          id="password"
          name="password"
          type="password"
          label="Password"
          autoComplete={signup ? "new-password" : "current-password"}
          required
          minLength={signup ? 8 : undefined}
          maxLength={128}
          error={errors.password}
          hint={signup ? "8 to 128 characters." : undefined}
        />
        {signup ? (
          <div>
            <div className="flex items-start gap-3">
              <input
                id="acceptTerms"
                name="acceptTerms"
                type="checkbox"
                required
                className="mt-1 h-5 w-5 rounded border-slate-300"
                aria-invalid={errors.acceptTerms ? true : undefined}
                aria-describedby={errors.acceptTerms ? "acceptTerms-error" : undefined}
              />
              <label htmlFor="acceptTerms" className="text-sm">
                I am at least 18 and accept the{" "}
                <Link to="/terms-of-service" className="font-medium text-brand-700 underline">
                  Terms of Service
                </Link>
              </label>
            </div>
            {errors.acceptTerms ? (
              <p id="acceptTerms-error" className="field-error">
                {errors.acceptTerms}
              </p>
            ) : null}
          </div>
        ) : null}
        <button type="submit" name="intent" value={mode} className="btn-primary w-full" disabled={busy}>
          {signup ? "Sign up" : "Sign in"}
        </button>
        {signup ? null : (
          <div>
            {/* Uses the e-mail typed above; skips the browser's required-field checks. */}
            <button
              type="submit"
              name="intent"
              value="forgot"
              formNoValidate
              className="text-sm font-medium text-brand-700 underline"
              disabled={busy}
              aria-describedby={forgotHint ? "forgot-hint" : undefined}
            >
              Forgot Password?
            </button>
            {forgotHint ? (
              <p id="forgot-hint" className="mt-1 text-sm text-muted">
                Enter your email address above first, then check your inbox and spam folder for the link.
              </p>
            ) : null}
          </div>
        )}
      </Form>

      {data?.needsVerification ? (
        <div className="rounded-lg border border-line p-4 text-sm">
          <p>Did not get the email, or did the link expire?</p>
          <ResendVerification email={email} redirectTo={redirectTo} />
        </div>
      ) : null}

      <div className="flex items-center gap-3 text-sm text-muted" aria-hidden="true">
        <span className="h-px flex-1 bg-line" />
        or
        <span className="h-px flex-1 bg-line" />
      </div>
      <GoogleButton redirectTo={redirectTo} />
    </div>
  );
}
