import { env } from "cloudflare:workers";
import { creditGrants, creditLedger, creditReservations, users } from "@db/schema";
import { db, makeUser } from "@test/support/factories";
import { grant } from "@workers/objects/user/credits/grants";
import { reserveGroup } from "@workers/objects/user/credits/group";
import { GRANT_LIFETIME_MS } from "@workers/objects/user/credits/ledger-rows";
import { loadView } from "@workers/objects/user/credits/view";
import { userObject } from "@workers/objects/user-object";
import { and, eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";

// Group commit of reservations (docs/decisions/0135-ledger-group-commit.md):
// reservations that queue in the user's object are decided together against
// its view of the balance and written in one D1 batch. The global check in
// test/support/setup.ts (cached balance = ledger = grants left) runs after each.

async function cached(userId: string): Promise<number> {
  return (await db.select({ c: users.credits }).from(users).where(eq(users.id, userId)).get())?.c ?? -1;
}

async function reservations(userId: string) {
  return db.select().from(creditReservations).where(eq(creditReservations.userId, userId)).all();
}

async function userWith(credits: number) {
  const u = await makeUser({ credits });
  return { ...u, stub: userObject(env, u.id) };
}

/** A ledger row that takes the idempotency key a reservation `key` would write: its batch then fails. */
async function poison(userId: string, key: string) {
  await db.insert(creditLedger).values({
    id: `poison-${key}`,
    userId,
    kind: "commit",
    amount: 0,
    reason: "test: occupies the key",
    idempotencyKey: `reserve:${key}`,
    createdAt: Date.now(),
  });
}

describe("reservations decided in groups", () => {
  it("300 concurrent reservations of 1-3 credits against 120 over two grants: the sum taken plus the balance is 120, every refusal was short", async () => {
    const { id, stub } = await userWith(60);
    await stub.grant(id, { amount: 60, source: "plan", reason: "second grant", idempotencyKey: `second:${id}` });
    const amounts = Array.from({ length: 300 }, (_, i) => (i % 3) + 1);
    const results = await Promise.all(amounts.map((a, i) => stub.reserve(id, `g-${id}-${i}`, a, "group test")));
    const taken = results.reduce((sum, r, i) => sum + (r.ok ? (amounts[i] ?? 0) : 0), 0);
    const balance = await cached(id);
    expect(balance).toBeGreaterThanOrEqual(0);
    expect(taken + balance).toBe(120);
    // Credit 1 requests keep coming until the end, so nothing useful is left.
    expect(balance).toBe(0);
    for (const [i, r] of results.entries()) {
      expect(r.balance).toBeGreaterThanOrEqual(0);
      if (!r.ok) {
        expect(r.error).toBe("Insufficient credits");
        expect(r.balance).toBeLessThan(amounts[i] ?? 0);
      }
    }
    const rows = await reservations(id);
    expect(rows).toHaveLength(results.filter((r) => r.ok).length);
    expect(rows.reduce((s, r) => s + r.amount, 0)).toBe(120);
    // Every reservation row says where its credits came from, to the credit.
    for (const r of rows) expect(r.allocations.reduce((s, a) => s + a.amount, 0)).toBe(r.amount);
    const left = await db.select().from(creditGrants).where(eq(creditGrants.userId, id)).all();
    expect(left.map((g) => g.remaining)).toEqual([0, 0]);
  }, 60_000);

  it("a mix of concurrent reservations, refunds, commits and a grant ends where the arithmetic says, and the next reservations see it", async () => {
    const { id, stub } = await userWith(20);
    for (let i = 0; i < 10; i++) expect(await stub.reserve(id, `held-${id}-${i}`, 1, "t")).toMatchObject({ ok: true });
    const calls: Promise<{ ok: boolean }>[] = [];
    for (let i = 0; i < 30; i++) {
      calls.push(stub.reserve(id, `new-${id}-${i}`, 1, "t"));
      if (i < 5) calls.push(stub.refund(id, `held-${id}-${i}`, "provider failed"));
      else if (i < 10) calls.push(stub.commit(id, `held-${id}-${i}`));
      if (i === 15)
        calls.push(stub.grant(id, { amount: 7, source: "admin", reason: "t", idempotencyKey: `mix:${id}` }));
    }
    const results = await Promise.all(calls);
    expect(results.filter((r) => !r.ok).every((r) => "error" in r && r.error === "Insufficient credits")).toBe(true);
    const rows = await reservations(id);
    const newHeld = rows.filter((r) => r.key.startsWith("new-")).length;
    // 10 left after the held ones, then 5 refunded and 7 granted while the new ones came in.
    expect(newHeld).toBeGreaterThanOrEqual(10);
    expect(newHeld).toBeLessThanOrEqual(22);
    expect(await cached(id)).toBe(20 - 10 + 5 + 7 - newHeld);
    const byStatus = (s: string) => rows.filter((r) => r.key.startsWith("held-") && r.status === s).length;
    expect([byStatus("refunded"), byStatus("committed"), byStatus("held")]).toEqual([5, 5, 0]);
    // The object's view agrees with D1: exactly the balance left can still be reserved.
    const left = await cached(id);
    if (left > 0) expect(await stub.reserve(id, `rest-${id}`, left, "t")).toMatchObject({ ok: true, balance: 0 });
    expect(await stub.reserve(id, `over-${id}`, 1, "t")).toEqual({
      ok: false,
      code: "insufficient_credits",
      error: "Insufficient credits",
      balance: 0,
    });
  }, 60_000);

  it("the same key many times in one burst reserves once; a settled key answers with its status", async () => {
    const { id, stub } = await userWith(100);
    await stub.reserve(id, `done-${id}`, 2, "t");
    await stub.commit(id, `done-${id}`);
    const keys = Array.from({ length: 50 }, (_, i) => (i % 11 === 10 ? `done-${id}` : `k-${id}-${i % 10}`));
    const results = await Promise.all(keys.map((k) => stub.reserve(id, k, 3, "t")));
    for (const [i, r] of results.entries()) {
      expect(r).toMatchObject({ ok: true, status: keys[i]?.startsWith("done-") ? "committed" : "held" });
    }
    expect(await cached(id)).toBe(100 - 2 - 10 * 3);
    expect((await reservations(id)).filter((r) => r.status === "held")).toHaveLength(10);
    const ledgerRows = await db
      .select({ n: sql<number>`count(*)` })
      .from(creditLedger)
      .where(and(eq(creditLedger.userId, id), eq(creditLedger.kind, "reserve")))
      .get();
    expect(ledgerRows?.n).toBe(11);
    expect(await stub.reserve(id, `k-${id}-3`, 3, "t")).toEqual({ ok: true, status: "held", balance: 68 });
  }, 60_000);

  it("a repeated key is answered with its reservation even when the balance is now short", async () => {
    const { id, stub } = await userWith(1);
    expect(await stub.reserve(id, `once-${id}`, 1, "t")).toEqual({ ok: true, status: "held", balance: 0 });
    const again = await Promise.all([1, 2, 3].map(() => stub.reserve(id, `once-${id}`, 1, "t")));
    expect(again).toEqual([1, 2, 3].map(() => ({ ok: true, status: "held", balance: 0 })));
    expect(await reservations(id)).toHaveLength(1);
  });

  it("with a view in hand, a group that takes some and refuses others answers a refused repeat with its reservation", async () => {
    const { id, stub } = await userWith(3);
    expect(await stub.reserve(id, `held-${id}`, 2, "t")).toMatchObject({ ok: true, status: "held", balance: 1 });
    const view = await loadView(db, id);
    const requests = [
      { key: `new-${id}`, amount: 1, reason: "t" },
      // Decided without D1, this repeat looks like a new request for 2 credits with none left.
      { key: `held-${id}`, amount: 2, reason: "t" },
      { key: `short-${id}`, amount: 1, reason: "t" },
    ];
    const done = await reserveGroup(db, id, view, requests, Date.now());
    expect(done.answers).toEqual([
      { ok: true, status: "held", balance: 0 },
      { ok: true, status: "held", balance: 0 },
      { ok: false, code: "insufficient_credits", error: "Insufficient credits", balance: 0 },
    ]);
    expect(done.view?.balance).toBe(0);
    expect((await reservations(id)).map((r) => r.key).sort()).toEqual([`held-${id}`, `new-${id}`].sort());
    expect(await cached(id)).toBe(0);
  });

  it("a group whose batch fails writes nothing at all, and the view is reloaded", async () => {
    const { id } = await userWith(10);
    await poison(id, `bad-${id}`);
    const view = await loadView(db, id);
    expect(view?.balance).toBe(10);
    const requests = [`a-${id}`, `bad-${id}`, `b-${id}`].map((key) => ({ key, amount: 2, reason: "t" }));
    await expect(reserveGroup(db, id, view, requests, Date.now())).rejects.toThrow();
    expect(await reservations(id)).toEqual([]);
    expect(await cached(id)).toBe(10);
    const grants = await db.select().from(creditGrants).where(eq(creditGrants.userId, id)).all();
    expect(grants.map((g) => g.remaining)).toEqual([10]);
    // The same requests without the bad one, from a fresh view, go through.
    const done = await reserveGroup(db, id, null, [requests[0]!, requests[2]!], Date.now());
    expect(done.answers).toEqual([
      { ok: true, status: "held", balance: 8 },
      { ok: true, status: "held", balance: 6 },
    ]);
    expect(done.view?.balance).toBe(6);
    expect(await cached(id)).toBe(6);
  });

  it("through the object: requests grouped with a failing one fail and write nothing; later ones are right", async () => {
    const { id, stub } = await userWith(30);
    await poison(id, `bad-${id}`);
    const keys = Array.from({ length: 20 }, (_, i) => (i === 10 ? `bad-${id}` : `c-${id}-${i}`));
    const settled = await Promise.allSettled(keys.map((k) => stub.reserve(id, k, 1, "t")));
    expect(settled[10]?.status).toBe("rejected");
    const rows = new Map((await reservations(id)).map((r) => [r.key, r]));
    let okCount = 0;
    for (const [i, s] of settled.entries()) {
      const key = keys[i] ?? "";
      if (s.status === "fulfilled" && s.value.ok) {
        okCount++;
        expect(rows.has(key), key).toBe(true);
      } else expect(rows.has(key), key).toBe(false);
    }
    expect(rows.size).toBe(okCount);
    // The burst queues behind the first request's batch, so the bad key fails its group-mates too.
    expect(settled.filter((s) => s.status === "rejected").length).toBeGreaterThan(1);
    expect(await cached(id)).toBe(30 - okCount);
    // After the failure the object reloads its view: later reservations count from D1.
    const after = await Promise.all(Array.from({ length: 40 }, (_, i) => stub.reserve(id, `d-${id}-${i}`, 1, "t")));
    expect(after.filter((r) => r.ok)).toHaveLength(30 - okCount);
    expect(await cached(id)).toBe(0);
  }, 60_000);

  it("a grant that expires while the object holds its view is expired before the next group spends it", async () => {
    const { id, stub } = await userWith(5);
    expect(await stub.reserve(id, `first-${id}`, 1, "t")).toMatchObject({ ok: true, balance: 4 });
    await stub.advanceClockForTesting(GRANT_LIFETIME_MS + 1);
    expect(await stub.reserve(id, `late-${id}`, 1, "t")).toEqual({
      ok: false,
      code: "insufficient_credits",
      error: "Insufficient credits",
      balance: 0,
    });
    const expired = await db
      .select({ amount: creditLedger.amount })
      .from(creditLedger)
      .where(and(eq(creditLedger.userId, id), eq(creditLedger.kind, "expire")))
      .all();
    expect(expired).toEqual([{ amount: -4 }]);
  });

  it("a grant reads the view in its own write batch: it is D1's, the answer does not carry it, the next burst spends it exactly", async () => {
    const { id, stub } = await userWith(2);
    const grantOnce = () =>
      grant(db, id, { amount: 5, source: "admin", reason: "t", idempotencyKey: `g1-${id}` }, Date.now());
    const direct = await grantOnce();
    expect(direct).toMatchObject({ ok: true, duplicate: false, balance: 7 });
    expect(direct.ok && direct.view).toEqual(await loadView(db, id));
    expect(direct.ok && direct.view?.grants.map((g) => g.remaining)).toEqual([2, 5]);
    // A repeated key writes nothing and hands over no view, only the amount the key recorded.
    const again = await grantOnce();
    expect(again).toEqual({ ok: true, duplicate: true, balance: 7, recorded: 5 });

    const through = await stub.grant(id, { amount: 3, source: "admin", reason: "t", idempotencyKey: `g2-${id}` });
    expect(through).toEqual({ ok: true, duplicate: false, balance: 10 });
    const burst = await Promise.all(Array.from({ length: 11 }, (_, i) => stub.reserve(id, `after-${id}-${i}`, 1, "t")));
    expect(burst.filter((r) => r.ok)).toHaveLength(10);
    expect(burst.filter((r) => !r.ok)).toEqual([
      { ok: false, code: "insufficient_credits", error: "Insufficient credits", balance: 0 },
    ]);
    expect(await cached(id)).toBe(0);
    const grants = await db.select().from(creditGrants).where(eq(creditGrants.userId, id)).all();
    expect(grants.map((g) => g.remaining)).toEqual([0, 0, 0]);
  });

  it("refuses a reservation of no credits or a fraction, and writes nothing", async () => {
    const { id, stub } = await userWith(5);
    // Settled here (an RPC promise handed to expect().rejects is reported as unhandled).
    const refused = (amount: number) =>
      stub.reserve(id, `bad-${id}-${amount}`, amount, "t").then(
        () => null,
        (err: unknown) => String(err),
      );
    expect(await refused(0)).toMatch(/positive integer/);
    expect(await refused(0.5)).toMatch(/positive integer/);
    expect(await reservations(id)).toEqual([]);
    expect(await stub.reserve(id, `one-${id}`, 1, "t")).toMatchObject({ ok: true, balance: 4 });
  });
});
