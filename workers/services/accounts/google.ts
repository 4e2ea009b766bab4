import { sessions, users } from "@db/schema";
import { type GoogleIdentity, googleOAuth } from "@workers/adapters/google-oauth";
import { randomToken, timingSafeEqual } from "@workers/lib/crypto";
import { log } from "@workers/lib/log";
import { createSession, readCookie, sessionCookie } from "@workers/services/sessions";
import { eq } from "drizzle-orm";
import { MESSAGES } from "~/shared/account-messages";
import { type Failure, fail, ok, type Result } from "~/shared/result";
import type { AccountDeps } from "./account-deps";
import { returnPath, safeRedirectPath } from "./landing";
import { nameFromEmail } from "./validation";
import { markVerified } from "./verification";

export type GoogleSignInResult =
  | { ok: true; userId: string; created: boolean; token: string; expiresAt: number; landing: string }
  | GoogleFailure;

/** A refused Google sign-in (app/shared/result.ts); `reason` names the notice /login shows (?notice=google-<reason>). */
export type GoogleFailure = Failure & { reason: "email-unverified" | "linked-elsewhere" | "failed" };

/**
 * Signs in with a verified Google identity. Accounts are keyed on Google's
 * `sub`; an existing e-mail account is linked only when Google says it
 * verified the address. A first Google sign-in creates a user with no plan
 * and no credits and lands on /plans; later ones land on /dashboard.
 */
export async function signInWithGoogle(
  deps: Pick<AccountDeps, "db" | "env" | "now">,
  identity: GoogleIdentity,
  opts: { redirectTo?: string | null; userAgent?: string | null } = {},
): Promise<GoogleSignInResult> {
  const found = await resolveGoogleUser(deps, identity);
  if (!found.ok) return found;
  const now = deps.now ?? Date.now();
  const session = await createSession(deps.db, found.userId, opts.userAgent ?? null, now);
  return {
    ok: true,
    userId: found.userId,
    created: found.created,
    token: session.token,
    expiresAt: session.expiresAt,
    landing: returnPath(opts.redirectTo) ?? (found.created ? "/plans" : "/dashboard"),
  };
}

async function resolveGoogleUser(
  deps: Pick<AccountDeps, "db" | "env" | "now">,
  identity: GoogleIdentity,
  attempt = 0,
): Promise<{ ok: true; userId: string; created: boolean } | GoogleFailure> {
  const { db } = deps;
  const bySub = await db.select({ id: users.id }).from(users).where(eq(users.googleSub, identity.sub)).get();
  if (bySub) return { ok: true, userId: bySub.id, created: false };
  if (!identity.emailVerified)
    return { ...fail("forbidden", MESSAGES.googleEmailUnverified), reason: "email-unverified" };

  const now = deps.now ?? Date.now();
  const byEmail = await db.query.users.findFirst({ where: (u, { eq }) => eq(u.email, identity.email) });
  if (byEmail) {
    if (byEmail.googleSub && byEmail.googleSub !== identity.sub)
      return { ...fail("conflict", MESSAGES.googleLinkedElsewhere), reason: "linked-elsewhere" };
    if (byEmail.emailVerifiedAt === null) {
      // Nobody has proved this address until now: whoever signed up with it may
      // not own it, so their password and sessions go (pre-hijack protection).
      await db.batch([
        db
          .update(users)
          .set({ googleSub: identity.sub, passwordHash: null, updatedAt: now })
          .where(eq(users.id, byEmail.id)),
        db.delete(sessions).where(eq(sessions.userId, byEmail.id)),
      ]);
      await markVerified({ ...deps, now }, byEmail.id);
    } else {
      await db.update(users).set({ googleSub: identity.sub, updatedAt: now }).where(eq(users.id, byEmail.id));
    }
    return { ok: true, userId: byEmail.id, created: false };
  }

  const id = randomToken();
  const inserted = await db
    .insert(users)
    .values({
      id,
      email: identity.email,
      name: identity.name ?? nameFromEmail(identity.email),
      googleSub: identity.sub,
      emailVerifiedAt: now,
      // Trial credits go to e-mail sign-ups only (ADR 0013): marked settled, so the daily sweep passes it by.
      signupCreditsGranted: 1,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing()
    .returning({ id: users.id })
    .all();
  if (inserted.length > 0) return { ok: true, userId: id, created: true };
  // A concurrent sign-in created the same account first: use it.
  if (attempt === 0) return resolveGoogleUser(deps, identity, 1);
  return { ...fail("conflict", MESSAGES.googleFailed), reason: "failed" };
}

// The state, PKCE verifier and return address live in a short-lived cookie
// between leaving for Google and coming back to /auth/google/callback.
export const OAUTH_COOKIE = "sw_oauth";
const OAUTH_COOKIE_MAX_AGE_S = 600;

/** Why the browser left for Google: to sign in, or to confirm it is the account's owner before deleting it. */
export type OAuthPurpose = "signin" | "reauth-delete";

export interface OAuthPending {
  state: string;
  codeVerifier: string;
  redirectTo: string | null;
  /** Absent means "signin". The session row holds the re-authentication's state too (google-reauth.ts). */
  purpose?: OAuthPurpose;
}

export function oauthStateCookie(pending: OAuthPending, secure: boolean): string {
  const value =
    pending.purpose === "reauth-delete"
      ? [pending.state, pending.codeVerifier, "reauth-delete", ""].join(".")
      : [pending.state, pending.codeVerifier, encodeURIComponent(pending.redirectTo ?? "")].join(".");
  return `${OAUTH_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=/auth/google; Max-Age=${OAUTH_COOKIE_MAX_AGE_S}${secure ? "; Secure" : ""}`;
}

export function clearOauthStateCookie(secure: boolean): string {
  return `${OAUTH_COOKIE}=; HttpOnly; SameSite=Lax; Path=/auth/google; Max-Age=0${secure ? "; Secure" : ""}`;
}

export function readOauthState(cookieHeader: string | null): OAuthPending | null {
  const raw = readCookie(cookieHeader, OAUTH_COOKIE);
  if (!raw) return null;
  const [state, codeVerifier, ...rest] = raw.split(".");
  if (!state || !codeVerifier) return null;
  // A return address is URI-encoded ("%2F..."), so it never reads as a purpose.
  if (rest[0] === "reauth-delete") return { state, codeVerifier, redirectTo: null, purpose: "reauth-delete" };
  let redirectTo: string | null = null;
  try {
    redirectTo = safeRedirectPath(decodeURIComponent(rest.join(".")));
  } catch {
    redirectTo = null;
  }
  return { state, codeVerifier, redirectTo };
}

/** Where to send the browser to start a Google sign-in, and the cookie that remembers state, verifier and return address. */
export async function startGoogleSignIn(
  env: Env,
  redirectTo: string | null,
  secure: boolean,
): Promise<Result<{ url: string; cookie: string }>> {
  try {
    const { url, state, codeVerifier } = await googleOAuth(env).start();
    return ok({ url: url.toString(), cookie: oauthStateCookie({ state, codeVerifier, redirectTo }, secure) });
  } catch (err) {
    log.error("google sign-in could not start", { err, where: "google" });
    return fail("unavailable", MESSAGES.googleFailed);
  }
}

export function sameState(a: string, b: string): boolean {
  const enc = new TextEncoder();
  return timingSafeEqual(enc.encode(a), enc.encode(b));
}

/**
 * Google's return to /auth/google/callback: the state must match the cookie,
 * the code is exchanged with the PKCE verifier, and the ID token's signature
 * and claims are checked by the adapter. Answers where to go and the cookies
 * to set (the state cookie is always cleared; a session cookie on success).
 */
export async function finishGoogleSignIn(
  deps: Pick<AccountDeps, "db" | "env" | "now">,
  request: Request,
  secure: boolean,
): Promise<{ location: string; cookies: string[] }> {
  const cookies = [clearOauthStateCookie(secure)];
  const failed = (notice: string) => ({ location: `/login?notice=${notice}`, cookies });
  const url = new URL(request.url);
  const pending = readOauthState(request.headers.get("Cookie"));
  if (url.searchParams.get("error")) return failed("google-denied");
  const code = url.searchParams.get("code");
  const state = url.searchParams.get("state");
  if (!pending || !code || !state || !sameState(state, pending.state)) return failed("google-expired");
  try {
    const identity = await googleOAuth(deps.env).finish(code, pending.codeVerifier);
    const result = await signInWithGoogle(deps, identity, {
      redirectTo: pending.redirectTo,
      userAgent: request.headers.get("User-Agent"),
    });
    if (!result.ok) return failed(`google-${result.reason}`);
    cookies.push(sessionCookie(result.token, result.expiresAt, secure));
    return { location: result.landing, cookies };
  } catch (err) {
    log.error("google sign-in failed", { err, where: "google" });
    return failed("google-failed");
  }
}
