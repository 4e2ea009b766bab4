import { env } from "cloudflare:workers";
import { apiCallbacks, creditLedger, jobs, photoVersions, users } from "@db/schema";
import { makeJpeg } from "@test/fixtures/images";
import { db, makeUser, signedIn } from "@test/support/factories";
import { makePhoto } from "@test/support/photos";
import { stubProvider } from "@test/support/provider-stub";
import { workerFetch } from "@test/support/worker";
import { randomToken } from "@workers/lib/crypto";
import { deliverDue } from "@workers/objects/user/jobs/callbacks";
import { versionKey, versionThumbKey } from "@workers/objects/user/jobs/job-rows";
import { KEEP_REASON } from "@workers/objects/user/jobs/keep";
import { STRUCTURE_REFUSED } from "@workers/objects/user/jobs/structure";
import { userObject } from "@workers/objects/user-object";
import { createApiKey } from "@workers/services/api-keys";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";

// The public API says what it means (issue 46 item 4, docs/decisions/0232-an-api-that-says-what-it-means.md): a
// refused result carries its verdict and its keep address, never a download address that answers 409, in answers
// and callbacks alike; POST …/keep keeps it for one credit as the page does, once per Idempotency-Key; API jobs
// carry the plan's queue priority.
//
// A refused result is written as the runner leaves one (the job failed with the refusal's message and pointing at
// its version, the version labelled refused, its bytes stored): what these routes answer depends on that state, not
// on how the structure check reached it.

const RESULT = makeJpeg(64, 48, 80, 24, 4601);

async function keyFor(userId: string) {
  const made = await createApiKey({ db, env, clock: () => Date.now() }, userId, {
    name: "test",
    scopes: ["stage", "read"],
  });
  if (!made.ok) throw new Error(made.error);
  return made;
}

function call(token: string, path: string, init: RequestInit & { idem?: string; json?: unknown } = {}) {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${token}`);
  if (init.idem) headers.set("Idempotency-Key", init.idem);
  if (init.json !== undefined) headers.set("Content-Type", "application/json");
  const body = init.json !== undefined ? JSON.stringify(init.json) : init.body;
  return workerFetch(path.startsWith("/api/") ? path : `/api/v1${path}`, { ...init, headers, body });
}

/** A job whose result the structure check refused twice: failed, uncharged, its version stored and labelled. */
async function refusedResult(userId: string, verdict: "refused" | "passed" = "refused") {
  const photo = await makePhoto(userId);
  const jobId = randomToken();
  const now = Date.now();
  const key = versionKey(userId, photo.id, jobId);
  await env.PHOTOS.put(key, RESULT, { httpMetadata: { contentType: "image/jpeg" } });
  await env.PHOTOS.put(versionThumbKey(userId, photo.id, jobId), RESULT, {
    httpMetadata: { contentType: "image/jpeg" },
  });
  await db.insert(jobs).values({
    ...{ id: jobId, userId, photoId: photo.id, kind: "stage", params: { roomType: "bedroom" } },
    ...(verdict === "refused"
      ? { status: "failed" as const, error: STRUCTURE_REFUSED }
      : { status: "succeeded" as const, error: null }),
    ...{ versionId: jobId, attempts: 1, createdAt: now - 5000, startedAt: now - 4000, finishedAt: now },
  });
  await db.insert(photoVersions).values({
    ...{ id: jobId, photoId: photo.id, userId, jobId, kind: "stage", params: { roomType: "bedroom" } },
    ...{ key, thumbKey: versionThumbKey(userId, photo.id, jobId), contentType: "image/jpeg" },
    ...{ bytes: RESULT.byteLength, width: 64, height: 48, createdAt: now },
    ...{ storedVerdict: verdict, structureScore: verdict === "refused" ? 1.8 : 0.3 },
  });
  return { photoId: photo.id, jobId, versionId: jobId };
}

type VersionAnswer = {
  id: string;
  structure: { verdict: string } | null;
  downloadUrl: string | null;
  keepUrl: string | null;
};

describe("a refused result through the public API", () => {
  it("is answered with its verdict and keep address, no download; keep charges one credit, once per key, then the download answers 200", async () => {
    const user = await makeUser({ credits: 2 });
    const { token } = await keyFor(user.id);
    const r = await refusedResult(user.id);
    const keepPath = `/api/v1/photos/${r.photoId}/versions/${r.versionId}/keep`;

    const job = await call(token, `/jobs/${r.jobId}`);
    expect(job.status).toBe(200);
    const jobBody = (await job.json()) as { job: { status: string }; version: VersionAnswer };
    expect(jobBody.job.status).toBe("failed");
    expect(jobBody.version).toMatchObject({ structure: { verdict: "refused" }, downloadUrl: null, keepUrl: keepPath });
    const list = (await (await call(token, `/photos/${r.photoId}/versions`)).json()) as { versions: VersionAnswer[] };
    expect(list.versions).toEqual([jobBody.version]);

    // Kept: one credit, as on the page; the answer is the kept version, downloadable as the owner's own copy.
    const kept = await call(token, keepPath, { method: "POST", idem: "keep-1" });
    expect(kept.status).toBe(200);
    const keptBody = (await kept.json()) as { version: VersionAnswer; credits: number };
    expect(keptBody).toMatchObject({
      credits: 1,
      version: {
        id: r.versionId,
        structure: { verdict: "kept" },
        downloadUrl: `/api/v1/photos/${r.photoId}/versions/${r.versionId}/download?disclosure=none`,
        keepUrl: null,
      },
    });
    expect(await userObject(env, user.id).balance(user.id)).toBe(1);
    const ledger = await db
      .select()
      .from(creditLedger)
      .where(and(eq(creditLedger.userId, user.id), eq(creditLedger.reservationKey, `keep:${r.versionId}`)))
      .all();
    expect(ledger.map((l) => [l.kind, l.amount, l.reason])).toEqual([
      ["reserve", -1, KEEP_REASON],
      ["commit", 0, expect.any(String)],
    ]);

    // The same key again: the first answer, nothing charged. Another key: the page's rule, it is kept already.
    const replay = await call(token, keepPath, { method: "POST", idem: "keep-1" });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(kept.headers.get("Idempotent-Replayed")).toBeNull();
    expect(await replay.json()).toEqual(keptBody);
    const other = await call(token, keepPath, { method: "POST", idem: "keep-2" });
    expect(other.status).toBe(409);
    expect(await userObject(env, user.id).balance(user.id)).toBe(1);
    // The key names that keep: used for another version, it is refused.
    const second = await refusedResult(user.id);
    const reused = await call(token, `/photos/${second.photoId}/versions/${second.versionId}/keep`, {
      method: "POST",
      idem: "keep-1",
    });
    expect(reused.status).toBe(409);
    expect(await userObject(env, user.id).balance(user.id)).toBe(1);

    // Following the kept version's download address answers the stored result.
    const download = await call(token, keptBody.version.downloadUrl!);
    expect(download.status).toBe(200);
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(RESULT);
  });

  it("keep refuses a result that was not refused (409), and one its owner cannot pay for (402), charging nothing", async () => {
    const user = await makeUser({ credits: 1 });
    const { token } = await keyFor(user.id);
    const passed = await refusedResult(user.id, "passed");
    const answer = await call(token, `/jobs/${passed.jobId}`);
    expect(((await answer.json()) as { version: VersionAnswer }).version).toMatchObject({
      structure: { verdict: "passed" },
      downloadUrl: `/api/v1/photos/${passed.photoId}/versions/${passed.versionId}/download`,
      keepUrl: null,
    });
    const notRefused = await call(token, `/photos/${passed.photoId}/versions/${passed.versionId}/keep`, {
      method: "POST",
    });
    expect(notRefused.status).toBe(409);

    const poor = await makeUser({ credits: 0 });
    const poorKey = await keyFor(poor.id);
    const r = await refusedResult(poor.id);
    const refused = await call(poorKey.token, `/photos/${r.photoId}/versions/${r.versionId}/keep`, {
      method: "POST",
      idem: "keep-poor",
    });
    expect(refused.status).toBe(402);
    expect(await userObject(env, user.id).balance(user.id)).toBe(1);
    expect(await userObject(env, poor.id).balance(poor.id)).toBe(0);
    // Not stored: the same key works once there is a credit (as for jobs).
    expect(
      (await db.select().from(photoVersions).where(eq(photoVersions.id, r.versionId)).get())!.structureVerdict,
    ).toBe("refused");
  });

  it("no callback of a refused job carries a download address: its verdict and keep address instead", async () => {
    const user = await makeUser({ credits: 1 });
    const key = await keyFor(user.id);
    const refused = await refusedResult(user.id);
    const passed = await refusedResult(user.id, "passed");
    const now = Date.now();
    for (const jobId of [refused.jobId, passed.jobId]) {
      await db.insert(apiCallbacks).values({
        ...{ jobId, userId: user.id, apiKeyId: key.key.id, url: "http://hooks.example.com/stagewise" },
        ...{ status: "pending", nextAt: now, finishedAt: now, createdAt: now },
      });
    }
    const received = new Map<string, string>();
    const receiver = (async (_input: RequestInfo | URL, init?: RequestInit) => {
      const body = String(init?.body ?? "");
      received.set((JSON.parse(body) as { data: { job: { id: string } } }).data.job.id, body);
      return new Response("ok");
    }) as typeof fetch;
    expect(await deliverDue(env, db, user.id, now, receiver)).toBe(2);

    const origin = env.APP_ORIGIN.replace(/\/$/, "");
    const refusedBody = received.get(refused.jobId)!;
    const event = JSON.parse(refusedBody) as { type: string; data: { version: VersionAnswer } };
    expect(event.type).toBe("job.failed");
    expect(event.data.version).toMatchObject({
      structure: { verdict: "refused" },
      downloadUrl: null,
      keepUrl: `${origin}/api/v1/photos/${refused.photoId}/versions/${refused.versionId}/keep`,
    });
    expect(refusedBody).not.toContain("/download");
    // A delivered result's callback still carries its download.
    const delivered = JSON.parse(received.get(passed.jobId)!) as { type: string; data: { version: VersionAnswer } };
    expect(delivered.type).toBe("job.succeeded");
    expect(delivered.data.version).toMatchObject({
      structure: { verdict: "passed" },
      downloadUrl: `${origin}/api/v1/photos/${passed.photoId}/versions/${passed.versionId}/download`,
      keepUrl: null,
    });
  });
});

describe("who may keep", () => {
  it("a signed-in browser without an API key: 401, its session authorizes nothing under /api/v1", async () => {
    const user = await signedIn({ credits: 1 });
    const r = await refusedResult(user.id);
    const res = await workerFetch(`/api/v1/photos/${r.photoId}/versions/${r.versionId}/keep`, {
      method: "POST",
      headers: { Cookie: user.cookie, Origin: "http://localhost" },
    });
    expect(res.status).toBe(401);
    expect(await userObject(env, user.id).balance(user.id)).toBe(1);
  });
});

describe("API jobs", () => {
  it("carry the plan's queue priority: a Professional user's go first, as the page's do", async () => {
    const provider = stubProvider();
    const byPlan: Record<string, number> = {};
    for (const plan of ["Professional plan", null]) {
      const user = await makeUser({ credits: 1 });
      await db.update(users).set({ plan }).where(eq(users.id, user.id));
      const { token } = await keyFor(user.id);
      const photo = await makePhoto(user.id);
      const res = await call(token, `/photos/${photo.id}/jobs`, {
        method: "POST",
        json: { kind: "stage", roomType: "Bedroom", designStyle: "Scandinavian" },
      });
      expect(res.status).toBe(202);
      const { job } = (await res.json()) as { job: { id: string } };
      byPlan[plan ?? "none"] = (await db.select().from(jobs).where(eq(jobs.id, job.id)).get())!.priority;
      for (let i = 0; i < 400; i++) {
        const row = await db.select().from(jobs).where(eq(jobs.id, job.id)).get();
        if (row!.status === "succeeded" || row!.status === "failed") break;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    expect(byPlan).toEqual({ "Professional plan": 1, none: 0 });
    expect(provider.calls).toHaveLength(2);
  });
});
