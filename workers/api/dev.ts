import { users } from "@db/schema";
import { readJson } from "@workers/http/body";
import { failureJson } from "@workers/http/result";
import { randomToken } from "@workers/lib/crypto";
import { userObject } from "@workers/objects/user-object";
import { hashPassword } from "@workers/services/password";
import { seedDemoUsers } from "@workers/services/seed";
import { createSession, SESSION_TTL_MS } from "@workers/services/sessions";
import { Hono } from "hono";
import { z } from "zod";
import type { ApiEnv } from "./types";

// Development and test fixtures. Mounted under /api/dev only when the local
// configuration turns dev tools on (see workers/api/index.ts).

const fixtureUser = z.object({
  email: z.email().optional(),
  name: z.string().min(1).max(100).optional(),
  password: z.string().min(8).max(128).optional(),
  verified: z.boolean().default(true),
  role: z.enum(["user", "admin"]).default("user"),
  credits: z.number().int().min(0).max(10_000).default(0),
  session: z.boolean().default(true),
  /** Make the session one that expired a day ago (to test expired sessions). */
  expiredSession: z.boolean().default(false),
});

// Columns that change on their own (activity timestamps, health probes) are left
// out of the state digest, so it shows only what a request deliberately wrote.
const VOLATILE: Record<string, string[]> = { users: ["last_active_at", "updated_at"] };
const SKIPPED_TABLES = new Set(["health_checks", "d1_migrations", "_cf_KV", "sqlite_sequence"]);

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export const devApi = new Hono<ApiEnv>()
  // A digest of every D1 table and every R2 object, so a test can prove that a
  // refused request changed nothing.
  .get("/state", async (c) => {
    const tables = await c.env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all<{
      name: string;
    }>();
    const d1: Record<string, { rows: number; digest: string }> = {};
    for (const { name } of tables.results) {
      if (SKIPPED_TABLES.has(name) || name.startsWith("sqlite_") || name.startsWith("_cf_")) continue;
      const { results } = await c.env.DB.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).all<
        Record<string, unknown>
      >();
      const skip = VOLATILE[name] ?? [];
      const rows = results.map((r) => Object.entries(r).filter(([k]) => !skip.includes(k)));
      d1[name] = { rows: results.length, digest: await sha256(JSON.stringify(rows)) };
    }
    const r2: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await c.env.PHOTOS.list({ cursor, limit: 1000 });
      for (const o of page.objects) if (!o.key.startsWith("health/")) r2.push(`${o.key}:${o.size}:${o.etag}`);
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
    return c.json({ d1, r2: { objects: r2.length, digest: await sha256(r2.join("\n")) } });
  })
  .post("/seed", async (c) => {
    const seeded = await seedDemoUsers(c.get("db"), c.env);
    return c.json({ ok: true, users: seeded });
  })
  // Creates a user (and a session) for an end-to-end test, so each test owns
  // its data instead of sharing the demo users.
  .post("/users", async (c) => {
    const parsed = await readJson(c.req.raw, fixtureUser);
    if (!parsed.ok) return failureJson(parsed);
    const input = parsed.data;
    const db = c.get("db");
    const id = randomToken();
    const now = Date.now();
    const email = (input.email ?? `e2e-${id.slice(0, 10)}@example.test`).toLowerCase();
    await db.insert(users).values({
      id,
      email,
      name: input.name ?? email.split("@")[0] ?? "user",
      passwordHash: input.password ? await hashPassword(input.password) : null,
      emailVerifiedAt: input.verified ? now : null,
      // A fixture has exactly the credits it asks for: no trial credits on top at its first sign-in.
      signupCreditsGranted: input.verified ? 1 : 0,
      role: input.role,
      createdAt: now,
      updatedAt: now,
    });
    if (input.credits > 0) {
      await userObject(c.env, id).grant(id, {
        amount: input.credits,
        source: "admin",
        reason: "Test fixture credits",
        idempotencyKey: `fixture:${id}`,
      });
    }
    const sessionNow = input.expiredSession ? now - SESSION_TTL_MS - 24 * 60 * 60 * 1000 : now;
    const session = input.session ? await createSession(db, id, "e2e fixture", sessionNow) : null;
    return c.json({ id, email, sessionToken: session?.token ?? null }, 201);
  })
  // Benchmark: `users` users each make `perUser` concurrent 1-credit
  // reservations against a balance of exactly `perUser`; reports throughput and
  // proves no balance went negative (npm run bench).
  .post("/bench/reservations", async (c) => {
    const parsed = await readJson(
      c.req.raw,
      z.object({ users: z.number().int().min(1).max(200), perUser: z.number().int().min(1).max(500) }),
    );
    if (!parsed.ok) return failureJson(parsed);
    const { users: count, perUser } = parsed.data;
    const db = c.get("db");
    const now = Date.now();
    const ids = Array.from({ length: count }, () => randomToken());
    await db.batch(
      ids.map((id) =>
        db.insert(users).values({
          id,
          email: `bench-${id}@example.test`,
          name: "bench",
          emailVerifiedAt: now,
          createdAt: now,
          updatedAt: now,
        }),
      ) as [never, ...never[]],
    );
    await Promise.all(
      ids.map((id) =>
        userObject(c.env, id).grant(id, {
          amount: perUser,
          source: "admin",
          reason: "bench",
          idempotencyKey: `bench:${id}`,
        }),
      ),
    );
    const started = performance.now();
    const results = await Promise.all(
      ids.flatMap((id) =>
        Array.from({ length: perUser + 1 }, (_, i) =>
          userObject(c.env, id).reserve(id, `bench:${id}:${i}`, 1, "bench"),
        ),
      ),
    );
    const ms = performance.now() - started;
    const ok = results.filter((r) => r.ok).length;
    const negative = results.some((r) => r.balance < 0);
    return c.json({ attempts: results.length, succeeded: ok, refused: results.length - ok, ms, negative });
  });
