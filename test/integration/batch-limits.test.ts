import { env } from "cloudflare:workers";
import { db } from "@test/support/factories";
import { api, balance, expectSettled, onPlan, photosOf, rowsOf } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { startBatchFromForm } from "@workers/services/jobs/batch-pages";
import { beforeEach, describe, expect, it } from "vitest";
import { MAX_BATCH_PHOTOS, pickField, roomField } from "~/shared/listing";

// A batch at the product's own limit (issue 45, hole 3): 100 photos is the largest batch offered, and each read of
// the batch's photos or jobs bound one parameter per id plus the user's, 101, over D1's 100 a statement: a 500 from
// POST /api/batches, the form, and a keyed retry. Lists are now bound as one parameter (db/lists.ts, ADR 0205).

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const STYLE = "Scandinavian";
const body = (ids: string[]) => ({
  designStyle: STYLE,
  items: ids.map((photoId) => ({ photoId, roomType: "Bedroom" })),
});

/** The batch once nothing in it is queued or running: polled slowly, each read is of 100 jobs. */
async function settled(cookie: string, batchId: string) {
  for (let i = 0; i < 600; i++) {
    const r = await api(cookie, "GET", `/api/batches/${batchId}`);
    expect(r.status).toBe(200);
    if (!r.body.batch.open) return r.body.batch as { items: { attempts: number }[]; counts: Record<string, number> };
    await new Promise((res) => setTimeout(res, 250));
  }
  throw new Error("the batch did not settle");
}

describe("a batch at the largest size offered", () => {
  it("takes exactly 100 photos through the API, and a keyed retry of their 100 failures, sent twice", async () => {
    expect(MAX_BATCH_PHOTOS).toBe(100);
    const user = await onPlan("Professional plan", 250);
    const photos = await photosOf(user.id, MAX_BATCH_PHOTOS);
    // Every call fails (fast: the test waits for refunds, not results): the retry has 100 failures to start again.
    provider.failEvery = 1;
    const res = await api(user.cookie, "POST", "/api/batches", body(photos.map((p) => p.id)));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.batch.items).toHaveLength(100);
    expect(res.body.credits).toBe(150);
    const failed = await settled(user.cookie, res.body.batch.id);
    expect(failed.counts).toEqual({ queued: 0, processing: 0, done: 0, failed: 100 });
    expect(await balance(user.id)).toBe(250);

    const retry = () =>
      api(user.cookie, "POST", `/api/batches/${res.body.batch.id}/retry`, {}, { "Idempotency-Key": "retry-100" });
    const first = await retry();
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect(first.body).toMatchObject({ retried: 100, credits: 150 });
    // Sent again under its key: found by the 100 ids its key names, nothing charged twice.
    const again = await retry();
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.body).toMatchObject({ retried: 100 });
    // The retries fail too (fast, and refunded: the e2e stages 100 to the end); each photo had its second attempt.
    const after = await settled(user.cookie, res.body.batch.id);
    expect(after.counts.failed).toBe(100);
    expect(after.items.every((i) => i.attempts === 2)).toBe(true);
    expect((await rowsOf(user.id)).jobs.filter((j) => j.retryOf !== null)).toHaveLength(100);
    expect(await balance(user.id)).toBe(250);
    await expectSettled(user.id);
  }, 180_000);

  // The page's action (app/routes/batches/new.tsx) hands its fields to startBatchFromForm; workerd tests have no
  // page build, so the form is sent to that service as the action sends it (the e2e sends the page's own form).
  it("refuses 101 photos from the API and the form with a 400 that says the limit; takes 100 from the form", async () => {
    const user = await onPlan("Professional plan", 250);
    const photos = await photosOf(user.id, MAX_BATCH_PHOTOS + 1);
    const ids = photos.map((p) => p.id);
    const overApi = await api(user.cookie, "POST", "/api/batches", body(ids));
    expect(overApi.status).toBe(400);
    expect(overApi.body.error).toBe("A batch takes at most 100 photos.");
    const fields = (n: number) => {
      const form: Record<string, string> = { designStyle: STYLE, quoted: String(n) };
      for (const id of ids.slice(0, n)) {
        form[pickField(id)] = "1";
        form[roomField(id)] = "Bedroom";
      }
      return form;
    };
    const overForm = await startBatchFromForm({ db, env }, user.id, fields(MAX_BATCH_PHOTOS + 1));
    expect(overForm).toEqual({ ok: false, code: "invalid", error: "A batch takes at most 100 photos." });
    expect(await rowsOf(user.id)).toMatchObject({ jobs: [], batches: [], reservations: [] });
    expect(await balance(user.id)).toBe(250);
    expect(provider.calls).toHaveLength(0);

    // Failing fast (the provider refuses each call): the test waits for 100 refunds, not 100 results.
    provider.failEvery = 1;
    const res = await startBatchFromForm({ db, env }, user.id, fields(MAX_BATCH_PHOTOS));
    expect(res.ok, JSON.stringify(res)).toBe(true);
    const batchId = res.ok && res.started ? res.batchId : "";
    expect(batchId).not.toBe("");
    const { jobs, batches } = await rowsOf(user.id);
    expect(jobs).toHaveLength(100);
    expect(batches.map((b) => b.id)).toEqual([batchId]);
    // All 100 reserved in the start (the refunds of the failures may already have begun).
    const reserved = (await rowsOf(user.id)).ledger.filter((l) => l.kind === "reserve");
    expect(reserved.map((l) => l.amount)).toEqual(Array(100).fill(-1));
    expect((await settled(user.cookie, batchId)).counts.failed).toBe(100);
    expect(await balance(user.id)).toBe(250);
    await expectSettled(user.id);
  }, 180_000);
});
