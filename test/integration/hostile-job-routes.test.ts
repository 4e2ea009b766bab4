import { env } from "cloudflare:workers";
import { db } from "@test/support/factories";
import { chunkedOversized, sendAs, stateNow } from "@test/support/hostile";
import { api, onPlan, photosOf } from "@test/support/listing";
import { stubProvider } from "@test/support/provider-stub";
import { apiV1, workerFetch } from "@test/support/worker";
import { createApiKey } from "@workers/services/api-keys";
import { beforeEach, describe, expect, it } from "vitest";

// The routes whose schema or imports this change moved (the job request's schema now in app/shared/job-request.ts,
// read by POST /api/photos/:id/jobs and the public API's jobs; the Stripe webhook's logger), attacked by hand beside
// the generated suite: a stranger's real photo id, hostile names in the request's fields, a wrong media type, a
// chunked oversized body, odd methods, a forged webhook. Each is a 4xx, never a 5xx, and D1 and R2 stay as they were.

beforeEach(() => {
  stubProvider();
});

/** Bob with a photo; Alice, a stranger to it, with a photo of her own and a personal key. */
async function world() {
  const bob = await onPlan("Starter plan", 3);
  const [theirs] = await photosOf(bob.id, 1);
  const alice = await onPlan("Starter plan", 3);
  const [own] = await photosOf(alice.id, 1);
  const made = await createApiKey({ db, env, clock: () => Date.now() }, alice.id, { name: "crm", scopes: ["stage"] });
  if (!made.ok) throw new Error(made.error);
  return { theirs: theirs!, alice, own: own!, key: made.token };
}

const STAGE = { kind: "stage", roomType: "Bedroom", designStyle: "Modern" };
const HOSTILE: Record<string, unknown>[] = [
  { ...STAGE, kind: "<script>alert(1)</script>" },
  { ...STAGE, sourceVersionId: "../../photos/someone/original" },
  { ...STAGE, designStyle: "x".repeat(101) },
  // A line break is a fair instruction (it goes to the provider inside JSON); a NUL or a direction override is not.
  { ...STAGE, prompt: "ok\u0000hidden" },
  { ...STAGE, prompt: "ok\u202etxt.exe" },
  { kind: "removal", maskId: "../mask.png" },
  { kind: "sky", skyType: "https://evil.example/" },
  { ...STAGE, variations: "999" },
];

describe("the job routes under attack", () => {
  it("POST /api/photos/:id/jobs: a stranger's real photo is the 404 of a made-up one; hostile fields are 4xx", async () => {
    const { theirs, alice, own } = await world();
    const before = await stateNow();
    const stranger = await api(alice.cookie, "POST", `/api/photos/${theirs.id}/jobs`, STAGE);
    const madeUp = await api(alice.cookie, "POST", "/api/photos/nope/jobs", STAGE);
    expect(stranger.status).toBe(404);
    expect(stranger.body).toEqual(madeUp.body);
    for (const body of HOSTILE) {
      const res = await api(alice.cookie, "POST", `/api/photos/${own.id}/jobs`, body);
      expect([400, 403, 404], JSON.stringify(body)).toContain(res.status);
    }
    expect(await stateNow()).toEqual(before);
  });

  it("POST /api/photos/:id/jobs: a wrong media type, a chunked oversized body and odd methods change nothing", async () => {
    const { alice, own } = await world();
    const before = await stateNow();
    const path = `/api/photos/${own.id}/jobs`;
    const wrongType = await sendAs(alice.cookie, path, {
      method: "POST",
      headers: { "Content-Type": "text/plain" },
      body: JSON.stringify(STAGE),
    });
    expect(wrongType.status).toBe(415);
    expect((await sendAs(alice.cookie, path, chunkedOversized('{"kind":"'))).status).toBe(413);
    for (const method of ["PUT", "PATCH", "DELETE"]) {
      expect([404, 405], method).toContain((await sendAs(alice.cookie, path, { method })).status);
    }
    expect(await stateNow()).toEqual(before);
  });

  it("the public API's jobs: a stranger's photo, hostile fields, a wrong media type, an oversized body, odd methods", async () => {
    const { theirs, own, key } = await world();
    const before = await stateNow();
    const stranger = await apiV1(key, `/photos/${theirs.id}/jobs`, { method: "POST", json: STAGE });
    const madeUp = await apiV1(key, "/photos/nope/jobs", { method: "POST", json: STAGE });
    expect(stranger.status).toBe(404);
    expect(await stranger.json()).toEqual(await madeUp.json());
    for (const body of HOSTILE) {
      const res = await apiV1(key, `/photos/${own.id}/jobs`, { method: "POST", json: body });
      expect(res.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
      expect(res.status, JSON.stringify(body)).toBeLessThan(500);
    }
    const wrongType = await apiV1(key, `/photos/${own.id}/jobs`, {
      method: "POST",
      headers: { "Content-Type": "text/plain" },
      body: JSON.stringify(STAGE),
    });
    expect(wrongType.status).toBeGreaterThanOrEqual(400);
    expect(wrongType.status).toBeLessThan(500);
    const oversized = await apiV1(key, `/photos/${own.id}/jobs`, chunkedOversized('{"kind":"'));
    expect(oversized.status).toBe(413);
    expect([404, 405]).toContain((await apiV1(key, `/photos/${own.id}/jobs`, { method: "PUT" })).status);
    expect(await stateNow()).toEqual(before);
  });

  it("the public API's uploads and a job's GET: a stranger's job, unknown fields, hostile addresses, wrong types, oversized bodies, odd methods", async () => {
    const { theirs, alice } = await world();
    const reader = await createApiKey({ db, env, clock: () => Date.now() }, alice.id, {
      name: "reader",
      scopes: ["stage", "read"],
    });
    if (!reader.ok) throw new Error(reader.error);
    const key = reader.token;
    const bob = await db.query.users.findFirst({ where: (u, { eq }) => eq(u.id, theirs.userId) });
    const bobKey = await createApiKey({ db, env, clock: () => Date.now() }, bob!.id, {
      name: "b",
      scopes: ["stage", "read"],
    });
    if (!bobKey.ok) throw new Error(bobKey.error);
    const started = await apiV1(bobKey.token, `/photos/${theirs.id}/jobs`, { method: "POST", json: STAGE });
    const jobId = ((await started.json()) as { job: { id: string } }).job.id;
    // Settled before the state is taken: its run writes on its own. Read from D1, not the API (its reads are rate-limited).
    await expect
      .poll(async () => (await db.query.jobs.findFirst({ where: (j, { eq }) => eq(j.id, jobId) }))?.status, {
        timeout: 30_000,
        interval: 250,
      })
      .toMatch(/^(succeeded|failed)$/);
    const before = await stateNow();
    // A stranger's real job answers as a made-up one.
    const strangers = await apiV1(key, `/jobs/${jobId}`);
    expect(strangers.status).toBe(404);
    expect(await strangers.json()).toEqual(await (await apiV1(key, "/jobs/nosuchjob")).json());
    // By-URL uploads: unknown fields, addresses that are not the public internet's, a wrong type, an oversized body.
    const byUrl = (json: unknown, init: RequestInit = {}) =>
      apiV1(key, "/photos/from-url", { method: "POST", json, idem: crypto.randomUUID(), ...init });
    for (const body of [
      { url: "https://example.com/a.jpg", folderId: "someone-elses" },
      { url: "http://127.0.0.1/a.jpg" },
      { url: "http://[::1]/a.jpg" },
      { url: "file:///etc/passwd" },
      { url: "https://user:pw@example.com/a.jpg" },
      { url: "http://localhost/api/v1/balance" },
      { url: "x".repeat(3000) },
    ]) {
      const res = await byUrl(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
    }
    const wrongType = await apiV1(key, "/photos/from-url", {
      method: "POST",
      idem: crypto.randomUUID(),
      headers: { "Content-Type": "text/plain" },
      body: '{"url":"https://example.com/a.jpg"}',
    });
    expect(wrongType.status).toBe(415);
    for (const path of ["/photos/from-url", "/photos"]) {
      const oversized = await apiV1(key, path, { ...chunkedOversized('{"url":"'), idem: crypto.randomUUID() });
      expect([400, 413, 415], path).toContain(oversized.status);
      expect([404, 405], path).toContain((await apiV1(key, path, { method: "PATCH" })).status);
    }
    // A multipart upload with a file that is not an image, and one with no file at all.
    for (const form of [
      (() => {
        const f = new FormData();
        f.set("file", new File([new TextEncoder().encode("<svg/>")], "x.jpg", { type: "image/jpeg" }));
        return f;
      })(),
      new FormData(),
    ]) {
      const res = await apiV1(key, "/photos", { method: "POST", body: form, idem: crypto.randomUUID() });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    expect(await stateNow()).toEqual(before);
  }, 60_000);

  it("the public API refuses a field it does not read, saying what to do, and charges nothing", async () => {
    const { own, key } = await world();
    const before = await stateNow();
    const job = (json: Record<string, unknown>) =>
      apiV1(key, `/photos/${own.id}/jobs`, { method: "POST", json }).then(async (r) => ({
        status: r.status,
        error: ((await r.json()) as { error?: string }).error,
      }));
    // A well-formed mask id: before, the removal ran on the whole room and was charged as if the mask were read.
    expect(await job({ kind: "removal", maskId: "a".repeat(64) })).toEqual({
      status: 400,
      error: expect.stringContaining("no mask"),
    });
    expect(await job({ ...STAGE, variations: 2 })).toEqual({
      status: 400,
      error: expect.stringContaining("one result per job"),
    });
    expect(await job({ kind: "stage", roomType: "Bedroom", designstyle: "Modern" })).toEqual({
      status: 400,
      error: expect.stringContaining("Unknown field: designstyle"),
    });
    expect(await stateNow()).toEqual(before);
  });

  it("the Stripe webhook: forged, unsigned, wrongly typed, oversized and odd-method requests change nothing", async () => {
    const before = await stateNow();
    const event = JSON.stringify({ id: "evt_forged", type: "checkout.session.completed", data: { object: {} } });
    const hook = (init: RequestInit) => workerFetch("/api/webhooks/stripe", init);
    const answers = [
      await hook({ method: "POST", headers: { "Content-Type": "application/json" }, body: event }),
      await hook({
        method: "POST",
        headers: { "Content-Type": "application/json", "Stripe-Signature": "t=1,v1=deadbeef" },
        body: event,
      }),
      await hook({
        method: "POST",
        headers: { "Content-Type": "text/plain", "Stripe-Signature": "t=1,v1=0" },
        body: event,
      }),
      await hook(chunkedOversized('{"kind":"')),
    ];
    for (const res of answers) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    expect([404, 405]).toContain((await hook({ method: "GET" })).status);
    expect(await stateNow()).toEqual(before);
  });
});
