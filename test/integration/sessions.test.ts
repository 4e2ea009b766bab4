import { sessions } from "@db/schema";
import { db, makeUser } from "@test/support/factories";
import { purgeExpiredSessions } from "@workers/services/maintenance";
import { hashPassword, needsRehash, PBKDF2_MAX_ITERATIONS, verifyPassword } from "@workers/services/password";
import { createSession, SESSION_TTL_MS, sessionCookie, validateSessionToken } from "@workers/services/sessions";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";

const DAY = 24 * 60 * 60 * 1000;

describe("sessions", () => {
  it("stores only the token's hash and validates the token", async () => {
    const u = await makeUser();
    const { token } = await createSession(db, u.id, "test");
    const rows = await db.select().from(sessions).where(eq(sessions.userId, u.id)).all();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.id).not.toContain(token);
    expect(rows[0]!.id).toMatch(/^[0-9a-f]{64}$/);
    expect((await validateSessionToken(db, token))?.user.id).toBe(u.id);
    // Another last letter: with "a" always, a token that ended in "a" was itself (a 1 in 32 failure).
    expect(await validateSessionToken(db, `${token.slice(0, -1)}${token.endsWith("a") ? "b" : "a"}`)).toBeNull();
    expect(await validateSessionToken(db, "'; DROP TABLE sessions; --")).toBeNull();
  });

  it("extends a session with fewer than 15 days left, refuses an expired one, and the cron purges it", async () => {
    const u = await makeUser();
    const created = Date.now() - 20 * DAY;
    const { token } = await createSession(db, u.id, "test", created);
    const found = await validateSessionToken(db, token);
    expect(found?.session.renewed).toBe(true);
    expect(found!.session.expiresAt).toBeGreaterThan(Date.now() + SESSION_TTL_MS - 60_000);

    const old = await createSession(db, u.id, "test", Date.now() - SESSION_TTL_MS - DAY);
    expect(await validateSessionToken(db, old.token)).toBeNull();
    expect(await db.select().from(sessions).where(eq(sessions.userId, u.id)).all()).toHaveLength(2);
    await purgeExpiredSessions(db);
    expect(await db.select().from(sessions).where(eq(sessions.userId, u.id)).all()).toHaveLength(1);
  });

  it("sets HttpOnly, SameSite=Lax, Path=/ and Secure outside local http", () => {
    const c = sessionCookie("tok", Date.now() + DAY, true);
    expect(c).toMatch(/HttpOnly/);
    expect(c).toMatch(/SameSite=Lax/);
    expect(c).toMatch(/Path=\//);
    expect(c).toMatch(/Secure/);
    expect(c).toMatch(/Max-Age=86\d{3}/);
    expect(sessionCookie("tok", Date.now() + DAY, false)).not.toMatch(/Secure/);
  });
});

describe("passwords", () => {
  it("hashes with PBKDF2 parameters stored in the hash and verifies", async () => {
    const hash = await hashPassword("correct horse battery");
    expect(hash).toMatch(/^pbkdf2-sha256\$100000\$/);
    expect(await verifyPassword("correct horse battery", hash)).toBe(true);
    expect(await verifyPassword("wrong horse battery", hash)).toBe(false);
    expect(needsRehash(hash)).toBe(false);
    expect(needsRehash(await hashPassword("x", 1000))).toBe(true);
  });

  it("enforces the Workers cap of 100,000 iterations that local workerd does not", async () => {
    await expect(hashPassword("x", PBKDF2_MAX_ITERATIONS + 1)).rejects.toThrow(/exceed/);
    expect(await verifyPassword("x", "pbkdf2-sha256$200000$AAAA$AAAA")).toBe(false);
    expect(await verifyPassword("x", "bcrypt$10$whatever")).toBe(false);
  });
});
