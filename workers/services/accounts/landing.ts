/** A path to come back to after signing in: same-origin paths only. */
export function safeRedirectPath(value: string | null | undefined): string | null {
  if (typeof value !== "string" || value.length > 2000) return null;
  if (!value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return null;
  return value;
}

/** A remembered return address worth going to after a sign-in (never back to a sign-in page, which would loop). */
export function returnPath(redirectTo: string | null | undefined): string | null {
  const back = safeRedirectPath(redirectTo);
  return back && !/^\/(login|auth|logout)(\/|\?|$)/.test(back) ? back : null;
}

/**
 * Where an e-mail sign-in lands (shared spec DECISIONS.md): a remembered
 * return address wins; otherwise /plans for someone with neither plan nor
 * credits, /dashboard for everyone else.
 */
export function landingPath(user: { plan: string | null; credits: number }, redirectTo?: string | null): string {
  return returnPath(redirectTo) ?? (user.plan === null && user.credits <= 0 ? "/plans" : "/dashboard");
}
