import type { Database } from "@db/client";
import { apiKeys, auditLog, creditLedger, jobs, photos, sessions, users } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { userObject } from "@workers/objects/client";
import type { AccountDeps } from "@workers/services/accounts/account-deps";
import { sendVerification } from "@workers/services/accounts/verification";
import { and, asc, count, desc, eq, type SQL, sql } from "drizzle-orm";
import type { Result } from "~/shared/result";
import { activeKeyCount, listApiKeys, revokeAllKeysStatement } from "./api-keys";
import type { CurrentUser } from "./current-user";
import { endExportLinksStatements } from "./mls/account-data";

// The admin console's reads and actions. Every action writes exactly one
// audit_log row in the same atomic write as its effect, and credits change only
// through the user's Durable Object.

export const SORT_KEYS = ["email", "created", "credits", "active"] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export const PAGE_SIZE = 50;

export interface AdminUserRow {
  id: string;
  email: string;
  name: string;
  role: "user" | "admin";
  plan: string | null;
  credits: number;
  verified: boolean;
  createdAt: number;
  lastActiveAt: number | null;
  /** When the account was deleted (docs/decisions/0112-account-deletion-and-export.md). */
  deletedAt: number | null;
}

export interface UserListQuery {
  /** E-mail prefix (e-mails are stored lower-case, so the prefix is too). */
  q?: string;
  sort: SortKey;
  dir: "asc" | "desc";
  cursor?: string | null;
  limit?: number;
}

function sortExpr(sort: SortKey): SQL {
  switch (sort) {
    case "email":
      return sql`${users.email}`;
    case "created":
      return sql`${users.createdAt}`;
    case "credits":
      return sql`${users.credits}`;
    case "active":
      // Matches the expression index users_last_active.
      return sql`coalesce(${users.lastActiveAt}, 0)`;
  }
}

function encodeCursor(value: string | number, id: string): string {
  return btoa(JSON.stringify([value, id])).replace(/=+$/, "");
}

function decodeCursor(cursor: string | null | undefined): [string | number, string] | null {
  if (!cursor) return null;
  try {
    const v = JSON.parse(atob(cursor)) as unknown;
    if (
      Array.isArray(v) &&
      v.length === 2 &&
      (typeof v[0] === "string" || typeof v[0] === "number") &&
      typeof v[1] === "string"
    ) {
      return [v[0], v[1]];
    }
  } catch {
    // fall through
  }
  return null;
}

/** The SQL of one page of the users table: a keyset page over an index, never a table scan. */
export function userListQuery(db: Database, query: UserListQuery) {
  const expr = sortExpr(query.sort);
  const limit = Math.min(Math.max(query.limit ?? PAGE_SIZE, 1), 200);
  const where: SQL[] = [];
  const q = query.q?.trim().toLowerCase();
  if (q) where.push(sql`${users.email} >= ${q} AND ${users.email} < ${`${q}\u{10FFFF}`}`);
  const cursor = decodeCursor(query.cursor);
  if (cursor) {
    where.push(
      query.dir === "asc"
        ? sql`(${expr}, ${users.id}) > (${cursor[0]}, ${cursor[1]})`
        : sql`(${expr}, ${users.id}) < (${cursor[0]}, ${cursor[1]})`,
    );
  }
  const order = query.dir === "asc" ? [asc(expr), asc(users.id)] : [desc(expr), desc(users.id)];
  return db
    .select({
      id: users.id,
      email: users.email,
      name: users.name,
      role: users.role,
      plan: users.plan,
      credits: users.credits,
      emailVerifiedAt: users.emailVerifiedAt,
      createdAt: users.createdAt,
      lastActiveAt: users.lastActiveAt,
      deletedAt: users.deletedAt,
      sortValue: sql<string | number>`${expr}`,
    })
    .from(users)
    .where(where.length ? and(...where) : undefined)
    .orderBy(...order)
    .limit(limit + 1);
}

export async function listUsers(
  db: Database,
  query: UserListQuery,
): Promise<{ rows: AdminUserRow[]; nextCursor: string | null }> {
  const limit = Math.min(Math.max(query.limit ?? PAGE_SIZE, 1), 200);
  const found = await userListQuery(db, query).all();
  const page = found.slice(0, limit);
  const last = page.at(-1);
  return {
    rows: page.map((r) => ({
      id: r.id,
      email: r.email,
      name: r.name,
      role: r.role,
      plan: r.plan,
      credits: r.credits,
      verified: r.emailVerifiedAt !== null,
      createdAt: r.createdAt,
      lastActiveAt: r.lastActiveAt,
      deletedAt: r.deletedAt,
    })),
    nextCursor: found.length > limit && last ? encodeCursor(last.sortValue, last.id) : null,
  };
}

export async function userDetail(db: Database, userId: string) {
  const user = await db.query.users.findFirst({ where: eq(users.id, userId) });
  if (!user) return null;
  const [ledger, sessionRows, audit, photoCounts, jobCounts, failedJobs, keys] = await Promise.all([
    db
      .select()
      .from(creditLedger)
      .where(eq(creditLedger.userId, userId))
      .orderBy(desc(creditLedger.createdAt))
      .limit(200)
      .all(),
    db
      .select({
        id: sessions.id,
        createdAt: sessions.createdAt,
        expiresAt: sessions.expiresAt,
        userAgent: sessions.userAgent,
      })
      .from(sessions)
      .where(eq(sessions.userId, userId))
      .orderBy(desc(sessions.createdAt))
      .all(),
    db
      .select()
      .from(auditLog)
      .where(eq(auditLog.targetUserId, userId))
      .orderBy(desc(auditLog.createdAt))
      .limit(100)
      .all(),
    db
      .select({ total: count(), trashed: sql<number>`count(${photos.trashedAt})` })
      .from(photos)
      .where(eq(photos.userId, userId))
      .get(),
    db.select({ status: jobs.status, n: count() }).from(jobs).where(eq(jobs.userId, userId)).groupBy(jobs.status).all(),
    db
      .select({ id: jobs.id, kind: jobs.kind, error: jobs.error, createdAt: jobs.createdAt })
      .from(jobs)
      .where(and(eq(jobs.userId, userId), eq(jobs.status, "failed")))
      .orderBy(desc(jobs.createdAt))
      .limit(50)
      .all(),
    listApiKeys(db, userId),
  ]);
  return {
    user: {
      id: user.id,
      email: user.email,
      name: user.name,
      role: user.role,
      plan: user.plan,
      credits: user.credits,
      verified: user.emailVerifiedAt !== null,
      createdAt: user.createdAt,
      lastActiveAt: user.lastActiveAt,
      deletedAt: user.deletedAt,
    },
    ledger,
    photos: { total: photoCounts?.total ?? 0, trashed: photoCounts?.trashed ?? 0 },
    jobs: Object.fromEntries(jobCounts.map((j) => [j.status, j.n])) as Partial<
      Record<(typeof jobs.$inferSelect)["status"], number>
    >,
    failedJobs,
    // Session ids are hashes of tokens; show only a short prefix.
    sessions: sessionRows.map((s) => ({ ...s, id: s.id.slice(0, 8) })),
    // The user's API keys, as their settings page lists them (never a secret: only the prefix).
    apiKeys: keys,
    audit,
  };
}

export type ActionResult = Result<{ message: string }>;

function entry(
  admin: CurrentUser,
  action: (typeof auditLog.$inferInsert)["action"],
  reason: string,
  details: Record<string, unknown> = {},
) {
  return { id: randomToken(), actorId: admin.id, actorEmail: admin.email, action, reason, details };
}

async function exists(db: Database, userId: string): Promise<boolean> {
  return Boolean(await db.select({ id: users.id }).from(users).where(eq(users.id, userId)).get());
}

/** What a second submission of the same credits form answers. */
export const ALREADY_APPLIED = "This grant was already applied. Submitting the form again changed nothing.";
export const KEY_USED_FOR_ANOTHER_CHANGE =
  "This Idempotency-Key (or form) was already used for another amount. Nothing was changed: send the new change with a new key.";
export const REMOVAL_ALREADY_APPLIED = "This removal was already applied. Submitting the form again changed nothing.";

/** Adds (amount > 0) or removes (amount < 0) credits; never below zero. */
export async function adjustCredits(
  env: Env,
  db: Database,
  admin: CurrentUser,
  userId: string,
  amount: number,
  reason: string,
  /** The form submission (or API Idempotency-Key) this change belongs to: submitting it again changes nothing. */
  submission?: string,
): Promise<ActionResult> {
  if (!(await exists(db, userId))) return { ok: false, code: "not_found", error: "User not found" };
  const stub = userObject(env, userId);
  const audit = entry(admin, amount > 0 ? "credits.grant" : "credits.remove", reason);
  const key = submission ? `admin:submission:${userId}:${submission}` : `admin:${audit.id}`;
  // The key's first change answered again; a key used for another amount (or sign) is refused, changing nothing.
  const repeatOf = (recorded: number | undefined): ActionResult => ({
    ok: false,
    code: "conflict",
    error: recorded !== amount ? KEY_USED_FOR_ANOTHER_CHANGE : amount > 0 ? ALREADY_APPLIED : REMOVAL_ALREADY_APPLIED,
  });
  if (amount > 0) {
    const res = await stub.grant(userId, {
      amount,
      source: "admin",
      kind: "adjust",
      reason: `Admin: ${reason}`,
      idempotencyKey: key,
      actorId: admin.id,
      audit,
    });
    if (res.ok && res.duplicate) return repeatOf(res.recorded);
    return res.ok
      ? { ok: true, message: `Granted ${amount} credits. Balance: ${res.balance}.` }
      : { ok: false, code: "not_found", error: res.error };
  }
  const res = await stub.deduct(userId, -amount, `Admin: ${reason}`, key, admin.id, audit);
  if (res.ok && res.duplicate) return repeatOf(res.recorded);
  if (!res.ok) return { ok: false, code: "conflict", error: `${res.error}: the balance is ${res.balance}.` };
  return { ok: true, message: `Removed ${-amount} credits. Balance: ${res.balance}.` };
}

/**
 * "Sign out everywhere": ends every session, revokes every API key and ends every export link of the user in one
 * batch with its audit row (docs/decisions/0153-credentials-end-with-the-accounts-trust.md, 0206). The user's settings page says why their keys
 * stopped working.
 */
export async function revokeSessions(
  db: Database,
  admin: CurrentUser,
  userId: string,
  reason: string,
): Promise<ActionResult> {
  if (!(await exists(db, userId))) return { ok: false, code: "not_found", error: "User not found" };
  const e = entry(admin, "sessions.revoke", reason);
  const [[{ n }], keys] = await Promise.all([
    db.select({ n: count() }).from(sessions).where(eq(sessions.userId, userId)).all() as Promise<[{ n: number }]>,
    activeKeyCount(db, userId),
  ]);
  const now = Date.now();
  await db.batch([
    db.delete(sessions).where(eq(sessions.userId, userId)),
    revokeAllKeysStatement(db, userId, "sessions_revoked", now),
    ...endExportLinksStatements(db, userId, now),
    db.insert(auditLog).values({ ...e, targetUserId: userId, details: { sessions: n, apiKeys: keys }, createdAt: now }),
  ]);
  const plural = (k: number, word: string) => `${k} ${word}${k === 1 ? "" : "s"}`;
  return {
    ok: true,
    message: `Signed out of ${plural(n, "session")}${keys > 0 ? ` and revoked ${plural(keys, "API key")}` : ""}.`,
  };
}

/** An API key id: randomToken(10), 16 base32 letters. */
export const API_KEY_ID = /^[a-z2-7]{16}$/;

/** Revokes one API key of the user, with its audit row in the same batch; another user's key is not found. */
export async function revokeUserApiKey(
  db: Database,
  admin: CurrentUser,
  userId: string,
  keyId: string,
  reason: string,
): Promise<ActionResult> {
  const key = await db
    .select({ name: apiKeys.name, prefix: apiKeys.prefix, revokedAt: apiKeys.revokedAt })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.userId, userId)))
    .get();
  if (!key) return { ok: false, code: "not_found", error: "This user has no such API key." };
  if (key.revokedAt !== null) return { ok: false, code: "conflict", error: "This key is already revoked." };
  const e = entry(admin, "api_key.revoke", reason, { keyId, prefix: key.prefix });
  const now = Date.now();
  // The audit row is written only when the key was still active, in the same atomic batch.
  const d1 = db.$client;
  const results = await d1.batch([
    d1
      .prepare(
        "UPDATE api_keys SET revoked_at = ?1, revoked_reason = 'admin' WHERE id = ?2 AND user_id = ?3 AND revoked_at IS NULL",
      )
      .bind(now, keyId, userId),
    d1
      .prepare(
        `INSERT INTO audit_log (id, actor_id, actor_email, action, target_user_id, reason, details, created_at)
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE changes() = 1`,
      )
      .bind(e.id, e.actorId, e.actorEmail, e.action, userId, reason, JSON.stringify(e.details), now),
  ]);
  if ((results[0]?.meta.changes ?? 0) !== 1)
    return { ok: false, code: "conflict", error: "This key is already revoked." };
  return { ok: true, message: `Revoked the API key “${key.name}” (${key.prefix}…).` };
}

/** Grants or removes the admin role. The last admin can never be removed. */
export async function setRole(
  db: Database,
  admin: CurrentUser,
  userId: string,
  role: "user" | "admin",
  reason: string,
): Promise<ActionResult> {
  const target = await db.select({ role: users.role }).from(users).where(eq(users.id, userId)).get();
  if (!target) return { ok: false, code: "not_found", error: "User not found" };
  if (target.role === role)
    return { ok: false, code: "conflict", error: role === "admin" ? "Already an admin." : "Not an admin." };
  const e = entry(admin, role === "admin" ? "role.grant" : "role.remove", reason);
  const now = Date.now();
  // The guard and the audit row are conditional SQL inside one atomic batch, so
  // two admins removing each other at once cannot leave no admin behind.
  // Another verified admin must remain: the admin pages need one (app/shared/access.ts), so an unverified admin
  // does not count.
  const guard =
    role === "user"
      ? "AND EXISTS (SELECT 1 FROM users o WHERE o.role = 'admin' AND o.email_verified_at IS NOT NULL AND o.deleted_at IS NULL AND o.id != ?3)"
      : "";
  const d1 = db.$client;
  const results = await d1.batch([
    d1
      .prepare(`UPDATE users SET role = ?1, updated_at = ?2 WHERE id = ?3 AND role = ?4 ${guard}`)
      .bind(role, now, userId, target.role),
    d1
      .prepare(
        `INSERT INTO audit_log (id, actor_id, actor_email, action, target_user_id, reason, details, created_at)
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, '{}', ?7 WHERE changes() = 1`,
      )
      .bind(e.id, e.actorId, e.actorEmail, e.action, userId, reason, now),
  ]);
  const changed = results[0]?.meta.changes ?? 0;
  if (changed !== 1) return { ok: false, code: "conflict", error: "The last admin cannot lose the admin role." };
  return { ok: true, message: role === "admin" ? "Admin role granted." : "Admin role removed." };
}

/** Sends a fresh verification link to an unverified account. */
export async function resendVerificationFor(
  deps: AccountDeps,
  admin: CurrentUser,
  userId: string,
  reason: string,
): Promise<ActionResult> {
  const user = await deps.db.query.users.findFirst({ where: eq(users.id, userId) });
  if (!user) return { ok: false, code: "not_found", error: "User not found" };
  if (user.emailVerifiedAt !== null) return { ok: false, code: "conflict", error: "This e-mail is already verified." };
  const e = entry(admin, "verification.resend", reason);
  await deps.db.insert(auditLog).values({ ...e, targetUserId: userId, createdAt: Date.now() });
  sendVerification(deps, user, null);
  return { ok: true, message: `A new verification link is on its way to ${user.email}.` };
}
