import { env } from "cloudflare:workers";
import { jobs } from "@db/schema";
import { db } from "@test/support/factories";
import { api, balance, expectSettled, onPlan, photosOf, settleBatch } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { userObject } from "@workers/objects/client";
import type { JobTimings } from "@workers/objects/user/jobs/clock";
import { and, eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";

// Issue 44 part 3 (docs/decisions/0240-a-listing-at-the-providers-pace.md): a listing goes at the provider's pace
// with the check on. A result's check and commit hold none of the plan's places, so the next provider call starts as
// soon as the last one's provider work ends; and the check Worker judges the checks that wait together at once, so
// one check does not wait for another. The checks are made slow here (each takes CHECK_MS longer in the check
// Worker, a tests-only setting) so that both show in the order of events, not in a race of milliseconds.

const CHECK_MS = 2_500;

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function succeeded(userId: string): Promise<number> {
  const rows = await db
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(eq(jobs.userId, userId), eq(jobs.status, "succeeded")))
    .all();
  return rows.length;
}

/** The stretch each job's check spent in the check Worker: from its receipt to its verdict. */
function inChecker(t: JobTimings): [number, number] {
  const spans = t.spans.filter((s) => !s.afterEnd && (s.part === "checkWorker" || s.part === "images"));
  return [Math.min(...spans.map((s) => s.start)), Math.max(...spans.map((s) => s.end))];
}

/** The most stretches under way at one moment. */
function mostAtOnce(stretches: [number, number][]): number {
  return Math.max(...stretches.map(([s]) => stretches.filter(([a, b]) => a <= s && s < b).length));
}

describe("a listing at the provider's pace", () => {
  it("8 photos, 4 at once: every provider call is made before the first result is committed, and checks run side by side", async () => {
    const user = await onPlan(null, 8);
    const photos = await photosOf(user.id, 8);
    provider.latencyMs = 100;
    await userObject(env, user.id).setCheckDelayForTesting(CHECK_MS);
    const res = await api(user.cookie, "POST", "/api/batches", {
      designStyle: "Modern",
      items: photos.map((p) => ({ photoId: p.id, roomType: "Bedroom" })),
    });
    expect(res.status).toBe(202);
    // The first four calls end after 100 ms and their checks take 2.5 s: the next four calls start meanwhile.
    for (let i = 0; i < 6000 && provider.calls.length < 8; i++) await sleep(5);
    expect(provider.calls).toHaveLength(8);
    expect(await succeeded(user.id)).toBe(0);

    const done = await settleBatch(user.cookie, res.body.batch.id);
    expect(done.counts).toEqual({ queued: 0, processing: 0, done: 8, failed: 0 });
    // The plan's concurrency is still the provider's: 4 calls at once at most, and that many.
    expect(provider.maxInFlight).toBe(4);
    expect(await balance(user.id)).toBe(0);
    await expectSettled(user.id);

    const ids = new Set((await db.select().from(jobs).where(eq(jobs.userId, user.id)).all()).map((j) => j.id));
    const timings = (await userObject(env, user.id).jobTimings()).filter((t) => ids.has(t.jobId));
    expect(timings).toHaveLength(8);
    // Checks that waited together were judged together: more than one in the check Worker at a time.
    expect(mostAtOnce(timings.map(inChecker))).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
