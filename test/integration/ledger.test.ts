import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { creditLedger, creditReservations, users } from "@db/schema";
import { db, makeUser } from "@test/support/factories";
import { GRANT_LIFETIME_MS, RESERVATION_TIMEOUT_MS } from "@workers/objects/user/credits/ledger-rows";
import { commit, commitHeld, findHeld } from "@workers/objects/user/credits/reservations";
import { userObject } from "@workers/objects/user-object";
import { eq, sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";

const touched = new Set<string>();

async function ledgerSum(userId: string): Promise<number> {
  const row = await db
    .select({ sum: sql<number>`coalesce(sum(${creditLedger.amount}), 0)` })
    .from(creditLedger)
    .where(eq(creditLedger.userId, userId))
    .get();
  return row?.sum ?? 0;
}

async function cached(userId: string): Promise<number> {
  return (await db.select({ c: users.credits }).from(users).where(eq(users.id, userId)).get())?.c ?? -1;
}

afterEach(async () => {
  for (const id of touched) expect(await cached(id), `cached balance of ${id}`).toBe(await ledgerSum(id));
  touched.clear();
});

async function userWith(credits: number) {
  const u = await makeUser({ credits });
  touched.add(u.id);
  return { ...u, stub: userObject(env, u.id) };
}

describe("credit ledger in the user's Durable Object", () => {
  it("grants once per idempotency key", async () => {
    const { id, stub } = await userWith(0);
    const input = { amount: 5, source: "plan" as const, reason: "test", idempotencyKey: `evt:${id}` };
    const first = await stub.grant(id, input);
    const again = await stub.grant(id, input);
    expect(first).toMatchObject({ ok: true, duplicate: false, balance: 5 });
    expect(again).toMatchObject({ ok: true, duplicate: true, balance: 5 });
    expect(await cached(id)).toBe(5);
  });

  it("200 concurrent reservations against 50 credits: exactly 50 succeed, never negative", async () => {
    const { id, stub } = await userWith(50);
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => stub.reserve(id, `job-${id}-${i}`, 1, "concurrency test")),
    );
    const ok = results.filter((r) => r.ok);
    expect(ok).toHaveLength(50);
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.error === "Insufficient credits")).toBe(true);
    expect(Math.min(...results.map((r) => r.balance))).toBe(0);
    expect(await cached(id)).toBe(0);
    // 200 serialised ledger writes: generous on a loaded 2-core machine.
  }, 60_000);

  it("refund restores the balance and commit keeps it spent; both are idempotent", async () => {
    const { id, stub } = await userWith(3);
    await stub.reserve(id, "a", 1, "t");
    await stub.reserve(id, "b", 1, "t");
    expect(await cached(id)).toBe(1);
    expect(await stub.refund(id, "a", "provider failed")).toMatchObject({ ok: true, balance: 2 });
    expect(await stub.refund(id, "a", "provider failed")).toMatchObject({ ok: true, balance: 2 });
    expect(await stub.commit(id, "b")).toMatchObject({ ok: true, status: "committed" });
    expect(await stub.refund(id, "b", "too late")).toMatchObject({ ok: false });
    expect(await cached(id)).toBe(2);
  });

  it("a commit in two steps: finding the held reservation writes nothing, so a step between (a result's R2 write) may fail with nothing written", async () => {
    const { id, stub } = await userWith(2);
    await stub.reserve(id, "late", 1, "t");
    await stub.reserve(id, "broken", 1, "t");
    const status = async (key: string) =>
      (await db.select().from(creditReservations).where(eq(creditReservations.key, key)).get())?.status;
    const ledgerRows = async () =>
      (await db.select().from(creditLedger).where(eq(creditLedger.userId, id)).all()).length;
    const rowsBefore = await ledgerRows();
    // The reservation is read; nothing is written until the commit's own step.
    const found = await findHeld(db, id, "late", "committed");
    expect(found.held?.reservation.key).toBe("late");
    expect(await status("late")).toBe("held");
    expect(await ledgerRows()).toBe(rowsBefore);
    expect(await commitHeld(db, id, found.held!, Date.now())).toMatchObject({ ok: true, status: "committed" });
    expect(await status("late")).toBe("committed");
    // A step that failed between the two: the commit is never written, and the reservation is still held.
    const broken = await findHeld(db, id, "broken", "committed");
    expect(broken.held?.reservation.status).toBe("held");
    expect(await status("broken")).toBe("held");
    expect(await ledgerRows()).toBe(rowsBefore + 1);
    // A settled reservation is found settled: a repeated commit is a no-op, a commit of a refunded one a conflict.
    expect((await findHeld(db, id, "late", "committed")).settled).toMatchObject({ ok: true, status: "committed" });
    expect(await commit(db, id, "late", Date.now())).toMatchObject({ ok: true, status: "committed" });
    expect(await stub.refund(id, "broken", "the result could not be stored")).toMatchObject({ ok: true, balance: 1 });
  });

  it("spends the grant that expires first and expires grants after 30 days", async () => {
    const { id, stub } = await userWith(2);
    await stub.advanceClockForTesting(GRANT_LIFETIME_MS / 2);
    await stub.grant(id, { amount: 4, source: "plan", reason: "later grant", idempotencyKey: `later:${id}` });
    await stub.reserve(id, "x", 3, "t");
    // 2 from the older grant, 1 from the newer.
    expect(await cached(id)).toBe(3);
    await stub.advanceClockForTesting(GRANT_LIFETIME_MS / 2 + 1);
    expect(await stub.balance(id)).toBe(3);
    await stub.advanceClockForTesting(GRANT_LIFETIME_MS / 2);
    expect(await stub.balance(id)).toBe(0);
  });

  it("refuses a deduction below zero and changes nothing", async () => {
    const { id, stub } = await userWith(2);
    const res = await stub.deduct(id, 3, "admin removal", `deduct:${id}`, null);
    expect(res).toMatchObject({ ok: false, code: "insufficient_credits", error: "Insufficient credits", balance: 2 });
    expect(await cached(id)).toBe(2);
  });

  it("the alarm returns a reservation left unsettled for 10 minutes, and only that one", async () => {
    const { id, stub } = await userWith(3);
    await stub.reserve(id, `stuck-${id}`, 1, "job that died");
    await stub.advanceClockForTesting(RESERVATION_TIMEOUT_MS - 60_000);
    await stub.reserve(id, `fresh-${id}`, 1, "job still running");
    expect(await cached(id)).toBe(1);
    await stub.advanceClockForTesting(60_000);
    await runDurableObjectAlarm(stub);
    expect(await cached(id)).toBe(2);
    const rows = await db.query.creditReservations.findMany({ where: (r, { eq }) => eq(r.userId, id) });
    expect(Object.fromEntries(rows.map((r) => [r.key.split("-")[0], r.status]))).toEqual({
      stuck: "refunded",
      fresh: "held",
    });
  });

  it("a held reservation's credit is refused to others: a short balance gets 'Insufficient credits'", async () => {
    const { id, stub } = await userWith(1);
    expect(await stub.reserve(id, `a-${id}`, 1, "t")).toMatchObject({ ok: true, balance: 0 });
    expect(await stub.reserve(id, `b-${id}`, 1, "t")).toEqual({
      ok: false,
      code: "insufficient_credits",
      error: "Insufficient credits",
      balance: 0,
    });
  });
});

describe("free trial credits", () => {
  it("grants SIGNUP_CREDITS once, and only to a verified user", async () => {
    const unverified = await makeUser({ verified: false });
    touched.add(unverified.id);
    const stub1 = userObject(env, unverified.id);
    expect(await stub1.grantSignupCredits(unverified.id)).toMatchObject({ ok: true, granted: 0, balance: 0 });

    const verified = await makeUser();
    touched.add(verified.id);
    const stub = userObject(env, verified.id);
    const results = await Promise.all([1, 2, 3].map(() => stub.grantSignupCredits(verified.id)));
    expect(results.map((r) => (r.ok ? r.granted : -1)).sort()).toEqual([0, 0, Number(env.SIGNUP_CREDITS)]);
    expect(await cached(verified.id)).toBe(Number(env.SIGNUP_CREDITS));
    const grant = await db.query.creditGrants.findFirst({ where: (g, { eq }) => eq(g.userId, verified.id) });
    expect(grant?.source).toBe("signup");
  });
});

describe("refunds into a grant that has expired", () => {
  it("two in one alarm pass each expire again, with ledger keys that cannot collide", async () => {
    const { id, stub } = await userWith(2);
    await stub.reserve(id, `one-${id}`, 1, "job that died");
    await stub.reserve(id, `two-${id}`, 1, "job that died too");
    // Both reservations go stale and their grant expires; the alarm refunds both at the same moment.
    await stub.advanceClockForTesting(GRANT_LIFETIME_MS + RESERVATION_TIMEOUT_MS);
    await runDurableObjectAlarm(stub);
    expect(await cached(id)).toBe(0);
    const expiries = await db
      .select({ key: creditLedger.idempotencyKey, amount: creditLedger.amount })
      .from(creditLedger)
      .where(eq(creditLedger.userId, id))
      .all();
    const keys = expiries.filter((r) => r.key.startsWith("expire:")).map((r) => r.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.length).toBeGreaterThanOrEqual(2);
    const rows = await db.query.creditReservations.findMany({ where: (r, { eq }) => eq(r.userId, id) });
    expect(rows.map((r) => r.status).sort()).toEqual(["refunded", "refunded"]);
  });
});
