import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { countStatement, hourOf } from "@db/ops-counts";
import { dataExports, opsCounts, users } from "@db/schema";
import { db, makeUser } from "@test/support/factories";
import { api, onPlan, photosOf, settleJob } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { workerFetch } from "@test/support/worker";
import worker from "@workers/app";
import { randomToken } from "@workers/lib/crypto";
import { type OperationsView, percentiles, readOperations } from "@workers/services/operations";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it, vi } from "vitest";

// The operations page's reads (docs/decisions/0184-operations-aggregates.md): counters kept in the writes that end
// jobs, read back in one round trip. Each test compares the figures before and after what it does.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
  // Provider calls log one info line each; kept off the test output.
  vi.spyOn(console, "log").mockImplementation(() => undefined);
});

const day = (o: OperationsView) => o.windows[1]!;
const hour = (o: OperationsView) => o.windows[0]!;
const cause = (list: { cause: string; count: number }[], c: string) => list.find((t) => t.cause === c)?.count ?? 0;

async function stage(cookie: string, photoId: string) {
  const res = await api(cookie, "POST", `/api/photos/${photoId}/jobs`, {
    kind: "stage",
    roomType: "Bedroom",
    designStyle: "Scandinavian",
  });
  expect(res.status).toBe(202);
  return settleJob(cookie, res.body.job.id);
}

describe("operations aggregates", () => {
  it("counts jobs as they end, with their provider calls' latency and failures by cause", async () => {
    const before = await readOperations(db, env);
    const user = await onPlan("Starter plan", 5);
    const [a, b] = await photosOf(user.id, 2);
    expect((await stage(user.cookie, a!.id)).status).toBe("succeeded");
    provider.failEvery = 1;
    provider.reset();
    expect((await stage(user.cookie, b!.id)).status).toBe("failed");

    const after = await readOperations(db, env);
    for (const w of [hour, day]) {
      expect(w(after).jobs.succeeded - w(before).jobs.succeeded).toBe(1);
      expect(cause(w(after).jobs.failed, "server_error") - cause(w(before).jobs.failed, "server_error")).toBe(1);
      expect(
        cause(w(after).provider.failures, "server_error") - cause(w(before).provider.failures, "server_error"),
      ).toBe(1);
      // The success made a staging call and an enlargement; the failure one call.
      expect(w(after).provider.calls - w(before).provider.calls).toBe(provider.calls.length + provider.upscales.length);
    }
    expect(day(after).provider.p50Ms).not.toBeNull();
    expect(after.jobsQueued).toBe(0);
    expect(after.jobsRunning).toBe(0);
    // The global provider cap's numbers (issue 36 part 6, ADR 0186): read from the gate, nothing held after the jobs.
    expect(after.providerSlots).toMatchObject({ inFlight: 0, waiting: 0 });
    expect(after.providerSlots!.cap).toBeGreaterThan(0);
  });

  it("reads percentiles from the latency buckets, and the day window includes earlier hours", async () => {
    expect(percentiles([])).toEqual({ calls: 0, p50Ms: null, p95Ms: null });
    expect(
      percentiles([
        { cause: "500", count: 50 },
        { cause: "250", count: 40 },
        { cause: "4000", count: 9 },
        { cause: "inf", count: 1 },
      ]),
    ).toEqual({ calls: 100, p50Ms: 500, p95Ms: 4000 });
    expect(percentiles([{ cause: "inf", count: 3 }])).toEqual({ calls: 3, p50Ms: null, p95Ms: null });

    const now = Date.now();
    const before = await readOperations(db, env, now);
    const threeHoursAgo = now - 3 * 60 * 60 * 1000;
    const yesterday = now - 25 * 60 * 60 * 1000;
    await db.batch([
      countStatement(db, threeHoursAgo, "callback_failed", "gave_up", 2),
      countStatement(db, threeHoursAgo, "callback_failed", "gave_up"),
      countStatement(db, yesterday, "callback_failed", "gave_up", 5),
    ]);
    const row = await db
      .select()
      .from(opsCounts)
      .where(eq(opsCounts.hour, hourOf(threeHoursAgo)))
      .all();
    expect(row.find((r) => r.metric === "callback_failed")?.count).toBeGreaterThanOrEqual(3);
    const after = await readOperations(db, env, now);
    expect(cause(day(after).webhooks.callbacks, "gave_up") - cause(day(before).webhooks.callbacks, "gave_up")).toBe(3);
    expect(cause(hour(after).webhooks.callbacks, "gave_up") - cause(hour(before).webhooks.callbacks, "gave_up")).toBe(
      0,
    );
  });

  it("a forged Stripe webhook is refused and changes nothing stored, not even a counter", async () => {
    const before = await db.select().from(opsCounts).all();
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const res = await workerFetch("/api/webhooks/stripe", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Stripe-Signature": "t=1,v1=forged" },
      body: JSON.stringify({ id: "evt_forged", type: "checkout.session.completed" }),
    });
    expect(res.status).toBe(400);
    expect(await db.select().from(opsCounts).all()).toEqual(before);
    expect(JSON.parse(String(warn.mock.calls[0]?.[0]))).toMatchObject({ event: "stripe webhook refused", status: 400 });
  });

  it("shows the last cron run and its result, the exports waiting and the deletions not purged", async () => {
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 3 * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    const before = await readOperations(db, env);
    expect(before.lastCron).toMatchObject({ ok: true, failed: [] });

    const owner = await makeUser({});
    await db
      .insert(dataExports)
      .values({ id: randomToken(), userId: owner.id, status: "queued", createdAt: Date.now() });
    const deleted = await makeUser({});
    await db.update(users).set({ deletedAt: Date.now() }).where(eq(users.id, deleted.id));
    const after = await readOperations(db, env);
    expect(after.exportsQueued - before.exportsQueued).toBe(1);
    expect(after.deletionsPending - before.deletionsPending).toBe(1);
    await db.update(users).set({ purgedAt: Date.now() }).where(eq(users.id, deleted.id));
    expect((await readOperations(db, env)).deletionsPending).toBe(before.deletionsPending);
  });
});
