import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { creditLedger, jobs, photos as photoRows, users } from "@db/schema";
import { db } from "@test/support/factories";
import {
  api,
  balance,
  expectSettled,
  folderOf,
  onPlan,
  photoIdOfInput,
  photosOf,
  rowsOf,
  settleBatch,
} from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { RESERVATION_TIMEOUT_MS } from "@workers/objects/user/credits/ledger-rows";
import { userObject } from "@workers/objects/user-object";
import { batchForm, batchPage, retryBatchFromForm, startBatchFromForm } from "@workers/services/jobs/batch-pages";
import { and, eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { roomField } from "~/shared/listing";

// Batch staging (issue 15): one job and one credit per photo, all reserved or
// none, the plan's concurrency toward the provider (seen by the provider),
// priority, failures refunded one by one and retried.
// docs/decisions/0140-batches-variations-rerolls.md

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const STYLE = "Scandinavian";

function batchBody(photoIds: string[], extra: Record<string, unknown> = {}) {
  return { designStyle: STYLE, items: photoIds.map((photoId) => ({ photoId, roomType: "Bedroom" })), ...extra };
}

describe("batch staging", () => {
  it("10 photos: 10 credits reserved at once, every job ends, the balance is exact", async () => {
    const user = await onPlan("Small plan", 12);
    const folderId = await folderOf(user.id);
    const photos = await photosOf(user.id, 10, folderId);
    provider.latencyMs = 30;
    const res = await api(
      user.cookie,
      "POST",
      "/api/batches",
      batchBody(
        photos.map((p) => p.id),
        { folderId },
      ),
    );
    expect(res.status).toBe(202);
    // All ten reserved before the answer, whatever has run yet.
    expect(res.body.credits).toBe(2);
    expect(res.body.batch.items).toHaveLength(10);
    const reserved = await db
      .select()
      .from(creditLedger)
      .where(and(eq(creditLedger.userId, user.id), eq(creditLedger.kind, "reserve")))
      .all();
    expect(reserved.map((r) => r.amount)).toEqual(Array(10).fill(-1));

    const done = await settleBatch(user.cookie, res.body.batch.id);
    expect(done.counts).toEqual({ queued: 0, processing: 0, done: 10, failed: 0 });
    expect(done.items.every((i) => i.thumbUrl !== null)).toBe(true);
    expect(await balance(user.id)).toBe(2);
    expect(provider.calls).toHaveLength(10);
    // Each photo's own original went to the provider once.
    const sent = provider.calls.map((c) => photoIdOfInput(c.input));
    for (const p of photos) expect(sent.filter((id) => id === p.id)).toHaveLength(1);
    await expectSettled(user.id);
  });

  it("a user with 9 credits asking for 10 gets insufficient_credits and nothing is written", async () => {
    const user = await onPlan(null, 9);
    const photos = await photosOf(user.id, 10);
    const res = await api(user.cookie, "POST", "/api/batches", batchBody(photos.map((p) => p.id)));
    expect(res.status).toBe(402);
    expect(res.body.code).toBe("insufficient_credits");
    const rows = await rowsOf(user.id);
    expect(rows.jobs).toEqual([]);
    expect(rows.batches).toEqual([]);
    expect(rows.reservations).toEqual([]);
    expect(rows.ledger.map((l) => l.kind)).toEqual(["grant"]);
    expect(await balance(user.id)).toBe(9);
    expect(provider.calls).toEqual([]);
  });

  it("a stranger's photo or folder is not_found, a photo twice is invalid, a trashed photo is a conflict: nothing written", async () => {
    const user = await onPlan(null, 20);
    const stranger = await onPlan(null, 0);
    const mine = await photosOf(user.id, 3);
    const [theirs] = await photosOf(stranger.id, 1);
    const theirFolder = await folderOf(stranger.id);
    const [trashed] = await photosOf(user.id, 1);
    await db.update(photoRows).set({ trashedAt: Date.now() }).where(eq(photoRows.id, trashed!.id));
    const ids = mine.map((p) => p.id);
    const cases: [unknown, number, string][] = [
      [batchBody([...ids, theirs!.id]), 404, "not_found"],
      [batchBody(ids, { folderId: theirFolder }), 404, "not_found"],
      [batchBody([...ids, ids[0]!]), 400, "invalid"],
      // The user's own photo in the trash: refused where paid work starts, saying so (ADR 0202).
      [batchBody([...ids, trashed!.id]), 409, "conflict"],
      [batchBody([]), 400, "invalid"],
      [{ designStyle: STYLE, items: ids.map((photoId) => ({ photoId })) }, 400, "invalid"],
    ];
    for (const [body, status, code] of cases) {
      const res = await api(user.cookie, "POST", "/api/batches", body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.code).toBe(code);
    }
    const rows = await rowsOf(user.id);
    expect(rows.jobs).toEqual([]);
    expect(rows.batches).toEqual([]);
    expect(rows.reservations).toEqual([]);
    expect(await balance(user.id)).toBe(20);
    // The stranger cannot read or retry the user's batches either.
    const own = await api(user.cookie, "POST", "/api/batches", batchBody(ids));
    expect(own.status).toBe(202);
    expect((await api(stranger.cookie, "GET", `/api/batches/${own.body.batch.id}`)).status).toBe(404);
    expect((await api(stranger.cookie, "POST", `/api/batches/${own.body.batch.id}/retry`, {})).status).toBe(404);
    await settleBatch(user.cookie, own.body.batch.id);
    expect(await balance(user.id)).toBe(17);
  });

  const limits: [string | null, number][] = [
    [null, 4],
    ["Small plan", 4],
    ["Professional plan", 8],
  ];
  for (const [plan, limit] of limits) {
    it(`${plan ?? "no plan"}: the provider sees at most ${limit} calls at once, and that many`, async () => {
      const user = await onPlan(plan, 12);
      const photos = await photosOf(user.id, 12);
      provider.latencyMs = 250;
      const res = await api(user.cookie, "POST", "/api/batches", batchBody(photos.map((p) => p.id)));
      expect(res.status).toBe(202);
      const done = await settleBatch(user.cookie, res.body.batch.id);
      expect(done.counts.done).toBe(12);
      expect(provider.calls).toHaveLength(12);
      expect(provider.maxInFlight).toBe(limit);
      expect(await balance(user.id)).toBe(0);
      const rows = await rowsOf(user.id);
      expect(new Set(rows.jobs.map((j) => j.priority))).toEqual(new Set([plan === "Professional plan" ? 1 : 0]));
    });
  }

  it("Professional jobs get priority 1 and start before the queued jobs of the user's earlier plan", async () => {
    const user = await onPlan("Small plan", 20);
    const first = await photosOf(user.id, 10);
    const second = await photosOf(user.id, 4);
    const secondIds = new Set(second.map((p) => p.id));
    // Every call is held until the test lets one go: each freed place starts exactly one queued job.
    // (A promise resolved from the test's context would never complete inside the Durable Object's, so the
    // held call polls for its release.)
    let released = 0;
    provider.hold = async (call) => {
      while (call.n > released) await new Promise((r) => setTimeout(r, 5));
    };
    const arrived = async (n: number) => {
      for (let i = 0; i < 300 && provider.calls.length < n; i++) await new Promise((r) => setTimeout(r, 5));
      expect(provider.calls.length).toBe(n);
    };
    const a = await api(user.cookie, "POST", "/api/batches", batchBody(first.map((p) => p.id)));
    expect(a.status).toBe(202);
    await arrived(4);
    // Upgraded: 8 places, and the new batch goes first. Whether the upgrade's spare places were already
    // taken by the first batch or not, 8 calls are in flight once the second batch is queued.
    await db.update(users).set({ plan: "Professional plan" }).where(eq(users.id, user.id));
    const b = await api(user.cookie, "POST", "/api/batches", batchBody(second.map((p) => p.id)));
    expect(b.status).toBe(202);
    await arrived(8);
    for (let n = 9; n <= 14; n++) {
      released++;
      await arrived(n);
    }
    released = 14;
    await settleBatch(user.cookie, a.body.batch.id);
    await settleBatch(user.cookie, b.body.batch.id);
    const order = provider.calls.map((c) => (secondIds.has(photoIdOfInput(c.input)) ? "B" : "A"));
    expect(order.slice(0, 4)).toEqual(["A", "A", "A", "A"]);
    // No job of the first batch that was still queued reached the provider before the last Professional one.
    expect(order.lastIndexOf("B")).toBeLessThan(order.indexOf("A", 8) === -1 ? 14 : order.indexOf("A", 8));
    expect(order.filter((o) => o === "B")).toHaveLength(4);
    const rows = await rowsOf(user.id);
    for (const j of rows.jobs) expect(j.priority).toBe(secondIds.has(j.photoId) ? 1 : 0);
    expect(await balance(user.id)).toBe(6);
    await expectSettled(user.id);
  });

  it("the provider failing every third call: failures refunded one by one, the others succeed, a retry stages only the failed ones", async () => {
    const user = await onPlan("Small plan", 12);
    const photos = await photosOf(user.id, 9);
    provider.failEvery = 3;
    const res = await api(user.cookie, "POST", "/api/batches", batchBody(photos.map((p) => p.id)));
    expect(res.status).toBe(202);
    const batchId = res.body.batch.id;
    const done = await settleBatch(user.cookie, batchId);
    expect(done.counts).toEqual({ queued: 0, processing: 0, done: 6, failed: 3 });
    expect(await balance(user.id)).toBe(12 - 6);
    const failedJobs = done.items.filter((i) => i.status === "failed").map((i) => i.jobId);
    // One refund of one credit per failed job, under that job's own reservation.
    const refunds = await db
      .select()
      .from(creditLedger)
      .where(and(eq(creditLedger.userId, user.id), eq(creditLedger.kind, "refund")))
      .all();
    expect(refunds.map((r) => r.reservationKey).sort()).toEqual([...failedJobs].sort());
    expect(refunds.every((r) => r.amount === 1)).toBe(true);
    for (const i of done.items.filter((x) => x.status === "failed")) expect(i.error).toMatch(/500/);
    await expectSettled(user.id);

    provider.failEvery = 0;
    provider.reset();
    const before = provider.calls.length;
    const retry = await api(user.cookie, "POST", `/api/batches/${batchId}/retry`, {});
    expect(retry.status).toBe(202);
    expect(retry.body.retried).toBe(3);
    expect(retry.body.credits).toBe(12 - 6 - 3);
    const again = await settleBatch(user.cookie, batchId);
    expect(again.counts).toEqual({ queued: 0, processing: 0, done: 9, failed: 0 });
    const failedPhotos = new Set(done.items.filter((i) => i.status === "failed").map((i) => i.photoId));
    const retried = provider.calls.slice(before).map((c) => photoIdOfInput(c.input));
    expect(new Set(retried)).toEqual(failedPhotos);
    expect(retried).toHaveLength(3);
    for (const i of again.items) expect(i.attempts).toBe(failedPhotos.has(i.photoId) ? 2 : 1);
    const retryRows = (await rowsOf(user.id)).jobs.filter((j) => j.retryOf !== null);
    expect(retryRows.map((j) => j.retryOf).sort()).toEqual([...failedJobs].sort());
    expect(await balance(user.id)).toBe(3);
    // Nothing left to retry.
    expect((await api(user.cookie, "POST", `/api/batches/${batchId}/retry`, {})).status).toBe(409);
    await expectSettled(user.id);
  });

  it("two retries of the same failures at once charge and start each failed photo once", async () => {
    const user = await onPlan(null, 10);
    const photos = await photosOf(user.id, 4);
    provider.failEvery = 2;
    const res = await api(user.cookie, "POST", "/api/batches", batchBody(photos.map((p) => p.id)));
    const batchId = res.body.batch.id;
    const done = await settleBatch(user.cookie, batchId);
    expect(done.counts.failed).toBe(2);
    provider.failEvery = 0;
    const [r1, r2] = await Promise.all([
      api(user.cookie, "POST", `/api/batches/${batchId}/retry`, {}),
      api(user.cookie, "POST", `/api/batches/${batchId}/retry`, {}),
    ]);
    expect([r1.status, r2.status].sort()).toEqual([202, 409]);
    const again = await settleBatch(user.cookie, batchId);
    expect(again.counts).toEqual({ queued: 0, processing: 0, done: 4, failed: 0 });
    expect(await balance(user.id)).toBe(10 - 4);
    expect((await rowsOf(user.id)).jobs.filter((j) => j.retryOf !== null)).toHaveLength(2);
    await expectSettled(user.id);
  });
});

describe("a batch's retry sent again under its key", () => {
  /** A settled batch of `n` photos of which every other one failed, the provider mended after. */
  async function batchWithFailures(credits: number, n: number) {
    const user = await onPlan(null, credits);
    const photos = await photosOf(user.id, n);
    provider.failEvery = 2;
    const res = await api(user.cookie, "POST", "/api/batches", batchBody(photos.map((p) => p.id)));
    const batchId: string = res.body.batch.id;
    const done = await settleBatch(user.cookie, batchId);
    expect(done.counts.failed).toBe(n / 2);
    provider.failEvery = 0;
    return { user, batchId };
  }
  const retry = (cookie: string, batchId: string, key?: string) =>
    api(cookie, "POST", `/api/batches/${batchId}/retry`, {}, key ? { "Idempotency-Key": key } : {});

  it("answers a resend, after the first retry started or ended, with what it started, charged once", async () => {
    const { user, batchId } = await batchWithFailures(10, 4);
    const first = await retry(user.cookie, batchId, "retry-1");
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ retried: 2, credits: 10 - 2 - 2 });
    // Sent again while the retried jobs run: the same answer, marked as a replay, nothing started.
    const again = await retry(user.cookie, batchId, "retry-1");
    expect(again.status).toBe(202);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.body).toMatchObject({ retried: 2, credits: 6 });
    const settled = await settleBatch(user.cookie, batchId);
    expect(settled.counts).toEqual({ queued: 0, processing: 0, done: 4, failed: 0 });
    // And after they ended.
    expect((await retry(user.cookie, batchId, "retry-1")).body).toMatchObject({ retried: 2, credits: 6 });
    expect((await rowsOf(user.id)).jobs.filter((j) => j.retryOf !== null)).toHaveLength(2);
    expect(await balance(user.id)).toBe(6);
    // Without a key, or with a new one, there is nothing left to retry.
    expect((await retry(user.cookie, batchId)).status).toBe(409);
    expect((await retry(user.cookie, batchId, "retry-2")).status).toBe(409);
    await expectSettled(user.id);
  });

  it("starts one retry for two sendings at once under the same key, and answers both", async () => {
    const { user, batchId } = await batchWithFailures(10, 4);
    const [r1, r2] = await Promise.all([
      retry(user.cookie, batchId, "same-key"),
      retry(user.cookie, batchId, "same-key"),
    ]);
    expect([r1.status, r2.status]).toEqual([202, 202]);
    expect(r1.body.retried).toBe(2);
    expect(r2.body.retried).toBe(2);
    expect([r1, r2].filter((r) => r.headers.get("Idempotent-Replayed") === "true")).toHaveLength(1);
    await settleBatch(user.cookie, batchId);
    expect((await rowsOf(user.id)).jobs.filter((j) => j.retryOf !== null)).toHaveLength(2);
    expect(await balance(user.id)).toBe(10 - 4);
    await expectSettled(user.id);
  });

  it("refuses a key used for another batch's retry, and keeps one person's key from naming another's jobs", async () => {
    const a = await batchWithFailures(10, 2);
    provider.failEvery = 1;
    const second = await api(
      a.user.cookie,
      "POST",
      "/api/batches",
      batchBody((await photosOf(a.user.id, 2)).map((p) => p.id)),
    );
    const otherBatch: string = second.body.batch.id;
    expect((await settleBatch(a.user.cookie, otherBatch)).counts.failed).toBe(2);
    provider.failEvery = 0;
    expect((await retry(a.user.cookie, a.batchId, "shared")).status).toBe(202);
    const reused = await retry(a.user.cookie, otherBatch, "shared");
    expect(reused.status).toBe(409);
    expect(reused.body.error).toBe("This request's key was already used for a different request.");
    // Another person's same key starts their own retry.
    const b = await batchWithFailures(10, 2);
    const theirs = await retry(b.user.cookie, b.batchId, "shared");
    expect(theirs.status).toBe(202);
    expect(theirs.headers.get("Idempotent-Replayed")).toBeNull();
    expect(theirs.body.retried).toBe(1);
    await settleBatch(a.user.cookie, a.batchId);
    await settleBatch(b.user.cookie, b.batchId);
    await expectSettled(a.user.id);
    await expectSettled(b.user.id);
  });

  it("the progress page's retry form carries a key of its own: sent twice, it retries once and answers both", async () => {
    const { user, batchId } = await batchWithFailures(10, 4);
    const deps = { db, env };
    const page = await batchPage(db, user.id, batchId);
    expect(page?.submission).toMatch(/^[a-z2-7]{32}$/);
    // A fresh key at each drawing of the page: the next retry after this one is a new request.
    expect((await batchPage(db, user.id, batchId))?.submission).not.toBe(page?.submission);
    const fields = { intent: "retry", submission: page?.submission ?? "" };
    const first = await retryBatchFromForm(deps, user.id, batchId, fields);
    const again = await retryBatchFromForm(deps, user.id, batchId, fields);
    expect(first).toMatchObject({ ok: true, retried: 2 });
    expect(again).toMatchObject({ ok: true, retried: 2, replayed: true });
    // A key the page did not mint is refused, and starts nothing more.
    expect(await retryBatchFromForm(deps, user.id, batchId, { intent: "retry", submission: "not a key" })).toEqual({
      ok: false,
      code: "invalid",
      error: "The form was not understood. Reload the page and try again.",
    });
    await settleBatch(user.cookie, batchId);
    expect((await rowsOf(user.id)).jobs.filter((j) => j.retryOf !== null)).toHaveLength(2);
    expect(await balance(user.id)).toBe(10 - 4);
    await expectSettled(user.id);
  });

  it("refuses a malformed key with a 400 and starts nothing", async () => {
    const { user, batchId } = await batchWithFailures(10, 2);
    const bad = await retry(user.cookie, batchId, "é".repeat(3));
    expect(bad.status).toBe(400);
    expect((await rowsOf(user.id)).jobs.filter((j) => j.retryOf !== null)).toHaveLength(0);
    expect(await balance(user.id)).toBe(10 - 1);
  });
});

describe("the new-batch form sent twice", () => {
  /** The form as the page posts it: every photo picked, a room each, the total shown, the form's submission key. */
  function formFields(photoIds: string[], submission: string): Record<string, string> {
    const fields: Record<string, string> = { designStyle: STYLE, quoted: String(photoIds.length), submission };
    for (const id of photoIds) {
      fields[`pick:${id}`] = "1";
      fields[roomField(id)] = "Bedroom";
    }
    return fields;
  }
  const deps = { db, env };

  it("one after the other, or both at once, starts one batch and charges each photo once", async () => {
    const user = await onPlan(null, 10);
    const photos = await photosOf(user.id, 3);
    const ids = photos.map((p) => p.id);
    const first = formFields(ids, (await batchForm(db, user.id, null))!.submission);
    const a = await startBatchFromForm(deps, user.id, first);
    const b = await startBatchFromForm(deps, user.id, first);
    expect(a.ok && a.started && b.ok && b.started).toBe(true);
    const batchA = a.ok && a.started ? a.batchId : "";
    expect(b.ok && b.started ? b.batchId : "").toBe(batchA);

    const second = formFields(ids, (await batchForm(db, user.id, null))!.submission);
    const [c, d] = await Promise.all([
      startBatchFromForm(deps, user.id, second),
      startBatchFromForm(deps, user.id, second),
    ]);
    const batchC = c.ok && c.started ? c.batchId : "";
    expect(batchC).not.toBe("");
    expect(batchC).not.toBe(batchA);
    expect(d.ok && d.started ? d.batchId : "").toBe(batchC);

    // Sent again once its credits are spent: still its batch, not a refusal for want of credits.
    const e = await startBatchFromForm(deps, user.id, first);
    expect(e.ok && e.started ? e.batchId : "").toBe(batchA);

    await settleBatch(user.cookie, batchA);
    await settleBatch(user.cookie, batchC);
    const rows = await rowsOf(user.id);
    expect(rows.batches.map((x) => x.id).sort()).toEqual([batchA, batchC].sort());
    expect(rows.jobs).toHaveLength(6);
    expect(await balance(user.id)).toBe(10 - 6);
    await expectSettled(user.id);
  });

  it("another person's same key names a batch of their own; a malformed key is refused and writes nothing", async () => {
    const alice = await onPlan(null, 5);
    const bob = await onPlan(null, 5);
    const key = (await batchForm(db, alice.id, null))!.submission;
    const [alicePhoto] = await photosOf(alice.id, 1);
    const [bobPhoto] = await photosOf(bob.id, 1);
    const a = await startBatchFromForm(deps, alice.id, formFields([alicePhoto!.id], key));
    const b = await startBatchFromForm(deps, bob.id, formFields([bobPhoto!.id], key));
    const batchA = a.ok && a.started ? a.batchId : "";
    const batchB = b.ok && b.started ? b.batchId : "";
    expect(batchA).toMatch(/^[a-z2-7]{32}$/);
    expect(batchB).toMatch(/^[a-z2-7]{32}$/);
    expect(batchB).not.toBe(batchA);
    await settleBatch(alice.cookie, batchA);
    await settleBatch(bob.cookie, batchB);

    const before = await rowsOf(bob.id);
    const bad = await startBatchFromForm(deps, bob.id, formFields([bobPhoto!.id], "NOT-a-key"));
    expect(bad).toMatchObject({ ok: false, code: "invalid" });
    expect(await rowsOf(bob.id)).toEqual(before);
    expect(await balance(bob.id)).toBe(4);
  });
});

describe("a batch that outlives the reservation timeout", () => {
  // An instance that was evicted mid-batch (a deploy, a restart) leaves jobs queued, and one 'running',
  // with credits reserved more than RESERVATION_TIMEOUT_MS ago. Written here directly, as it would have.
  it("its queued and interrupted jobs are run by the alarm, not refunded as if they had died", async () => {
    const user = await onPlan("Small plan", 5);
    const photos = await photosOf(user.id, 3);
    const stub = userObject(env, user.id);
    const now = Date.now();
    const ids: string[] = [];
    for (const [i, p] of photos.entries()) {
      const id = `stale-${i}-${p.id}`;
      ids.push(id);
      await stub.reserve(user.id, id, 1, "AI stage (batch)");
      await db.insert(jobs).values({
        id,
        userId: user.id,
        photoId: p.id,
        kind: "stage",
        params: { roomType: "bedroom", designStyle: "modern" },
        status: i === 0 ? "running" : "queued",
        attempts: i === 0 ? 1 : 0,
        createdAt: now,
        startedAt: i === 0 ? now : null,
      });
    }
    await stub.advanceClockForTesting(RESERVATION_TIMEOUT_MS + 60_000);
    await evictDurableObject(stub);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const rows = await db.select().from(jobs).where(eq(jobs.userId, user.id)).all();
    expect(rows.map((j) => [j.id, j.status, j.error])).toEqual(ids.map((id) => [id, "succeeded", null]));
    expect(provider.calls).toHaveLength(3);
    expect(await balance(user.id)).toBe(2);
    await expectSettled(user.id);
  });
});
