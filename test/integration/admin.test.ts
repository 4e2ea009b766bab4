import { env } from "cloudflare:workers";
import { auditLog, jobs, photos, sessions, users } from "@db/schema";
import { db, makeUser } from "@test/support/factories";
import { allow, fakeStripe } from "@test/support/stripe";
import type { MailMessage } from "@workers/adapters/mail";
import {
  ALREADY_APPLIED,
  adjustCredits,
  KEY_USED_FOR_ANOTHER_CHANGE,
  listUsers,
  REMOVAL_ALREADY_APPLIED,
  resendVerificationFor,
  revokeSessions,
  SORT_KEYS,
  setRole,
  userDetail,
  userListQuery,
} from "@workers/services/admin";
import type { CurrentUser } from "@workers/services/current-user";
import { deleteAccount, LAST_ADMIN_DELETION } from "@workers/services/mls/account-data";
import { createSession } from "@workers/services/sessions";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";

async function admin(): Promise<CurrentUser> {
  const u = await makeUser({ role: "admin" });
  return {
    id: u.id,
    email: u.email,
    name: "admin",
    role: "admin",
    verified: true,
    credits: 0,
    plan: null,
    live: { credits: 0, plan: null },
    sessionId: "s",
  };
}

async function auditRows(targetUserId: string) {
  return db.select().from(auditLog).where(eq(auditLog.targetUserId, targetUserId)).all();
}

async function credits(userId: string) {
  return (await db.select({ c: users.credits }).from(users).where(eq(users.id, userId)).get())?.c;
}

describe("admin actions", () => {
  it("grants credits through the user's Durable Object with one audit row", async () => {
    const a = await admin();
    const u = await makeUser({ credits: 2 });
    const res = await adjustCredits(env, db, a, u.id, 5, "Goodwill after a failed shoot");
    expect(res).toEqual({ ok: true, message: "Granted 5 credits. Balance: 7." });
    expect(await credits(u.id)).toBe(7);
    const rows = await auditRows(u.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ action: "credits.grant", actorId: a.id, reason: "Goodwill after a failed shoot" });
  });

  it("refuses a removal below zero and changes nothing", async () => {
    const a = await admin();
    const u = await makeUser({ credits: 2 });
    const res = await adjustCredits(env, db, a, u.id, -3, "Chargeback");
    expect(res).toMatchObject({ ok: false, code: "conflict" });
    expect(await credits(u.id)).toBe(2);
    expect(await auditRows(u.id)).toHaveLength(0);
    const ok = await adjustCredits(env, db, a, u.id, -2, "Chargeback");
    expect(ok.ok).toBe(true);
    expect(await credits(u.id)).toBe(0);
    expect(await auditRows(u.id)).toHaveLength(1);
  });

  it("revokes every session with one audit row", async () => {
    const a = await admin();
    const u = await makeUser();
    await createSession(db, u.id, "a");
    await createSession(db, u.id, "b");
    expect(await revokeSessions(db, a, u.id, "Lost phone")).toEqual({ ok: true, message: "Signed out of 2 sessions." });
    expect(await db.select().from(sessions).where(eq(sessions.userId, u.id)).all()).toHaveLength(0);
    expect(await auditRows(u.id)).toHaveLength(1);
  });

  it("grants and removes the admin role, never the last admin's", async () => {
    const a = await admin();
    const u = await makeUser();
    expect((await setRole(db, a, u.id, "admin", "New support lead")).ok).toBe(true);
    expect((await setRole(db, a, u.id, "admin", "again")).ok).toBe(false);
    expect((await setRole(db, a, u.id, "user", "Left the team")).ok).toBe(true);
    expect((await auditRows(u.id)).map((r) => r.action)).toEqual(["role.grant", "role.remove"]);

    // Demote every other admin, then try to remove the last one.
    const admins = await db.select({ id: users.id }).from(users).where(eq(users.role, "admin")).all();
    for (const other of admins.filter((x) => x.id !== a.id)) await setRole(db, a, other.id, "user", "cleanup");
    const last = await setRole(db, a, a.id, "user", "Stepping down");
    expect(last).toEqual({ ok: false, code: "conflict", error: "The last admin cannot lose the admin role." });
    expect((await db.select({ role: users.role }).from(users).where(eq(users.id, a.id)).get())?.role).toBe("admin");
    expect(await auditRows(a.id)).toHaveLength(0);
    // An admin who never verified their e-mail cannot open the admin pages, so they do not count as another admin.
    const unverified = await makeUser({ role: "admin", verified: false });
    expect(await setRole(db, a, a.id, "user", "Stepping down")).toMatchObject({ ok: false, code: "conflict" });
    // Nor can the last verified admin delete their account and leave nobody.
    const deps = { db, env, stripe: fakeStripe().stripe, clock: Date.now, rateLimit: allow };
    const password = "correct horse 42";
    const only = await makeUser({ role: "admin", password });
    for (const other of [a.id, unverified.id]) await db.update(users).set({ role: "user" }).where(eq(users.id, other));
    expect(await deleteAccount(deps, only.id, { password })).toEqual({
      ok: false,
      code: "conflict",
      error: LAST_ADMIN_DELETION,
    });
    expect((await db.select().from(users).where(eq(users.id, only.id)).get())?.deletedAt).toBeNull();
  });

  it("resends verification to an unverified user only, with one audit row", async () => {
    const a = await admin();
    const sent: MailMessage[] = [];
    const pending: Promise<unknown>[] = [];
    const deps = {
      db,
      env,
      mailer: { send: async (m: MailMessage) => void sent.push(m) },
      defer: (p: Promise<unknown>) => void pending.push(p),
      ip: "test",
    };
    const unverified = await makeUser({ verified: false });
    expect((await resendVerificationFor(deps, a, unverified.id, "Customer asked on the phone")).ok).toBe(true);
    await Promise.all(pending);
    expect(sent.map((m) => m.to)).toEqual([unverified.email]);
    expect(sent[0]!.text).toContain("/verify-email");
    expect(await auditRows(unverified.id)).toHaveLength(1);
    const verified = await makeUser();
    expect(await resendVerificationFor(deps, a, verified.id, "again")).toMatchObject({ ok: false, code: "conflict" });
    expect(await auditRows(verified.id)).toHaveLength(0);
  });

  it("shows a user's photo and job counts and failed jobs with their errors", async () => {
    const u = await makeUser();
    const now = Date.now();
    const photo = {
      userId: u.id,
      name: "Kitchen",
      originalKey: "k",
      thumbKey: "t",
      contentType: "image/jpeg" as const,
      bytes: 10,
      width: 1,
      height: 1,
      thumbWidth: 1,
      thumbHeight: 1,
      createdAt: now,
    };
    await db.insert(photos).values([
      { ...photo, id: `p1${u.id}` },
      { ...photo, id: `p2${u.id}`, trashedAt: now },
    ]);
    const job = { userId: u.id, photoId: `p1${u.id}`, kind: "stage" as const, params: {}, createdAt: now };
    await db.insert(jobs).values([
      { ...job, id: `j1${u.id}`, status: "succeeded" },
      { ...job, id: `j2${u.id}`, status: "failed", error: "Failed to process image: 500 - Internal Server Error" },
    ]);
    const detail = await userDetail(db, u.id);
    expect(detail?.photos).toEqual({ total: 2, trashed: 1 });
    expect(detail?.jobs).toEqual({ succeeded: 1, failed: 1 });
    expect(detail?.failedJobs.map((j) => j.error)).toEqual(["Failed to process image: 500 - Internal Server Error"]);
  });

  it("answers 404 for an unknown user and writes nothing", async () => {
    const a = await admin();
    expect(await adjustCredits(env, db, a, "nope", 5, "x")).toMatchObject({ ok: false, code: "not_found" });
    expect(await revokeSessions(db, a, "nope", "x")).toMatchObject({ ok: false, code: "not_found" });
    expect(await setRole(db, a, "nope", "admin", "x")).toMatchObject({ ok: false, code: "not_found" });
    expect(await auditRows("nope")).toHaveLength(0);
  });
});

describe("the users table query", () => {
  it("searches by e-mail prefix and pages with a cursor", async () => {
    const tag = `pg${crypto.randomUUID().slice(0, 6)}`;
    for (let i = 0; i < 5; i++) await makeUser({ email: `${tag}-${i}@example.test` });
    const first = await listUsers(db, { q: tag, sort: "email", dir: "asc", limit: 2 });
    expect(first.rows.map((r) => r.email)).toEqual([`${tag}-0@example.test`, `${tag}-1@example.test`]);
    const second = await listUsers(db, {
      q: tag.toUpperCase(),
      sort: "email",
      dir: "asc",
      limit: 2,
      cursor: first.nextCursor,
    });
    expect(second.rows.map((r) => r.email)).toEqual([`${tag}-2@example.test`, `${tag}-3@example.test`]);
    const third = await listUsers(db, { q: tag, sort: "email", dir: "asc", limit: 2, cursor: second.nextCursor });
    expect(third.rows).toHaveLength(1);
    expect(third.nextCursor).toBeNull();
  });

  it("uses an index for every search and sort (no full scan, no temporary sort)", async () => {
    for (const sort of SORT_KEYS) {
      for (const dir of ["asc", "desc"] as const) {
        for (const q of [undefined, "demo"]) {
          for (const cursor of [null, btoa(JSON.stringify([sort === "email" ? "m" : 5, "zzz"]))]) {
            const { sql, params } = userListQuery(db, { sort, dir, q, cursor }).toSQL();
            const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
              .bind(...params)
              .all<{ detail: string }>();
            const plan = results.map((r) => r.detail).join(" | ");
            const label = `${sort} ${dir} q=${q} cursor=${Boolean(cursor)}: ${plan}`;
            expect(plan, label).toMatch(/USING (COVERING )?INDEX|USING INTEGER PRIMARY KEY/);
            expect(plan, label).not.toMatch(/SCAN users(?! USING)/);
            if (!q || sort === "email") expect(plan, label).not.toContain("TEMP B-TREE");
          }
        }
      }
    }
  });
});

describe("admin credit changes are idempotent per form submission", () => {
  it("a second submit of the same form (or API Idempotency-Key) changes nothing and says so", async () => {
    const a = await admin();
    const target = await makeUser();
    const submission = crypto.randomUUID();
    const first = await adjustCredits(env, db, a, target.id, 5, "welcome", submission);
    expect(first).toMatchObject({ ok: true });
    const again = await adjustCredits(env, db, a, target.id, 5, "welcome", submission);
    expect(again).toEqual({ ok: false, code: "conflict", error: ALREADY_APPLIED });
    expect(await credits(target.id)).toBe(5);
    expect(await auditRows(target.id)).toHaveLength(1);
    // A removal repeated the same way, too; a new submission is a new change.
    const removal = crypto.randomUUID();
    await adjustCredits(env, db, a, target.id, -2, "typo", removal);
    expect(await adjustCredits(env, db, a, target.id, -2, "typo", removal)).toEqual({
      ok: false,
      code: "conflict",
      error: REMOVAL_ALREADY_APPLIED,
    });
    expect(await credits(target.id)).toBe(3);
    await adjustCredits(env, db, a, target.id, 5, "welcome", crypto.randomUUID());
    expect(await credits(target.id)).toBe(8);
    // The same key with another amount or sign is refused, not answered as the first change; nothing moves.
    for (const other of [-5, 6])
      expect(await adjustCredits(env, db, a, target.id, other, "second thoughts", submission)).toEqual({
        ok: false,
        code: "conflict",
        error: KEY_USED_FOR_ANOTHER_CHANGE,
      });
    expect(await credits(target.id)).toBe(8);
    expect(await auditRows(target.id)).toHaveLength(3);
  });
});
