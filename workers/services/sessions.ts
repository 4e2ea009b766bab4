import type { Database } from "@db/client";
import { sessions, type User, users } from "@db/schema";
import { randomToken, sha256Hex } from "@workers/lib/crypto";
import { eq, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import { canStage, isAdmin } from "~/shared/access";
import { cutText } from "~/shared/text";

// Revocable, hashed sessions (docs/decisions/0011-sessions-and-email-links.md): the cookie holds
// a 160-bit random token; D1 holds only its SHA-256. 30-day lifetime, extended
// when fewer than 15 days are left.
export const SESSION_COOKIE = "sw_session";
const DAY = 24 * 60 * 60 * 1000;
export const SESSION_TTL_MS = 30 * DAY;
const SESSION_RENEW_BELOW_MS = 15 * DAY;

export interface SessionInfo {
  id: string;
  userId: string;
  expiresAt: number;
  /** True when this request extended the expiry: the cookie must be sent again. */
  renewed: boolean;
}

export async function createSession(
  db: Database,
  userId: string,
  userAgent: string | null,
  now = Date.now(),
): Promise<{ token: string; expiresAt: number }> {
  const token = randomToken(20);
  const expiresAt = now + SESSION_TTL_MS;
  await db.insert(sessions).values({
    id: sha256Hex(token),
    userId,
    expiresAt,
    createdAt: now,
    userAgent: userAgent ? cutText(userAgent, 255) : null,
  });
  return { token, expiresAt };
}

/** A user's id in a query: the id itself, or the users.id column of the row being read (a correlated subquery). */
export type UserRef = string | SQLWrapper;

/**
 * Columns to read with the session, from the session's user (`users.id`): a page's own data in the same statement
 * (docs/decisions/0144-dashboard-reads-with-the-session.md). `columns` puts a placeholder (`sql.placeholder(name)`)
 * wherever a value goes and `values` binds them, so that the statement is built once per `key`: reads with the same
 * key must build the same SQL. Keys come from a short fixed list (the dashboard has eight).
 */
export interface SessionReads {
  key: string;
  columns: (db: Database, userId: typeof users.id) => Record<string, SQL.Aliased>;
  values: Record<string, unknown>;
}

export async function validateSessionToken(
  db: Database,
  token: string,
  now = Date.now(),
  reads?: SessionReads,
): Promise<{ session: SessionInfo; user: User; reads: Record<string, unknown> | null } | null> {
  if (!/^[a-z2-7]{32}$/.test(token)) return null;
  const id = sha256Hex(token);
  // One statement: the user, the session's expiry and any columns the page reads with them
  // (docs/decisions/0144-dashboard-reads-with-the-session.md).
  const row = await sessionQuery(db, reads).get({ ...reads?.values, sessionId: id });
  if (!row) return null;
  // An expired session is refused without a write; the daily cron purges it.
  if (row.expiresAt <= now) return null;
  let expiresAt = row.expiresAt;
  let renewed = false;
  if (expiresAt - now < SESSION_RENEW_BELOW_MS) {
    expiresAt = now + SESSION_TTL_MS;
    renewed = true;
    await db.update(sessions).set({ expiresAt }).where(eq(sessions.id, id));
  }
  const { user, expiresAt: _expiry, ...read } = row;
  return {
    session: { id, userId: user.id, expiresAt, renewed },
    user,
    reads: reads ? read : null,
  };
}

// The session's statement, built by drizzle once per database and shape of reads and only bound after: building it
// took more CPU than the rest of a signed-in page's server work (the dashboard's statement is long).
const sessionQueries = new WeakMap<Database, Map<string, ReturnType<typeof prepareSessionQuery>>>();

function prepareSessionQuery(db: Database, reads: SessionReads | undefined) {
  const extra: Record<string, SQL.Aliased> = reads?.columns(db, users.id) ?? {};
  return db
    .select({ ...extra, user: users, expiresAt: sql<number>`${sessions.expiresAt}`.as("session_expires_at") })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(eq(sessions.id, sql.placeholder("sessionId")))
    .prepare();
}

function sessionQuery(db: Database, reads: SessionReads | undefined) {
  let byKey = sessionQueries.get(db);
  if (!byKey) {
    byKey = new Map();
    sessionQueries.set(db, byKey);
  }
  const key = reads?.key ?? "";
  let query = byKey.get(key);
  if (!query) {
    query = prepareSessionQuery(db, reads);
    byKey.set(key, query);
  }
  return query;
}

export async function invalidateSession(db: Database, sessionId: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.id, sessionId));
}

export async function invalidateUserSessions(db: Database, userId: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.userId, userId));
}

export function sessionCookie(token: string, expiresAt: number, secure: boolean): string {
  const maxAge = Math.max(0, Math.floor((expiresAt - Date.now()) / 1000));
  return `${SESSION_COOKIE}=${token}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${maxAge}${secure ? "; Secure" : ""}`;
}

export function clearSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0${secure ? "; Secure" : ""}`;
}

/**
 * A readable hint beside the session, for pages served as static files (docs/decisions/0145): "user" or "admin"
 * while someone is signed in, with "-stager" when they have credits or a plan. It grants nothing (every page and
 * call checks the session itself); it only lets a prerendered page show Logout instead of Login and send "Get
 * Started" to the dashboard, as the rendered pages do. Kept in step by workers/http/auth.ts on every answer.
 */
export const NAV_HINT_COOKIE = "sw_nav";
export type NavHint = "user" | "admin" | "user-stager" | "admin-stager";

export function navHintOf(user: { role: string; verified: boolean; credits: number; plan: string | null }): NavHint {
  const who = isAdmin(user) ? "admin" : "user";
  return canStage({ hasPlan: user.plan !== null, credits: user.credits }) ? `${who}-stager` : who;
}
/** As long as a session can last: a hint never outlives the session it stands for by more than a renewal. */
const NAV_HINT_MAX_AGE_SECONDS = SESSION_TTL_MS / 1000;

export function navHintCookie(hint: NavHint | null, secure: boolean): string {
  const life = hint ? `${hint}; Max-Age=${NAV_HINT_MAX_AGE_SECONDS}` : "; Max-Age=0";
  return `${NAV_HINT_COOKIE}=${life}; SameSite=Lax; Path=/${secure ? "; Secure" : ""}`;
}

export function readCookie(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eqAt = part.indexOf("=");
    if (eqAt === -1) continue;
    if (part.slice(0, eqAt).trim() === name) return part.slice(eqAt + 1).trim();
  }
  return null;
}
