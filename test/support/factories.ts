import { env } from "cloudflare:workers";
import { createDb } from "@db/client";
import { users } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { userObject } from "@workers/objects/user-object";
import { hashPassword } from "@workers/services/password";
import { createSession } from "@workers/services/sessions";

export const db = createDb(env.DB);

let seq = 0;
export async function makeUser(
  opts: { email?: string; password?: string; verified?: boolean; role?: "user" | "admin"; credits?: number } = {},
) {
  const now = Date.now();
  const id = randomToken();
  const email = opts.email ?? `user${++seq}-${id.slice(0, 6)}@example.test`;
  await db.insert(users).values({
    id,
    email,
    name: email.split("@")[0] ?? "user",
    passwordHash: opts.password ? await hashPassword(opts.password, 1000) : null,
    emailVerifiedAt: opts.verified === false ? null : now,
    role: opts.role ?? "user",
    createdAt: now,
    updatedAt: now,
  });
  if (opts.credits) {
    await userObject(env, id).grant(id, {
      amount: opts.credits,
      source: "admin",
      reason: "test factory",
      idempotencyKey: `factory:${id}`,
    });
  }
  return { id, email };
}

/** A signed-in user and the Cookie header that carries their session. */
export async function signedIn(opts: Parameters<typeof makeUser>[0] = {}) {
  const user = await makeUser(opts);
  const { token } = await createSession(db, user.id, "vitest");
  return { ...user, cookie: `sw_session=${token}` };
}
