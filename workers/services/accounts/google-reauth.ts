import { sessions, users } from "@db/schema";
import { googleOAuth } from "@workers/adapters/google-oauth";
import { sha256Hex } from "@workers/lib/crypto";
import { log } from "@workers/lib/log";
import type { Deps } from "@workers/services/request-deps";
import { and, eq, gt, isNotNull } from "drizzle-orm";
import { type Failure, fail, ok, type Result } from "~/shared/result";
import { clearOauthStateCookie, oauthStateCookie, readOauthState, sameState } from "./google";

// Google re-authentication before deleting an account
// (docs/decisions/0112-account-deletion-and-export.md, "Confirming with Google").
// Settings starts it for the signed-in session: the OAuth state's hash is kept
// on that session row (the purpose lives server side, not only in the
// cookie). Google's return is honoured only for that session, that state,
// once, and only when Google names the account's own subject; it records
// sessions.reauth_at, which deleteAccount accepts for 5 minutes, once.

/** How long a Google confirmation stands in for the password. */
export const REAUTH_PROOF_MS = 5 * 60 * 1000;
/** How long a started confirmation may take on Google's side (the OAuth cookie lives as long). */
export const REAUTH_PENDING_MS = 10 * 60 * 1000;
/** Slack for the provider's clock when reading auth_time. */
const CLOCK_SKEW_MS = 60 * 1000;

export const REAUTH_MESSAGES = {
  noGoogle: "This account does not sign in with Google: confirm the deletion with your password.",
  signedOut: "Sign in first, then confirm with Google from Settings. Nothing was changed.",
  expired: "This Google confirmation has expired or was already used. Start again from Settings. Nothing was changed.",
  wrongAccount:
    "That Google account is not the one this account signs in with, so it cannot confirm the deletion. Nothing was changed.",
  noAuthTime:
    "Google did not say when you last signed in, so it cannot confirm the deletion. Nothing was changed; we have been told, try again later.",
  stale:
    "Google did not ask you to sign in again just now, so it cannot confirm the deletion. Try again. Nothing was changed.",
  failed: "Google could not confirm it is you. Nothing was changed; try again from Settings.",
  needProof: "Confirm with Google first: a confirmation lasts 5 minutes and deletes once.",
} as const;

type ReauthDeps = Pick<Deps, "db" | "env" | "clock">;

/** The signed-in session asking: its user and the id of its session row. */
export interface ReauthSession {
  userId: string;
  sessionId: string;
}

/** Leaves for Google to confirm the deletion: the state is remembered on this session and in the OAuth cookie. */
export async function startGoogleReauth(
  deps: ReauthDeps,
  who: ReauthSession,
  secure: boolean,
): Promise<Result<{ url: string; cookie: string }>> {
  const user = await deps.db
    .select({ googleSub: users.googleSub, deletedAt: users.deletedAt })
    .from(users)
    .where(eq(users.id, who.userId))
    .get();
  if (!user || user.deletedAt !== null) return fail("not_found", "This account does not exist.");
  if (!user.googleSub) return fail("forbidden", REAUTH_MESSAGES.noGoogle);
  let started: { url: URL; state: string; codeVerifier: string };
  try {
    started = await googleOAuth(deps.env).start({ reauth: true });
  } catch (err) {
    log.error("google re-authentication could not start", { err, where: "google" });
    return fail("unavailable", REAUTH_MESSAGES.failed);
  }
  await deps.db
    .update(sessions)
    .set({ reauthState: sha256Hex(started.state), reauthStateAt: deps.clock() })
    .where(and(eq(sessions.id, who.sessionId), eq(sessions.userId, who.userId)));
  return ok({
    url: started.url.toString(),
    cookie: oauthStateCookie(
      { state: started.state, codeVerifier: started.codeVerifier, redirectTo: null, purpose: "reauth-delete" },
      secure,
    ),
  });
}

/** True when the OAuth cookie of this request says the browser left to confirm a deletion. */
export function isReauthReturn(request: Request): boolean {
  return readOauthState(request.headers.get("Cookie"))?.purpose === "reauth-delete";
}

export type ReauthOutcome = ({ ok: true; location: string } | Failure) & { cookies: string[] };

/**
 * Google's return for a deletion confirmation. Refused with a 4xx and no
 * write unless: a session is signed in, the state matches both the cookie and
 * the one this session started (not yet used, under 10 minutes old), Google
 * exchanges the code, names the subject linked to this account, and says
 * (auth_time) it authenticated the person within the last 5 minutes.
 */
export async function finishGoogleReauth(
  deps: ReauthDeps,
  request: Request,
  who: ReauthSession | null,
  secure: boolean,
): Promise<ReauthOutcome> {
  const cookies = [clearOauthStateCookie(secure)];
  const refuse = (f: Failure): ReauthOutcome => ({ ...f, cookies });
  const url = new URL(request.url);
  const pending = readOauthState(request.headers.get("Cookie"));
  if (!who) return refuse(fail("unauthenticated", REAUTH_MESSAGES.signedOut));
  const code = url.searchParams.get("code");
  const state = url.searchParams.get("state");
  if (pending?.purpose !== "reauth-delete" || !state || !sameState(state, pending.state))
    return refuse(fail("invalid", REAUTH_MESSAGES.expired));
  if (url.searchParams.get("error") || !code) return refuse(fail("invalid", REAUTH_MESSAGES.failed));

  const now = deps.clock();
  const stateHash = sha256Hex(state);
  const row = await deps.db
    .select({ reauthState: sessions.reauthState, reauthStateAt: sessions.reauthStateAt, googleSub: users.googleSub })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.id, who.sessionId), eq(sessions.userId, who.userId)))
    .get();
  if (
    !row?.reauthState ||
    !sameState(row.reauthState, stateHash) ||
    (row.reauthStateAt ?? 0) <= now - REAUTH_PENDING_MS
  )
    return refuse(fail("invalid", REAUTH_MESSAGES.expired));
  if (!row.googleSub) return refuse(fail("forbidden", REAUTH_MESSAGES.noGoogle));

  let identity: Awaited<ReturnType<ReturnType<typeof googleOAuth>["finish"]>>;
  try {
    identity = await googleOAuth(deps.env).finish(code, pending.codeVerifier);
  } catch (err) {
    log.warn("google re-authentication failed", { err });
    return refuse(fail("invalid", REAUTH_MESSAGES.failed));
  }
  if (!sameState(identity.sub, row.googleSub)) return refuse(fail("forbidden", REAUTH_MESSAGES.wrongAccount));
  // Without auth_time nothing says Google asked for the password again: refused, and reported, since it means the
  // client's session age claims setting is off in production (ADR 0326).
  if (identity.authTime === undefined) {
    log.error("google sent no auth_time for a re-authentication", { where: "google" });
    return refuse(fail("forbidden", REAUTH_MESSAGES.noAuthTime));
  }
  if (identity.authTime < now - REAUTH_PROOF_MS - CLOCK_SKEW_MS)
    return refuse(fail("forbidden", REAUTH_MESSAGES.stale));

  // The state is used once: only the request that clears it records the proof.
  const recorded = await deps.db
    .update(sessions)
    .set({ reauthAt: now, reauthState: null, reauthStateAt: null })
    .where(
      and(
        eq(sessions.id, who.sessionId),
        eq(sessions.userId, who.userId),
        eq(sessions.reauthState, stateHash),
        gt(sessions.reauthStateAt, now - REAUTH_PENDING_MS),
      ),
    )
    .returning({ id: sessions.id })
    .all();
  if (recorded.length === 0) return refuse(fail("invalid", REAUTH_MESSAGES.expired));
  return { ok: true, location: "/settings?confirm=delete", cookies };
}

/** When this session's Google confirmation stops counting, or null when it has none that counts now. */
export async function reauthValidUntil(deps: Pick<Deps, "db" | "clock">, who: ReauthSession): Promise<number | null> {
  const row = await deps.db
    .select({ reauthAt: sessions.reauthAt })
    .from(sessions)
    .where(and(eq(sessions.id, who.sessionId), eq(sessions.userId, who.userId), isNotNull(sessions.reauthAt)))
    .get();
  if (!row?.reauthAt) return null;
  const until = row.reauthAt + REAUTH_PROOF_MS;
  return until > deps.clock() ? until : null;
}

/**
 * Uses this session's Google confirmation: true when it was fresh (under 5
 * minutes) and unused, and it is now spent. `restore` gives it back when the
 * deletion it was for could not go ahead (Stripe refused).
 */
export async function consumeReauth(
  deps: Pick<Deps, "db" | "clock">,
  who: ReauthSession,
): Promise<{ ok: true; restore: () => Promise<void> } | { ok: false }> {
  const now = deps.clock();
  const fresh = and(
    eq(sessions.id, who.sessionId),
    eq(sessions.userId, who.userId),
    gt(sessions.reauthAt, now - REAUTH_PROOF_MS),
  );
  const row = await deps.db.select({ reauthAt: sessions.reauthAt }).from(sessions).where(fresh).get();
  if (!row?.reauthAt) return { ok: false };
  const spent = await deps.db
    .update(sessions)
    .set({ reauthAt: null })
    .where(and(fresh, eq(sessions.reauthAt, row.reauthAt)))
    .returning({ id: sessions.id })
    .all();
  if (spent.length === 0) return { ok: false };
  const at = row.reauthAt;
  return {
    ok: true,
    restore: async () => {
      await deps.db.update(sessions).set({ reauthAt: at }).where(eq(sessions.id, who.sessionId));
    },
  };
}
