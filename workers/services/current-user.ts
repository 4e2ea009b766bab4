import type { Database } from "@db/client";
import { type User, users } from "@db/schema";
import { setLogUser } from "@workers/lib/log";
import { eq } from "drizzle-orm";
import type { LiveCredits } from "~/shared/live-credits";
import { liveCreditsOf } from "./account";
import { readCookie, SESSION_COOKIE, type SessionReads, sessionCookie, validateSessionToken } from "./sessions";

export interface CurrentUser {
  id: string;
  email: string;
  name: string;
  role: "user" | "admin";
  verified: boolean;
  credits: number;
  plan: string | null;
  /** Balance and plan for the plan status card, from the same row: a page needs no second read of the user. */
  live: LiveCredits;
  sessionId: string;
}

const ACTIVITY_WRITE_INTERVAL_MS = 15 * 60 * 1000;

export function toCurrentUser(user: User, sessionId: string): CurrentUser {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    role: user.role,
    verified: user.emailVerifiedAt !== null,
    credits: user.credits,
    plan: user.plan,
    live: liveCreditsOf(user),
    sessionId,
  };
}

/**
 * Resolves the signed-in user from the request's session cookie. Returns the
 * Set-Cookie header to send when the session was extended, and the results of
 * `reads` (columns read in the same statement, from the session's user) when the
 * session is valid.
 */
export async function resolveCurrentUser(
  db: Database,
  request: Request,
  opts: { secureCookies: boolean; waitUntil?: (p: Promise<unknown>) => void; reads?: SessionReads },
): Promise<{ user: CurrentUser | null; setCookie: string | null; reads: Record<string, unknown> | null }> {
  const token = readCookie(request.headers.get("Cookie"), SESSION_COOKIE);
  if (!token) return { user: null, setCookie: null, reads: null };
  const found = await validateSessionToken(db, token, Date.now(), opts.reads);
  if (!found) return { user: null, setCookie: null, reads: null };
  setLogUser(found.user.id);
  const now = Date.now();
  if (!found.user.lastActiveAt || now - found.user.lastActiveAt > ACTIVITY_WRITE_INTERVAL_MS) {
    const write = db.update(users).set({ lastActiveAt: now }).where(eq(users.id, found.user.id));
    if (opts.waitUntil) opts.waitUntil(write.then());
    else await write;
  }
  return {
    user: toCurrentUser(found.user, found.session.id),
    setCookie: found.session.renewed ? sessionCookie(token, found.session.expiresAt, opts.secureCookies) : null,
    reads: found.reads,
  };
}

export function secureCookies(env: Pick<Env, "APP_ORIGIN">, request: Request): boolean {
  return new URL(request.url).protocol === "https:" || env.APP_ORIGIN.startsWith("https:");
}
