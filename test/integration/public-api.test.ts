import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { apiCallbacks, apiIdempotency, creditReservations, jobs, photos } from "@db/schema";
import { makeJpeg } from "@test/fixtures/images";
import { db, makeUser } from "@test/support/factories";
import { makePhoto } from "@test/support/photos";
import { stubProvider } from "@test/support/provider-stub";
import { apiV1, workerFetch } from "@test/support/worker";
import { SIGNATURE_HEADER, verifySignatureHeader } from "@workers/lib/callback-signing";
import { userObject } from "@workers/objects/user-object";
import { API_KEY_RULE, createApiKey, revokeApiKey } from "@workers/services/api-keys";
import { UPLOAD_RULE } from "@workers/services/limits";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { FAILURE_CODES } from "~/shared/result";

// The public API (/api/v1) through the Worker's own fetch handler, with the
// provider and callback receivers stubbed at the isolate's fetch.

const RESULT = makeJpeg(64, 48, 80);
let received: { url: string; headers: Headers; body: string }[] = [];
let receiverStatus = 200;

beforeEach(() => {
  received = [];
  receiverStatus = 200;
  const provider = stubProvider(async (req) => {
    if (!req.url.startsWith("http://hooks.example.com/")) return null;
    received.push({ url: req.url, headers: req.headers, body: await req.text() });
    return new Response("ok", { status: receiverStatus });
  });
  provider.answer = () => [RESULT];
});

const deps = { db, env, clock: () => Date.now() };

async function keyFor(userId: string, scopes: ("stage" | "read")[] = ["stage", "read"]) {
  const made = await createApiKey(deps, userId, { name: "test", scopes });
  if (!made.ok) throw new Error(made.error);
  return made;
}

const call = apiV1;

const STAGE = { kind: "stage", roomType: "Bedroom", designStyle: "Scandinavian" };

async function settle(token: string, jobId: string) {
  for (let i = 0; i < 400; i++) {
    const res = await call(token, `/jobs/${jobId}`);
    const body = (await res.json()) as { job: { status: string } };
    if (body.job.status === "succeeded" || body.job.status === "failed") return body;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the job did not settle");
}

describe("public API keys", () => {
  it("answers 401 without a key, and 401 on the very next request after the key is revoked", async () => {
    const user = await makeUser({ credits: 1 });
    const { token, key } = await keyFor(user.id);
    expect((await workerFetch("/api/v1/balance")).status).toBe(401);
    expect((await call(`sw_${"a".repeat(32)}`, "/balance")).status).toBe(401);
    const before = await call(token, "/balance");
    expect(before.status).toBe(200);
    expect(await before.json()).toEqual({ credits: 1 });
    expect((await revokeApiKey(deps, user.id, key.id)).ok).toBe(true);
    const after = await call(token, "/balance");
    expect(after.status).toBe(401);
    expect(after.headers.get("WWW-Authenticate")).toContain("Bearer");
  });

  it("refuses a job with 403 when the key lacks the stage scope, and charges nothing", async () => {
    const user = await makeUser({ credits: 2 });
    const photo = await makePhoto(user.id);
    const { token } = await keyFor(user.id, ["read"]);
    const res = await call(token, `/photos/${photo.id}/jobs`, { method: "POST", json: STAGE });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toContain('"stage" scope');
    expect(await userObject(env, user.id).balance(user.id)).toBe(2);
    expect(await db.select().from(jobs).where(eq(jobs.userId, user.id)).all()).toHaveLength(0);
  });

  it("answers 404 for a stranger's job, photo and version, exactly as for one that does not exist", async () => {
    const alice = await makeUser({ credits: 1 });
    const bob = await makeUser({ credits: 1 });
    const bobPhoto = await makePhoto(bob.id);
    const bobKey = await keyFor(bob.id);
    const created = await call(bobKey.token, `/photos/${bobPhoto.id}/jobs`, { method: "POST", json: STAGE });
    expect(created.status).toBe(202);
    const { job } = (await created.json()) as { job: { id: string } };
    await settle(bobKey.token, job.id);
    const { token } = await keyFor(alice.id);
    for (const path of [`/jobs/${job.id}`, "/jobs/nope", `/photos/${bobPhoto.id}/versions`]) {
      const res = await call(token, path);
      expect(res.status, path).toBe(404);
    }
    const stage = await call(token, `/photos/${bobPhoto.id}/jobs`, { method: "POST", json: STAGE });
    expect(stage.status).toBe(404);
    expect(await userObject(env, alice.id).balance(alice.id)).toBe(1);
  });

  it("answers 429 with Retry-After once a key is over its rate limit", async () => {
    const user = await makeUser();
    const { token, key } = await keyFor(user.id);
    const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`${API_KEY_RULE.name}:${key.id}`));
    for (let i = 0; i < API_KEY_RULE.limit; i++) await limiter.hit(API_KEY_RULE.limit, API_KEY_RULE.windowMs);
    const res = await call(token, "/balance");
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("Retry-After"))).toBeGreaterThan(0);
  });
});

describe("uploads through the API", () => {
  it("count against the account's uploads an hour, as the pages' do, whichever key sends them", async () => {
    const user = await makeUser();
    const { token } = await keyFor(user.id);
    const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`${UPLOAD_RULE.name}:${user.id.toLowerCase()}`));
    for (let i = 0; i < UPLOAD_RULE.limit; i++) await limiter.hit(UPLOAD_RULE.limit, UPLOAD_RULE.windowMs);
    const form = new FormData();
    form.set("file", new File([makeJpeg(64, 48, 80)], "room.jpg", { type: "image/jpeg" }));
    const res = await call(token, "/photos", { method: "POST", body: form, idem: "upload-1" });
    expect(res.status).toBe(429);
    expect(await db.select().from(photos).where(eq(photos.userId, user.id)).all()).toEqual([]);
    const byUrl = await call(token, "/photos/from-url", {
      method: "POST",
      json: { url: "https://example.com/a.jpg" },
      idem: "upload-2",
    });
    expect(byUrl.status).toBe(429);
  });

  it("refuses an unknown field of a by-URL upload, naming it, instead of dropping it", async () => {
    const user = await makeUser();
    const { token } = await keyFor(user.id);
    const res = await call(token, "/photos/from-url", {
      method: "POST",
      json: { url: "https://example.com/a.jpg", folderId: "f1" },
      idem: "upload-3",
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain("Unknown field: folderId");
  });
});

describe("idempotent job creation", () => {
  it("the same POST retried 5 times at once with one Idempotency-Key creates one job and one reservation", async () => {
    const user = await makeUser({ credits: 5 });
    const photo = await makePhoto(user.id);
    const { token } = await keyFor(user.id);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        call(token, `/photos/${photo.id}/jobs`, { method: "POST", json: STAGE, idem: "order-42" }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    const bodies = await Promise.all(answers.map((r) => r.json()));
    for (const b of bodies) expect(b).toEqual(bodies[0]);
    expect(answers.filter((r) => r.headers.get("Idempotent-Replayed") === "true")).toHaveLength(4);
    const rows = await db.select().from(jobs).where(eq(jobs.userId, user.id)).all();
    expect(rows).toHaveLength(1);
    const reservations = await db.select().from(creditReservations).where(eq(creditReservations.userId, user.id)).all();
    expect(reservations).toHaveLength(1);
    await settle(token, rows[0]!.id);
    expect(await userObject(env, user.id).balance(user.id)).toBe(4);
    // Later retries too, after the job finished.
    const late = await call(token, `/photos/${photo.id}/jobs`, { method: "POST", json: STAGE, idem: "order-42" });
    expect(late.status).toBe(202);
    expect(await late.json()).toEqual(bodies[0]);
    expect(await userObject(env, user.id).balance(user.id)).toBe(4);
    // The same key for a different request is refused.
    const other = await call(token, `/photos/${photo.id}/jobs`, {
      method: "POST",
      json: { kind: "removal" },
      idem: "order-42",
    });
    expect(other.status).toBe(409);
    expect(await db.select().from(jobs).where(eq(jobs.userId, user.id)).all()).toHaveLength(1);
  });

  it("answers 402 without credits and stores no answer, so the same key works after a top-up", async () => {
    const user = await makeUser();
    const photo = await makePhoto(user.id);
    const { token } = await keyFor(user.id);
    const send = () => call(token, `/photos/${photo.id}/jobs`, { method: "POST", json: STAGE, idem: "retry-me" });
    const broke = await send();
    expect(broke.status).toBe(402);
    expect(await db.select().from(jobs).where(eq(jobs.userId, user.id)).all()).toHaveLength(0);
    await userObject(env, user.id).grant(user.id, {
      amount: 1,
      source: "admin",
      reason: "top-up",
      idempotencyKey: `topup:${user.id}`,
    });
    const paid = await send();
    expect(paid.status).toBe(202);
    expect(((await paid.json()) as { credits: number }).credits).toBe(0);
    expect(await db.select().from(creditReservations).where(eq(creditReservations.userId, user.id)).all()).toHaveLength(
      1,
    );
  });

  it("uploads a photo once per Idempotency-Key, and refuses bad bodies with 4xx and no row", async () => {
    const user = await makeUser();
    const { token } = await keyFor(user.id);
    const upload = (bytes: Uint8Array, idem?: string) => {
      const fd = new FormData();
      fd.set("file", new File([bytes as Uint8Array<ArrayBuffer>], "Living room.jpg", { type: "image/jpeg" }));
      return call(token, "/photos", { method: "POST", body: fd, idem });
    };
    const jpeg = makeJpeg(320, 240, 80);
    const [a, b] = await Promise.all([upload(jpeg, "up-1"), upload(jpeg, "up-1")]);
    const statuses = [a.status, b.status].sort();
    // The loser of the race is told to retry (409 + Retry-After) or gets the replay.
    expect(statuses[0]).toBe(201);
    const again = await upload(jpeg, "up-1");
    expect(again.status).toBe(201);
    const first = (await (a.status === 201 ? a : b).json()) as { photo: { id: string; name: string; width: number } };
    expect(await again.json()).toEqual(first);
    expect(first.photo.name).toBe("Living room");
    expect(first.photo.width).toBe(320);
    expect(await db.select().from(photos).where(eq(photos.userId, user.id)).all()).toHaveLength(1);

    const notImage = await upload(new TextEncoder().encode("GIF89a not a photo"));
    expect(notImage.status).toBe(415);
    const truncated = await upload(jpeg.subarray(0, jpeg.length - 10));
    expect(truncated.status).toBe(400);
    const noFile = await call(token, "/photos", { method: "POST", body: new FormData() });
    expect(noFile.status).toBe(400);
    const asJson = await call(token, "/photos", { method: "POST", json: { file: "x" } });
    expect(asJson.status).toBe(415);
    const badKey = await call(token, "/photos", {
      method: "POST",
      body: new FormData(),
      headers: { "Idempotency-Key": "bad key" },
    });
    expect(badKey.status).toBe(400);
    expect(await db.select().from(photos).where(eq(photos.userId, user.id)).all()).toHaveLength(1);
    expect(await db.select().from(apiIdempotency).where(eq(apiIdempotency.userId, user.id)).all()).toHaveLength(1);
  });

  it("refuses to fetch photos from private, link-local or non-http addresses", async () => {
    const user = await makeUser();
    const { token } = await keyFor(user.id);
    for (const url of [
      "http://169.254.169.254/latest/meta-data",
      "http://10.0.0.7/a.jpg",
      "http://[fd00::1]/a.jpg",
      "http://[::ffff:192.168.1.1]/a.jpg",
      "file:///etc/passwd",
      "ftp://example.com/a.jpg",
      "http://user:pw@example.com/a.jpg",
      "http://intranet/a.jpg",
      "not a url",
    ]) {
      const res = await call(token, "/photos/from-url", { method: "POST", json: { url } });
      expect(res.status, url).toBe(400);
    }
    expect(await db.select().from(photos).where(eq(photos.userId, user.id)).all()).toHaveLength(0);
  });
});

describe("signed callbacks", () => {
  it("POSTs a job.succeeded event signed with the key's secret, and retries a failed delivery with backoff", async () => {
    const user = await makeUser({ credits: 2 });
    const photo = await makePhoto(user.id);
    const { token, callbackSecret } = await keyFor(user.id);
    receiverStatus = 500;
    const res = await call(token, `/photos/${photo.id}/jobs`, {
      method: "POST",
      json: { ...STAGE, callbackUrl: "http://hooks.example.com/stagewise" },
    });
    expect(res.status).toBe(202);
    const { job } = (await res.json()) as { job: { id: string } };
    await settle(token, job.id);
    const stub = userObject(env, user.id);
    // The alarm that held the job delivers its callback as the job ends; wait for that first attempt.
    for (let i = 0; i < 100 && received.length === 0; i++) {
      if (i % 10 === 9) await runDurableObjectAlarm(stub);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(received).toHaveLength(1);
    let row = await db.select().from(apiCallbacks).where(eq(apiCallbacks.jobId, job.id)).get();
    expect(row?.status).toBe("pending");
    expect(row?.attempts).toBe(1);
    expect(row?.lastStatus).toBe(500);
    expect(row!.nextAt! - row!.lastAttemptAt!).toBe(30_000);

    receiverStatus = 200;
    await stub.advanceClockForTesting(31_000);
    await runDurableObjectAlarm(stub);
    expect(received).toHaveLength(2);
    const last = received[1]!;
    const now = Math.floor(Date.now() / 1000);
    expect(await verifySignatureHeader(callbackSecret, last.headers.get(SIGNATURE_HEADER), last.body, now)).toBe(true);
    expect(await verifySignatureHeader(callbackSecret, last.headers.get(SIGNATURE_HEADER), `${last.body} `, now)).toBe(
      false,
    );
    const event = JSON.parse(last.body) as {
      type: string;
      data: { job: { id: string }; version: { downloadUrl: string } };
    };
    expect(event.type).toBe("job.succeeded");
    expect(event.data.job.id).toBe(job.id);
    expect(event.data.version.downloadUrl).toContain(`/api/v1/photos/${photo.id}/versions/`);
    row = await db.select().from(apiCallbacks).where(eq(apiCallbacks.jobId, job.id)).get();
    expect(row?.status).toBe("delivered");
    expect(row?.attempts).toBe(2);
  });

  it("refuses a callback URL on a private address before charging", async () => {
    const user = await makeUser({ credits: 1 });
    const photo = await makePhoto(user.id);
    const { token } = await keyFor(user.id);
    const res = await call(token, `/photos/${photo.id}/jobs`, {
      method: "POST",
      json: { ...STAGE, callbackUrl: "http://192.168.0.10/hook" },
    });
    expect(res.status).toBe(400);
    expect(await userObject(env, user.id).balance(user.id)).toBe(1);
  });
});

describe("OpenAPI document", () => {
  it("is OpenAPI 3.1, generated from the routes, with every v1 path and the key scheme", async () => {
    const res = await workerFetch("/api/v1/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths).sort()).toEqual([
      "/balance",
      "/jobs/{jobId}",
      "/photos",
      "/photos/from-url",
      "/photos/{photoId}/jobs",
      "/photos/{photoId}/versions",
      "/photos/{photoId}/versions/{versionId}/changes",
      "/photos/{photoId}/versions/{versionId}/confirm-structure",
      "/photos/{photoId}/versions/{versionId}/download",
      "/photos/{photoId}/versions/{versionId}/keep",
      "/photos/{photoId}/versions/{versionId}/original-page",
    ]);
    // Keeping a refused result: a POST, charged once per Idempotency-Key, which the document names.
    const keep = (
      doc.paths["/photos/{photoId}/versions/{versionId}/keep"] as { post?: { parameters?: { name: string }[] } }
    ).post;
    expect(keep?.parameters?.map((p) => p.name)).toContain("Idempotency-Key");
    // The structure check's verdict carries its change map's address, an image the same key reads (ADR 0260).
    const changes = doc.paths["/photos/{photoId}/versions/{versionId}/changes"] as {
      get?: { responses: Record<string, { content?: Record<string, unknown> }> };
    };
    expect(Object.keys(changes.get?.responses["200"]?.content ?? {})).toEqual(["image/png"]);
    const version = (
      doc as unknown as {
        components: { schemas: { Version: { properties: { structure: { properties?: Record<string, unknown> } } } } };
      }
    ).components.schemas.Version;
    expect(JSON.stringify(version.properties.structure)).toContain("changesUrl");
    expect(Object.keys(doc.paths["/photos/{photoId}/jobs"]!)).toEqual(["post"]);
    // A failure's code is the closed set the routes answer with, so a client can switch on it.
    const failure = (
      doc as unknown as { components: { schemas: { Failure: { properties: { code: { enum?: string[] } } } } } }
    ).components.schemas.Failure;
    expect(failure.properties.code.enum).toEqual([...FAILURE_CODES]);
    // keepOriginalFloor is accepted for old integrations and ignored: the document says so.
    const request = (
      doc as unknown as {
        components: { schemas: { JobRequest: { properties: Record<string, { deprecated?: boolean }> } } };
      }
    ).components.schemas.JobRequest.properties;
    expect(request.keepOriginalFloor?.deprecated).toBe(true);
    expect(request.designCreativity?.deprecated).toBeUndefined();
  });
});
