import type { Database } from "@db/client";
import { type User, users } from "@db/schema";
import { eq } from "drizzle-orm";
import { readCookie, SESSION_COOKIE, sessionCookie, validateSessionToken } from "./sessions";

export interface CurrentUser {
  id: string;
  email: string;
  name: string;
  role: "user" | "admin";
  verified: boolean;
  credits: number;
  plan: string | null;
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
    sessionId,
  };
}

/**
 * Resolves the signed-in user from the request's session cookie. Returns the
 * Set-Cookie header to send when the session was extended.
 */
export async function resolveCurrentUser(
  db: Database,
  request: Request,
  opts: { secureCookies: boolean; waitUntil?: (p: Promise<unknown>) => void },
): Promise<{ user: CurrentUser | null; setCookie: string | null }> {
  const token = readCookie(request.headers.get("Cookie"), SESSION_COOKIE);
  if (!token) return { user: null, setCookie: null };
  const found = await validateSessionToken(db, token);
  if (!found) return { user: null, setCookie: null };
  const now = Date.now();
  if (!found.user.lastActiveAt || now - found.user.lastActiveAt > ACTIVITY_WRITE_INTERVAL_MS) {
    const write = db.update(users).set({ lastActiveAt: now }).where(eq(users.id, found.user.id));
    if (opts.waitUntil) opts.waitUntil(write.then());
    else await write;
  }
  return {
    user: toCurrentUser(found.user, found.session.id),
    setCookie: found.session.renewed ? sessionCookie(token, found.session.expiresAt, opts.secureCookies) : null,
  };
}

export function secureCookies(env: Pick<Env, "APP_ORIGIN">, request: Request): boolean {
  return new URL(request.url).protocol === "https:" || env.APP_ORIGIN.startsWith("https:");
}
