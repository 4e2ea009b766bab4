import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { jobs } from "@db/schema";
import { db } from "@test/support/factories";
import {
  api,
  balance,
  expectSettled,
  onPlan,
  photoIdOfInput,
  photosOf,
  settleBatch,
  settleJob,
} from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { leaseMsFor, providerGate } from "@workers/objects/user/jobs/slots";
import { userObject } from "@workers/objects/user-object";
import { providerGateStats } from "@workers/services/provider-gate-stats";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

// The provider gate (issue 36 part 6, docs/decisions/0186-one-provider-gate.md): one cap on provider calls in flight
// for the whole product, shared fairly between users, Professional first at the same round, leases that expire, and
// waiting that does not count toward the provider timeout (1.5 s in these tests). Calls in flight are counted by the
// provider stub, where the provider sees them. A test that needs the gate full without provider calls holds slots
// itself ("stand-ins" for calls in flight), asked for at the gate exactly as a user's object asks.

let provider: ProviderStub;
const gate = () => providerGate(env);

beforeEach(() => {
  provider = stubProvider();
});
afterEach(async () => {
  await gate().setCapForTesting(null);
});

function batchBody(photoIds: string[]) {
  return { designStyle: "Scandinavian", items: photoIds.map((photoId) => ({ photoId, roomType: "Bedroom" })) };
}

async function stageOne(cookie: string, photoId: string): Promise<string> {
  const res = await api(cookie, "POST", `/api/photos/${photoId}/jobs`, {
    kind: "stage",
    roomType: "bedroom",
    designStyle: "scandinavian",
  });
  expect(res.status).toBe(202);
  return res.body.job.id as string;
}

/** A slot held by the test for `userId`, as a user's object holds one for a job. */
async function standIn(userId: string, leaseMs = 60_000) {
  return gate().acquire({ userId, holder: `stand-in-${crypto.randomUUID()}`, priority: 0, leaseMs });
}

/** Waits until the gate's figures say what `done` looks for (requests reach the gate asynchronously). */
async function gateUntil(done: (s: Awaited<ReturnType<typeof providerGateStats>>) => boolean) {
  for (let i = 0; i < 400; i++) {
    const s = await providerGateStats(env);
    if (done(s)) return s;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`the gate never got there: ${JSON.stringify(await providerGateStats(env))}`);
}

async function jobStatus(cookie: string, jobId: string): Promise<string> {
  const r = await api(cookie, "GET", `/api/jobs/${jobId}`);
  return r.body.job.status as string;
}

describe("provider gate", () => {
  it("with the cap at 2, three users' batches never have more than 2 provider calls in flight, and every job ends exact", async () => {
    await gate().setCapForTesting(2);
    provider.latencyMs = 60;
    const users = await Promise.all([onPlan(null, 5), onPlan(null, 5), onPlan("Professional plan", 5)]);
    const photos = await Promise.all(users.map((u) => photosOf(u.id, 4)));
    const started = await Promise.all(
      users.map((u, i) => api(u.cookie, "POST", "/api/batches", batchBody(photos[i]!.map((p) => p.id)))),
    );
    for (const s of started) expect(s.status).toBe(202);
    const done = await Promise.all(users.map((u, i) => settleBatch(u.cookie, started[i]!.body.batch.id)));
    for (const d of done) expect(d.counts).toEqual({ queued: 0, processing: 0, done: 4, failed: 0 });
    // Counted by the provider: staging calls and enlargements together.
    expect(provider.maxInFlight).toBe(2);
    expect(provider.calls).toHaveLength(12);
    for (const u of users) {
      expect(await balance(u.id)).toBe(1);
      await expectSettled(u.id);
    }
    const after = await providerGateStats(env);
    expect(after).toMatchObject({ cap: 2, inUse: 0, waiting: 0 });
  });

  it("a user with one photo gets the next slot while another user's batch holds the gate and waits for more", async () => {
    await gate().setCapForTesting(2);
    provider.latencyMs = 200;
    const batchUser = await onPlan(null, 10);
    const single = await onPlan(null, 2);
    const batchPhotos = await photosOf(batchUser.id, 6);
    const [photo] = await photosOf(single.id, 1);
    // The batch holds both slots (its calls in flight) and has more jobs waiting.
    const held = [await standIn(batchUser.id), await standIn(batchUser.id)];
    const batch = await api(batchUser.cookie, "POST", "/api/batches", batchBody(batchPhotos.map((p) => p.id)));
    expect(batch.status).toBe(202);
    await gateUntil((s) => s.waitingByUser[batchUser.id] === 4);
    const jobId = await stageOne(single.cookie, photo!.id);
    const waiting = await gateUntil((s) => s.waitingByUser[single.id] === 1);
    expect(waiting).toMatchObject({ cap: 2, inUse: 2, waiting: 5, inUseByUser: { [batchUser.id]: 2 } });
    // Waiting for a slot, the job is queued, as the page and the API show it.
    expect(await jobStatus(single.cookie, jobId)).toBe("queued");

    // One of the batch's calls ends: its slot goes to the single photo, not to the batch's next job.
    expect(await gate().release(held[0]!.leaseId)).toBe(true);
    const next = await gateUntil((s) => s.inUse === 2);
    expect(next.inUseByUser).toEqual({ [batchUser.id]: 1, [single.id]: 1 });
    expect(next.waitingByUser).toEqual({ [batchUser.id]: 4 });
    expect((await settleJob(single.cookie, jobId)).status).toBe("succeeded");
    expect(photoIdOfInput(provider.calls[0]!.input)).toBe(photo!.id);

    await gate().release(held[1]!.leaseId);
    const done = await settleBatch(batchUser.cookie, batch.body.batch.id);
    expect(done.counts.done).toBe(6);
    expect(provider.calls).toHaveLength(7);
    expect(provider.maxInFlight).toBeLessThanOrEqual(2);
    expect(await balance(single.id)).toBe(1);
    expect(await balance(batchUser.id)).toBe(4);
    await expectSettled(single.id);
    await expectSettled(batchUser.id);
  });

  it("at the same round a Professional user's job goes first, even when it arrived later", async () => {
    await gate().setCapForTesting(1);
    const basic = await onPlan(null, 2);
    const pro = await onPlan("Professional plan", 2);
    const [basicPhoto] = await photosOf(basic.id, 1);
    const [proPhoto] = await photosOf(pro.id, 1);
    const held = await standIn("someone-else");
    const basicJob = await stageOne(basic.cookie, basicPhoto!.id);
    await gateUntil((s) => s.waitingByUser[basic.id] === 1);
    const proJob = await stageOne(pro.cookie, proPhoto!.id);
    await gateUntil((s) => s.waitingByUser[pro.id] === 1);

    await gate().release(held.leaseId);
    expect((await settleJob(pro.cookie, proJob)).status).toBe("succeeded");
    expect((await settleJob(basic.cookie, basicJob)).status).toBe("succeeded");
    expect(provider.calls.map((c) => photoIdOfInput(c.input))).toEqual([proPhoto!.id, basicPhoto!.id]);
    await expectSettled(basic.id);
    await expectSettled(pro.id);
  });

  it("a lease whose holder never gives it back is reclaimed at its expiry, and the waiting job runs", async () => {
    await gate().setCapForTesting(1);
    const user = await onPlan(null, 2);
    const [photo] = await photosOf(user.id, 1);
    // An object that took the only slot and crashed: it never releases it.
    const lost = await standIn("crashed-object", 5_000);
    const jobId = await stageOne(user.cookie, photo!.id);
    await gateUntil((s) => s.waitingByUser[user.id] === 1);
    expect(await jobStatus(user.cookie, jobId)).toBe("queued");

    await gate().advanceClockForTesting(5_001);
    expect(await runDurableObjectAlarm(gate())).toBe(true);
    expect((await settleJob(user.cookie, jobId)).status).toBe("succeeded");
    // The reclaimed lease is gone: releasing it now changes nothing.
    expect(await gate().release(lost.leaseId)).toBe(false);
    expect(await providerGateStats(env)).toMatchObject({ inUse: 0, waiting: 0 });
    expect(await balance(user.id)).toBe(1);
    await expectSettled(user.id);
  });

  it("a slot an earlier instance of a user's object never gave back is dropped when its next instance asks", async () => {
    await gate().setCapForTesting(1);
    const user = await onPlan(null, 2);
    const [photo] = await photosOf(user.id, 1);
    // The user's object took the only slot and was then evicted (a deploy) mid-call: nothing released it.
    const lost = await gate().acquire({
      userId: user.id,
      holder: "job-of-the-evicted-instance",
      priority: 0,
      leaseMs: 60_000,
      instance: "an-earlier-instance",
    });
    const jobId = await stageOne(user.cookie, photo!.id);
    // No expiry, no alarm: the running instance's request frees it.
    expect((await settleJob(user.cookie, jobId)).status).toBe("succeeded");
    expect(await gate().release(lost.leaseId)).toBe(false);
    await expectSettled(user.id);
  });

  it("a request an earlier instance of a user's object left waiting is dropped when its next instance asks", async () => {
    await gate().setCapForTesting(1);
    const held = await standIn("someone-else");
    const ask = (instance: string, holder: string) =>
      gate().acquire({ userId: "restarted-user", holder, priority: 0, leaseMs: 60_000, instance });
    const earlier = ask("an-earlier-instance", "job-asked-before-the-restart");
    const settledEarlier = earlier.then(
      () => "granted",
      (err: Error) => err.message,
    );
    await gateUntil((s) => s.waitingByUser["restarted-user"] === 1);
    const later = ask("the-running-instance", "job-asked-after-the-restart");
    // The earlier request is answered without a slot at once; only the running instance's request waits.
    expect(await settledEarlier).toMatch(/dropped: a later instance of its object asked/);
    expect(await providerGateStats(env)).toMatchObject({ inUse: 1, waiting: 1 });
    await gate().release(held.leaseId);
    const granted = await later;
    expect(await providerGateStats(env)).toMatchObject({ inUse: 1, inUseByUser: { "restarted-user": 1 } });
    await gate().release(granted.leaseId);
  });

  it("a user's object evicted while its job waits at the gate leaves no slot behind: the next job is served at once", async () => {
    await gate().setCapForTesting(1);
    const gone = await onPlan(null, 2);
    const next = await onPlan(null, 2);
    const [gonePhoto] = await photosOf(gone.id, 1);
    const [nextPhoto] = await photosOf(next.id, 1);
    const held = await standIn("someone-else");
    const goneJob = await stageOne(gone.cookie, gonePhoto!.id);
    await gateUntil((s) => s.waitingByUser[gone.id] === 1);
    const nextJob = await stageOne(next.cookie, nextPhoto!.id);
    await gateUntil((s) => s.waitingByUser[next.id] === 1);

    // The first user's object goes while its job waits, first in line. evictDurableObject cannot do it: a graceful
    // eviction waits for the object's requests to end, and its alarm holds the job while it waits (it gives up after
    // 30 s, "it still has active references"). The runtime's reset of one object (what a crash, an exceeded limit or
    // a deploy does in production) can: its call to the gate is cut, the gate is not told.
    await expect(
      runInDurableObject(userObject(env, gone.id), (_o, state) => state.abort("evicted by the test")),
    ).rejects.toThrow("evicted by the test");

    // The slot frees. It must reach the next job now, not when a lease expires (leaseMsFor: minutes).
    const freed = Date.now();
    await gate().release(held.leaseId);
    const served = await gateUntil((s) => (s.inUseByUser[next.id] ?? 0) === 1 || s.inUse === 0);
    expect(served.inUseByUser[next.id] ?? 0).toBe(1);
    expect(Date.now() - freed).toBeLessThan(leaseMsFor(env));
    expect((await settleJob(next.cookie, nextJob)).status).toBe("succeeded");
    expect(photoIdOfInput(provider.calls[0]!.input)).toBe(nextPhoto!.id);

    // The evicted user's job was never lost: queued, its object's next instance runs it.
    await runDurableObjectAlarm(userObject(env, gone.id));
    expect((await settleJob(gone.cookie, goneJob)).status).toBe("succeeded");
    expect(await providerGateStats(env)).toMatchObject({ inUse: 0, waiting: 0 });
    expect(await balance(gone.id)).toBe(1);
    expect(await balance(next.id)).toBe(1);
    await expectSettled(gone.id);
    await expectSettled(next.id);
  });

  it("time spent waiting for a slot does not count toward the provider timeout", async () => {
    await gate().setCapForTesting(1);
    const user = await onPlan(null, 2);
    const [photo] = await photosOf(user.id, 1);
    const held = await standIn("someone-else");
    const asked = Date.now();
    const jobId = await stageOne(user.cookie, photo!.id);
    await gateUntil((s) => s.waitingByUser[user.id] === 1);
    // Longer than the provider timeout (PROVIDER_TIMEOUT_MS = 1500 in vitest.config.ts).
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await jobStatus(user.cookie, jobId)).toBe("queued");
    const releasedAt = Date.now();
    expect(releasedAt - asked).toBeGreaterThan(1_500);
    await gate().release(held.leaseId);

    const done = await settleJob(user.cookie, jobId);
    expect(done.status).toBe("succeeded");
    const row = await db.select().from(jobs).where(eq(jobs.id, jobId)).get();
    // Marked running only once it held the slot.
    expect(row!.startedAt).toBeGreaterThanOrEqual(releasedAt);
    expect(row!.attempts).toBe(1);
    expect(await balance(user.id)).toBe(1);
    await expectSettled(user.id);
  });

  it("jobs that waited are committed or refunded exactly as before: a failed call is refunded, the rest charged", async () => {
    await gate().setCapForTesting(1);
    const user = await onPlan(null, 5);
    const photos = await photosOf(user.id, 3);
    provider.failEvery = 2;
    const batch = await api(user.cookie, "POST", "/api/batches", batchBody(photos.map((p) => p.id)));
    expect(batch.status).toBe(202);
    const done = await settleBatch(user.cookie, batch.body.batch.id);
    provider.failEvery = 0;
    expect(done.counts).toEqual({ queued: 0, processing: 0, done: 2, failed: 1 });
    expect(provider.maxInFlight).toBe(1);
    expect(await balance(user.id)).toBe(3);
    await expectSettled(user.id);
  });
});
