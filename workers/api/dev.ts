import { Hono } from "hono";
import { z } from "zod";
import { users } from "../../db/schema";
import { randomToken } from "../lib/crypto";
import { userObject } from "../objects/user-object";
import { hashPassword } from "../services/password";
import { seedDemoUsers } from "../services/seed";
import { createSession } from "../services/sessions";
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
});

export const devApi = new Hono<ApiEnv>()
  .post("/seed", async (c) => {
    const seeded = await seedDemoUsers(c.get("db"), c.env);
    return c.json({ ok: true, users: seeded });
  })
  // Creates a user (and a session) for an end-to-end test, so each test owns
  // its data instead of sharing the demo users.
  .post("/users", async (c) => {
    const parsed = fixtureUser.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) return c.json({ error: "Invalid fixture", issues: parsed.error.issues }, 400);
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
    const session = input.session ? await createSession(db, id, "e2e fixture") : null;
    return c.json({ id, email, sessionToken: session?.token ?? null }, 201);
  });
