import { env } from "cloudflare:workers";
import { creditReservations, jobs, siteFiguresRows } from "@db/schema";
import { db, makeUser } from "@test/support/factories";
import { api, expectSettled, onPlan, photosOf, settleJob } from "@test/support/listing";
import { makePhoto } from "@test/support/photos";
import { stubProvider } from "@test/support/provider-stub";
import { workerFetch } from "@test/support/worker";
import { randomToken } from "@workers/lib/crypto";
import { providerGate } from "@workers/objects/user/jobs/slots";
import { userObject } from "@workers/objects/user-object";
import { providerGateStats } from "@workers/services/provider-gate-stats";
import {
  computeSiteFigures,
  currentSiteFigures,
  FIGURES_CLAIM_MS,
  FIGURES_MAX_AGE_MS,
  FIGURES_RULE,
  FIGURES_WINDOW_MS,
  refreshSiteFigures,
} from "@workers/services/site-figures";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";

// The landing page's measured figures (docs/decisions/0185-measured-landing-figures.md,
// 0231-figures-from-the-agents-side.md): from the request that asked for a job to its result, the queue and the
// provider gate included; single photos and batch members apart; a refund or a refusal counts against; stored in
// one row recomputed at most hourly; limited per address.

type Seed = [status: "succeeded" | "failed", ms: number, opts?: { batch?: boolean; refunded?: boolean }];

/** Finished jobs ending 1 s before `now`, each asked for `ms` before its end (started at once: no wait). */
async function finishedJobs(userId: string, photoId: string, now: number, list: Seed[]) {
  for (const [status, ms, opts] of list) {
    const id = randomToken();
    await db.insert(jobs).values({
      ...{ id, userId, photoId, kind: "stage", params: {}, status },
      ...{ createdAt: now - ms - 1000, startedAt: now - ms - 1000, finishedAt: now - 1000 },
      batchId: opts?.batch ? "a-batch" : null,
    });
    if (opts?.refunded) {
      await db.insert(creditReservations).values({
        ...{ key: id, userId, amount: 1, allocations: [], status: "refunded" },
        ...{ createdAt: now - ms - 1000, settledAt: now - 1000 },
      });
    }
  }
}

const many = (n: number, seed: Seed): Seed[] => Array.from({ length: n }, () => seed);

describe("the landing page's figures", () => {
  it("are the share delivered and the median over the last 30 days, and none below 50 jobs", async () => {
    const { id } = await makeUser();
    const photo = await makePhoto(id);
    const now = 10_000_000_000_000;
    await finishedJobs(id, photo.id, now, [
      ...Array.from({ length: 46 }, (_, i): Seed => ["succeeded", 20_000 + i * 1000]),
      ["failed", 3000],
      ["failed", 120_000],
    ]);
    // 48 jobs: too few to show anything.
    expect(await computeSiteFigures(db, now)).toMatchObject({ jobs: 48, successPercent: null, median: null });
    // One still running, one queued: not finished, not counted.
    await db.insert(jobs).values([
      { id: randomToken(), userId: id, photoId: photo.id, kind: "stage", params: {}, status: "queued", createdAt: now },
      {
        ...{ id: randomToken(), userId: id, photoId: photo.id, kind: "stage", params: {}, status: "running" },
        ...{ createdAt: now - 5000, startedAt: now - 5000 },
      },
    ]);
    // One that ended before the window: not counted either.
    await finishedJobs(id, photo.id, now - FIGURES_WINDOW_MS - 10_000, [["failed", 1000]]);
    expect((await computeSiteFigures(db, now)).jobs).toBe(48);
    // Two more delivered (48 delivered of 50, an even count: the median is the mean of the middle two).
    await finishedJobs(id, photo.id, now, [
      ["succeeded", 100_000],
      ["succeeded", 100_000],
    ]);
    const figures = await computeSiteFigures(db, now);
    // Durations 20..65 s and 100 s twice: the 24th and 25th are 43 s and 44 s.
    expect(figures).toMatchObject({ jobs: 50, successPercent: 96, medianMs: 43_500, median: "44s" });
  });

  it("round the success rate down, never up", async () => {
    const { id } = await makeUser();
    const photo = await makePhoto(id);
    const now = 20_000_000_000_000;
    await finishedJobs(id, photo.id, now, [...many(199, ["succeeded", 30_000]), ["failed", 30_000]]);
    expect(await computeSiteFigures(db, now)).toMatchObject({ jobs: 200, successPercent: 99, median: "30s" });
  });

  it("count a job whose credit went back as not delivered, and report batch members apart from single photos", async () => {
    const { id } = await makeUser();
    const photo = await makePhoto(id);
    const now = 30_000_000_000_000;
    await finishedJobs(id, photo.id, now, [
      ...many(48, ["succeeded", 10_000]),
      // Marked succeeded, but its credit was given back: not delivered and charged.
      ["succeeded", 10_000, { refunded: true }],
      ["failed", 10_000],
      // A batch's members wait for each other in the user's queue: their times are theirs, not the landing's.
      ...many(50, ["succeeded", 300_000, { batch: true }]),
    ]);
    const f = await computeSiteFigures(db, now);
    expect(f.single).toEqual({ jobs: 50, successPercent: 96, medianMs: 10_000, median: "10s" });
    expect(f.batch).toEqual({ jobs: 50, successPercent: 100, medianMs: 300_000, median: "5 min" });
    // The landing shows the single photo's median and the success of every job.
    expect(f).toMatchObject({ jobs: 100, successPercent: 98, medianMs: 10_000, median: "10s" });
  });
});

describe("the landing page's figures from the agent's side", () => {
  afterEach(async () => {
    await providerGate(env).setCapForTesting(null);
  });

  it("count the time a job waited at the provider gate: among 51 jobs, one held 5 s is the median", async () => {
    stubProvider();
    const seeded = await makeUser();
    const photo = await makePhoto(seeded.id);
    const now = Date.now();
    // 25 jobs delivered in 1 s and 25 in 60 s: the 51st, in the middle, is the median.
    await finishedJobs(seeded.id, photo.id, now, [
      ...many(25, ["succeeded", 1_000]),
      ...many(25, ["succeeded", 60_000]),
    ]);

    // The 51st: a single photo, asked for while the provider gate is full (another user's call holds its one slot).
    const gate = providerGate(env);
    await gate.setCapForTesting(1);
    const held = await gate.acquire({ userId: "someone-else", holder: "stand-in", priority: 0, leaseMs: 60_000 });
    const user = await onPlan(null, 2);
    const [mine] = await photosOf(user.id, 1);
    const started = await api(user.cookie, "POST", `/api/photos/${mine!.id}/jobs`, {
      kind: "stage",
      roomType: "bedroom",
      designStyle: "scandinavian",
    });
    expect(started.status).toBe(202);
    for (let i = 0; i < 400 && (await providerGateStats(env)).waitingByUser[user.id] !== 1; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect((await providerGateStats(env)).waitingByUser[user.id]).toBe(1);
    // It waits 5 s at the gate, on the user's object's clock (which stamps the job's times).
    await userObject(env, user.id).advanceClockForTesting(5_000);
    await gate.release(held.leaseId);
    expect((await settleJob(user.cookie, started.body.job.id)).status).toBe("succeeded");
    const row = (await db.select().from(jobs).where(eq(jobs.id, started.body.job.id)).get())!;
    // Its provider work took a moment; the agent waited 5 s more than that.
    expect(row.finishedAt! - row.startedAt!).toBeLessThan(5_000);
    expect(row.finishedAt! - row.createdAt).toBeGreaterThanOrEqual(5_000);

    // The landing page's figure, as GET /api/figures serves it from the stored row, includes the wait.
    const at = now + 60_000;
    await refreshSiteFigures(db, at);
    const answer = await workerFetch("/api/figures");
    expect(answer.status).toBe(200);
    const figures = await answer.json<{ jobs: number; medianMs: number; median: string }>();
    expect(figures).toMatchObject({ jobs: 51, medianMs: row.finishedAt! - row.createdAt });
    expect(figures.medianMs).toBeGreaterThanOrEqual(5_000);
    expect(figures.median).toMatch(/^[5-9]s$/);
    await expectSettled(user.id);
  });
});

describe("the stored figures", () => {
  it("are computed at most once an hour, by the one request that claims it", async () => {
    const { id } = await makeUser();
    const photo = await makePhoto(id);
    const t0 = 40_000_000_000_000;
    await finishedJobs(id, photo.id, t0, many(50, ["succeeded", 20_000]));
    // No row yet: the first request computes and stores it.
    expect(await currentSiteFigures(db, t0)).toMatchObject({ jobs: 50, median: "20s", computedAt: t0 });
    // New jobs within the hour are not counted until it has passed.
    await finishedJobs(id, photo.id, t0 + 1000, many(50, ["succeeded", 40_000]));
    expect(await currentSiteFigures(db, t0 + FIGURES_MAX_AGE_MS - 1)).toMatchObject({ jobs: 50, computedAt: t0 });
    // An hour on, another request is recomputing it (its claim is fresh): this one answers the stored figures.
    const later = t0 + FIGURES_MAX_AGE_MS;
    await db.update(siteFiguresRows).set({ claimedAt: later - 1000 });
    expect(await currentSiteFigures(db, later)).toMatchObject({ jobs: 50, computedAt: t0 });
    // A claim that never finished (its request failed) is taken over after FIGURES_CLAIM_MS.
    const f = await currentSiteFigures(db, later - 1000 + FIGURES_CLAIM_MS);
    expect(f).toMatchObject({ jobs: 100, median: "30s", computedAt: later - 1000 + FIGURES_CLAIM_MS });
    const row = await db.select().from(siteFiguresRows).get();
    expect(row).toMatchObject({ computedAt: later - 1000 + FIGURES_CLAIM_MS, claimedAt: null });
  });

  it("are limited per address: past the rule's allowance an address is answered 429 with Retry-After", async () => {
    const from = (ip: string) => workerFetch("/api/figures", { headers: { "CF-Connecting-IP": ip } });
    const ip = `198.51.100.${Math.floor(Math.random() * 200) + 1}`;
    for (let i = 0; i < FIGURES_RULE.limit; i++) expect((await from(ip)).status).toBe(200);
    const refused = await from(ip);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect((await from("203.0.113.7")).status).toBe(200);
  });
});
