import type { Database } from "@db/client";
import { users } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { userObject } from "@workers/objects/client";
import { eq } from "drizzle-orm";
import { DEMO_PASSWORD, DEMO_USERS } from "~/shared/seed-constants";
import { hashPassword } from "./password";

// Local demo data. Reached only through /api/dev/seed, which exists only when
// the local configuration turns dev tools on.

export async function seedDemoUsers(
  db: Database,
  env: Env,
): Promise<{ email: string; credits: number; role: string }[]> {
  const out = [];
  for (const demo of DEMO_USERS) {
    const now = Date.now();
    await db
      .insert(users)
      .values({
        id: randomToken(),
        email: demo.email,
        name: demo.name,
        passwordHash: await hashPassword(DEMO_PASSWORD),
        emailVerifiedAt: now,
        // Seeded users get their credits from the seed, not the trial.
        signupCreditsGranted: 1,
        role: demo.role,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing({ target: users.email });
    await db.update(users).set({ signupCreditsGranted: 1 }).where(eq(users.email, demo.email));
    const user = await db.query.users.findFirst({ where: (u, { eq }) => eq(u.email, demo.email) });
    if (!user) throw new Error(`seed: ${demo.email} missing after insert`);
    // Each start tops the demo user back up to its credits (spent or expired ones included), through
    // its Durable Object, as a grant with its reason: a long-lived local state stays usable.
    const stub = userObject(env, user.id);
    let credits = await stub.balance(user.id);
    if (demo.credits > credits) {
      const res = await stub.grant(user.id, {
        amount: demo.credits - credits,
        source: "admin",
        reason: "Demo top-up (local seed)",
        idempotencyKey: `seed:${demo.email}:topup:${now}:${randomToken(6)}`,
      });
      credits = res.balance;
    }
    out.push({ email: demo.email, credits, role: user.role });
  }
  return out;
}
