import { env } from "cloudflare:workers";
import { creditLedger, users } from "@db/schema";
import { db } from "@test/support/factories";
import { userObject } from "@workers/objects/client";
import { GRANT_LIFETIME_MS } from "@workers/objects/user/credits/ledger-rows";
import { seedDemoUsers } from "@workers/services/seed";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { DEMO_USERS } from "~/shared/seed-constants";

// npm start seeds the demo users on every start (dev tools only): the demo user is topped back up to its
// credits through its Durable Object, so a long-lived local state never shows a demo user who can do nothing.

describe("demo seeding", () => {
  const demo = DEMO_USERS.find((d) => d.credits > 0)!;

  it("tops the demo user back up after spending and after expiry, as ledger grants with their reason", async () => {
    expect((await seedDemoUsers(db, env)).find((u) => u.email === demo.email)?.credits).toBe(demo.credits);
    const user = (await db.query.users.findFirst({ where: eq(users.email, demo.email) }))!;
    const stub = userObject(env, user.id);
    await stub.reserve(user.id, `demo-spend-${Date.now()}`, 5, "spent in a demo");
    expect(await stub.balance(user.id)).toBe(demo.credits - 5);
    expect((await seedDemoUsers(db, env)).find((u) => u.email === demo.email)?.credits).toBe(demo.credits);
    // Thirty days later every grant has expired; the next start tops up again.
    await stub.advanceClockForTesting(GRANT_LIFETIME_MS + 1000);
    expect(await stub.balance(user.id)).toBe(0);
    expect((await seedDemoUsers(db, env)).find((u) => u.email === demo.email)?.credits).toBe(demo.credits);
    const topUps = await db.select().from(creditLedger).where(eq(creditLedger.userId, user.id)).all();
    expect(topUps.filter((r) => r.reason === "Demo top-up (local seed)").length).toBeGreaterThanOrEqual(2);
    // Seeding again with nothing spent grants nothing.
    const before = topUps.length;
    await seedDemoUsers(db, env);
    expect(await db.select().from(creditLedger).where(eq(creditLedger.userId, user.id)).all()).toHaveLength(before);
  });
});
