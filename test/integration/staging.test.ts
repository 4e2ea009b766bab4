import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { creditReservations, jobs, photos, photoVersions } from "@db/schema";
import { makeJpeg } from "@test/fixtures/images";
import { db, signedIn } from "@test/support/factories";
import { makePhoto, storedKeys } from "@test/support/photos";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { takeConsoleErrors } from "@test/support/setup";
import { signedAddressOf } from "@test/support/signed";
import { workerFetch } from "@test/support/worker";
import { INTERRUPTED_MESSAGE } from "@workers/objects/user/jobs/job-rows";
import { userObject } from "@workers/objects/user-object";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { inTrashMessage } from "~/shared/library-view";

// The provider is stubbed at the isolate's fetch for its host
// (PROVIDER_BASE_URL=http://provider.test in vitest.config.ts); every other
// address goes to the real fetch. PROVIDER_TIMEOUT_MS is 1.5 s here.

type Mode = "ok" | "fail500" | "fail429" | "hang" | "errorBody" | "empty" | "malformed";
const RESULT = makeJpeg(64, 48, 80);
let mode: Mode = "ok";
let provider: ProviderStub;
let release: (() => void) | undefined;

/** How the provider answers in each mode but "ok" (then it answers RESULT, as many as asked). */
function failing(req: Request): Response | Promise<Response> | null {
  switch (mode) {
    case "fail500":
      return new Response("boom", { status: 500, statusText: "Internal Server Error" });
    case "fail429":
      return new Response("slow down", { status: 429, statusText: "Too Many Requests" });
    case "hang":
      return new Promise<Response>((_, reject) => {
        req.signal.addEventListener("abort", () => reject(req.signal.reason));
        release = () => reject(new Error("released"));
      });
    case "errorBody":
      return Response.json({ error: "bad_input", message: "The image could not be read" });
    case "empty":
      return Response.json({ info: { images: [] } });
    case "malformed":
      return new Response("{not json", { headers: { "Content-Type": "application/json" } });
    default:
      return null;
  }
}

beforeEach(() => {
  mode = "ok";
  provider = stubProvider();
  provider.answer = (call) => Array.from({ length: Number(call.body.num_images ?? 1) }, () => RESULT);
  provider.respond = (_call, req) => failing(req);
  // Enlargements answer an image no larger than the input: the result is kept at its own size.
  provider.upscaleAnswer = RESULT;
});

afterEach(() => {
  release?.();
  release = undefined;
});

async function post(cookie: string, photoId: string, body: unknown) {
  return workerFetch(`/api/photos/${photoId}/jobs`, {
    method: "POST",
    headers: { Cookie: cookie, "Content-Type": "application/json", Origin: "http://localhost" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

interface JobAnswer {
  job: { id: string; status: string; error: string | null; versionId: string | null; startedAt: number | null };
  version: { id: string; imageUrl: string; downloadUrl: string; thumbUrl: string } | null;
}

async function settle(cookie: string, jobId: string): Promise<JobAnswer> {
  for (let i = 0; i < 400; i++) {
    const res = await workerFetch(`/api/jobs/${jobId}`, { headers: { Cookie: cookie } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as JobAnswer;
    if (body.job.status === "succeeded" || body.job.status === "failed") return body;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the job did not settle");
}

async function credits(userId: string): Promise<number> {
  return userObject(env, userId).balance(userId);
}

const STAGE = { kind: "stage", roomType: "Bedroom", designStyle: "Scandinavian" };

describe("AI jobs", () => {
  it("stages a photo: 202 at once, then a committed credit, a version in R2 and the photo pointing at it", async () => {
    const user = await signedIn({ credits: 3 });
    const photo = await makePhoto(user.id);
    const res = await post(user.cookie, photo.id, STAGE);
    expect(res.status).toBe(202);
    const { job } = (await res.json()) as JobAnswer;
    const done = await settle(user.cookie, job.id);
    expect(done.job.status).toBe("succeeded");
    expect(done.job.startedAt).toBeTypeOf("number");
    expect(await credits(user.id)).toBe(2);

    const sent = provider.calls[0]!;
    // The documented JSON call with a signed address of the source (docs/decisions/0151-provider-as-documented.md).
    expect(sent.path).toBe("/generate_designs_for_room");
    expect(sent.authorization).toBe("Bearer test-provider-key");
    expect(sent.body.room_type).toBe("bedroom");
    expect(sent.body.design_style).toBe("scandinavian");
    expect(sent.body.input_image_url).toContain(`/api/signed/photos/${photo.id}/original?`);
    expect(provider.calls.map((c) => c.inputStatus)).toEqual([200]);
    // The stub's 64 px result is below listing size: one enlargement was asked for, and the result kept its size.
    expect(provider.upscales).toHaveLength(1);

    const reservation = await db.select().from(creditReservations).where(eq(creditReservations.key, job.id)).get();
    expect(reservation?.status).toBe("committed");
    const row = await db.select().from(photos).where(eq(photos.id, photo.id)).get();
    const version = await db.select().from(photoVersions).where(eq(photoVersions.jobId, job.id)).get();
    expect(version).toBeDefined();
    expect(row?.processedKey).toBe(version!.key);
    expect(row?.processedThumbKey).toBe(version!.thumbKey);
    expect(version!.width).toBe(64);
    const keys = await storedKeys(user.id);
    expect(keys).toContain(`photos/${user.id}/${photo.id}/versions/${version!.id}.jpg`);
    expect(keys).toContain(version!.thumbKey);

    const image = await workerFetch(done.version!.imageUrl, { headers: { Cookie: user.cookie } });
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(RESULT);
    const thumb = await workerFetch(done.version!.thumbUrl, { headers: { Cookie: user.cookie } });
    const thumbBytes = new Uint8Array(await thumb.arrayBuffer());
    expect(thumbBytes[0]).toBe(0xff);
    expect(thumbBytes.byteLength).toBeLessThan(100 * 1024);
    const download = await workerFetch(done.version!.downloadUrl, { headers: { Cookie: user.cookie } });
    expect(download.headers.get("Content-Disposition")).toMatch(/^attachment;/);
    await download.arrayBuffer();
  });

  it("answers with the result before its thumbnail is made, then points the version and the photo at the thumbnail", async () => {
    const user = await signedIn({ credits: 1 });
    const photo = await makePhoto(user.id);
    const res = await post(user.cookie, photo.id, STAGE);
    const { job } = (await res.json()) as JobAnswer;
    const done = await settle(user.cookie, job.id);
    expect(done.job.status).toBe("succeeded");
    const version = async () => (await db.select().from(photoVersions).where(eq(photoVersions.jobId, job.id)).get())!;
    // Made after the commit: wait for it (the job's run holds it), at most 5 s.
    for (let i = 0; i < 250 && (await version()).thumbKey === (await version()).key; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const v = await version();
    expect(v.thumbKey).not.toBe(v.key);
    expect(v.thumbKey).toBe(`photos/${user.id}/${photo.id}/versions/${v.id}.thumb.jpg`);
    const row = (await db.select().from(photos).where(eq(photos.id, photo.id)).get())!;
    expect(row.processedThumbKey).toBe(v.thumbKey);
    const thumb = new Uint8Array(await (await env.PHOTOS.get(v.thumbKey))!.arrayBuffer());
    expect(thumb[0]).toBe(0xff);
    expect(thumb).not.toEqual(RESULT);
    // The version's thumbnail address is cached for good only now that it is final.
    const served = await workerFetch(done.version!.thumbUrl, { headers: { Cookie: user.cookie } });
    expect(served.headers.get("Cache-Control")).toContain("immutable");
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(thumb);
  });

  it("stages the image the photo's row names, which the provider fetches through its signed address", async () => {
    const user = await signedIn({ credits: 3 });
    const photo = await makePhoto(user.id);
    const elsewhere = makeJpeg(24, 18, 70);
    const otherKey = `${photo.originalKey}-moved`;
    await env.PHOTOS.put(otherKey, elsewhere, { httpMetadata: { contentType: "image/jpeg" } });
    await db.update(photos).set({ originalKey: otherKey }).where(eq(photos.id, photo.id));
    const first = (await (await post(user.cookie, photo.id, STAGE)).json()) as JobAnswer;
    expect((await settle(user.cookie, first.job.id)).job.status).toBe("succeeded");
    expect(provider.calls[0]!.input).toEqual(elsewhere);
    expect(provider.calls[0]!.body.input_image_url).toBeTypeOf("string");
    expect(await credits(user.id)).toBe(2);
  });

  it("replaces the sky of the newest version through a signed address, and keeps every version", async () => {
    const user = await signedIn({ credits: 3 });
    const photo = await makePhoto(user.id);
    const posted = (await (await post(user.cookie, photo.id, STAGE)).json()) as JobAnswer;
    const first = await settle(user.cookie, posted.job.id);
    const res = await post(user.cookie, photo.id, { kind: "sky", skyType: "dusk" });
    expect(res.status).toBe(202);
    const sky = await settle(user.cookie, ((await res.json()) as JobAnswer).job.id);
    expect(sky.job.status).toBe("succeeded");
    // Both calls send a signed address the provider fetches.
    expect(provider.calls[0]!.path).toBe("/generate_designs_for_room");
    expect(provider.calls.map((c) => c.inputStatus)).toEqual([200, 200]);
    const body = provider.calls[1]!.body;
    expect(body.sky_type).toBe("dusk");
    expect(body.input_image_url).toContain(`/api/signed/photos/${photo.id}/${first.job.versionId}?`);
    const versions = (await (
      await workerFetch(`/api/photos/${photo.id}/versions`, { headers: { Cookie: user.cookie } })
    ).json()) as { versions: { id: string }[] };
    expect(versions.versions.map((v) => v.id)).toEqual([sky.job.versionId, first.job.versionId]);
    expect(await credits(user.id)).toBe(1);
  });

  it("removes furniture with one credit", async () => {
    const user = await signedIn({ credits: 1 });
    const photo = await makePhoto(user.id);
    const res = await post(user.cookie, photo.id, { kind: "removal" });
    expect(res.status).toBe(202);
    const done = await settle(user.cookie, ((await res.json()) as JobAnswer).job.id);
    expect(done.job.status).toBe("succeeded");
    expect(provider.calls[0]!.path).toBe("/remove_objects_from_room");
    expect(await credits(user.id)).toBe(0);
  });

  const failures: [Mode, string, string][] = [
    ["fail500", "stage", "Failed to process image: 500 - Internal Server Error"],
    ["fail429", "stage", "Failed to process image: 429 - Too Many Requests"],
    ["fail500", "sky", "Failed to replace sky: 500 - Internal Server Error"],
    ["hang", "stage", "Failed to process image: the provider did not answer within 1.5 s"],
    ["errorBody", "stage", "Failed to process image: The image could not be read"],
    ["empty", "stage", "Invalid API response: No processed images received."],
    ["empty", "sky", "Invalid API response: No replaced sky image returned."],
    ["malformed", "stage", "Invalid API response: the provider did not send JSON."],
  ];
  for (const [failMode, kind, message] of failures) {
    it(`${kind} with the provider answering ${failMode}: the job fails with the message and the credit comes back`, async () => {
      const user = await signedIn({ credits: 2 });
      const photo = await makePhoto(user.id);
      mode = failMode;
      const res = await post(user.cookie, photo.id, kind === "sky" ? { kind, skyType: "night" } : STAGE);
      expect(res.status).toBe(202);
      const { job } = (await res.json()) as JobAnswer;
      const done = await settle(user.cookie, job.id);
      expect(done.job.status).toBe("failed");
      expect(done.job.error).toBe(message);
      expect(done.version).toBeNull();
      expect(await credits(user.id)).toBe(2);
      const reservation = await db.select().from(creditReservations).where(eq(creditReservations.key, job.id)).get();
      expect(reservation?.status).toBe("refunded");
      expect((await storedKeys(user.id)).some((k) => k.includes("/versions/"))).toBe(false);
      expect((await db.select().from(photos).where(eq(photos.id, photo.id)).get())?.processedKey).toBeNull();
    });
  }

  it("20 concurrent requests from a user with 5 credits start exactly 5 jobs and refuse 15", async () => {
    const user = await signedIn({ credits: 5 });
    const photo = await makePhoto(user.id);
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(user.cookie, photo.id, STAGE)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(5);
    expect(statuses.filter((s) => s === 402)).toHaveLength(15);
    const bodies = (await Promise.all(answers.map((a) => a.json()))) as (JobAnswer & { error?: string })[];
    for (const b of bodies.filter((b) => b.error)) expect(b.error).toBe("Insufficient credits");
    for (const b of bodies.filter((b) => b.job)) await settle(user.cookie, b.job.id);
    const rows = await db.select().from(jobs).where(eq(jobs.userId, user.id)).all();
    expect(rows).toHaveLength(5);
    expect(rows.every((r) => r.status === "succeeded")).toBe(true);
    expect(await credits(user.id)).toBe(0);
  });

  it("another user's photo answers 404 and reserves nothing", async () => {
    const owner = await signedIn({ credits: 2 });
    const other = await signedIn({ credits: 2 });
    const photo = await makePhoto(owner.id);
    const res = await post(other.cookie, photo.id, STAGE);
    expect(res.status).toBe(404);
    expect(await credits(other.id)).toBe(2);
    expect(await db.select().from(jobs).where(eq(jobs.userId, other.id)).all()).toEqual([]);
    expect(provider.calls).toEqual([]);
    // Nor can they read the owner's job or versions.
    const mine = (await (await post(owner.cookie, photo.id, STAGE)).json()) as JobAnswer;
    const done = await settle(owner.cookie, mine.job.id);
    expect((await workerFetch(`/api/jobs/${mine.job.id}`, { headers: { Cookie: other.cookie } })).status).toBe(404);
    expect((await workerFetch(done.version!.imageUrl, { headers: { Cookie: other.cookie } })).status).toBe(404);
    expect((await workerFetch(`/api/photos/${photo.id}/versions`, { headers: { Cookie: other.cookie } })).status).toBe(
      404,
    );
  });

  it("a photo that is not the user's is 'Not found.', one in the trash says so, on every way in, with nothing written", async () => {
    // The user's object checks the photo in the round trip that reads the balance (the Worker may read it first, to
    // find the version a removal starts from): both answer alike. A photo in the trash is the owner's, so it is not
    // "Not found." but refused with the words that say where it is (docs/decisions/0202).
    const owner = await signedIn({ credits: 2 });
    const other = await signedIn({ credits: 3 });
    const broke = await signedIn();
    const photo = await makePhoto(owner.id);
    const trashed = await makePhoto(other.id);
    await db.update(photos).set({ trashedAt: Date.now() }).where(eq(photos.id, trashed.id));
    const bodies = [
      STAGE,
      { ...STAGE, sourceVersionId: "original" },
      { ...STAGE, variations: 3 },
      { kind: "sky", skyType: "dusk" },
      { kind: "sky", skyType: "dusk", sourceVersionId: "original" },
      { kind: "removal" },
    ];
    for (const [who, photoId, status, error] of [
      [other, photo.id, 404, "Not found."],
      [other, trashed.id, 409, inTrashMessage(trashed.name)],
      [owner, trashed.id, 404, "Not found."],
      [other, "no-such-photo", 404, "Not found."],
      [broke, photo.id, 404, "Not found."],
    ] as const) {
      for (const body of bodies) {
        const res = await post(who.cookie, photoId, body);
        expect(res.status, `${photoId} ${JSON.stringify(body)}`).toBe(status);
        expect(((await res.json()) as { error: string }).error).toBe(error);
      }
    }
    expect(await credits(other.id)).toBe(3);
    expect(await credits(owner.id)).toBe(2);
    for (const u of [owner, other, broke]) {
      expect(await db.select().from(jobs).where(eq(jobs.userId, u.id)).all()).toEqual([]);
      expect(await db.select().from(creditReservations).where(eq(creditReservations.userId, u.id)).all()).toEqual([]);
    }
    expect(provider.calls).toEqual([]);
    // The owner's own photo still stages, and once it is in the trash it is refused, saying so. (Trashed before its
    // job ran, the job itself would be refunded: ADR 0344.)
    const staged = await post(owner.cookie, photo.id, STAGE);
    expect(staged.status).toBe(202);
    await settle(owner.cookie, ((await staged.json()) as { job: { id: string } }).job.id);
    await db.update(photos).set({ trashedAt: Date.now() }).where(eq(photos.id, photo.id));
    expect((await post(owner.cookie, photo.id, STAGE)).status).toBe(409);
    expect(await credits(owner.id)).toBe(1);
  });

  it("refuses bad input with the spec's messages and reserves nothing", async () => {
    const user = await signedIn({ credits: 2 });
    const photo = await makePhoto(user.id);
    const cases: [unknown, number, string][] = [
      [{ kind: "stage", roomType: "Bedroom" }, 400, "Please select all required options"],
      [{ kind: "stage" }, 400, "Please select all required options"],
      [{ kind: "paint" }, 400, "Please select all required options"],
      [{ kind: "sky" }, 400, "Please select all required options"],
      [{ kind: "sky", skyType: "sunset" }, 400, "Invalid sky type"],
      ["{oops", 400, "The request body must be a JSON object."],
    ];
    for (const [body, status, error] of cases) {
      const res = await post(user.cookie, photo.id, body);
      expect(res.status).toBe(status);
      expect(((await res.json()) as { error: string }).error).toBe(error);
    }
    const anon = await post("", photo.id, STAGE);
    expect(anon.status).toBe(401);
    expect(((await anon.json()) as { error: string }).error).toBe("User not authenticated");
    expect(await credits(user.id)).toBe(2);
    expect(await db.select().from(jobs).where(eq(jobs.userId, user.id)).all()).toEqual([]);
  });

  it("a user without credits gets 402 Insufficient credits", async () => {
    const user = await signedIn();
    const photo = await makePhoto(user.id);
    const res = await post(user.cookie, photo.id, STAGE);
    expect(res.status).toBe(402);
    expect(((await res.json()) as { error: string }).error).toBe("Insufficient credits");
  });

  it("signed addresses: a forged or expired signature is refused", async () => {
    const user = await signedIn();
    const photo = await makePhoto(user.id);
    const good = await signedAddressOf(photo.id, "original", Date.now());
    const ok = await workerFetch(good);
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
    // The signature is `<key id>.<hex>`: one hex digit changed.
    const forged = good.replace(
      /(sig=[a-z0-9]+\.)([0-9a-f])/,
      (_m, key: string, c: string) => `${key}${c === "0" ? "1" : "0"}`,
    );
    expect(forged).not.toBe(good);
    expect((await workerFetch(forged)).status).toBe(403);
    const expired = await signedAddressOf(photo.id, "original", Date.now() - 60 * 60 * 1000);
    expect((await workerFetch(expired)).status).toBe(403);
    const otherPhoto = good.replace(photo.id, "someoneelse");
    expect((await workerFetch(otherPhoto)).status).toBe(403);
  });

  // An instance that dies mid-job leaves its job 'running' (or still 'queued')
  // with the credit held; written here directly, as that instance would have.
  async function orphanJob(userId: string, photoId: string, status: "queued" | "running", attempts = 1) {
    const jobId = `orphan-${status}-${photoId}`;
    const stub = userObject(env, userId);
    await stub.reserve(userId, jobId, 1, "AI stage");
    const now = Date.now();
    await db.insert(jobs).values({
      id: jobId,
      userId,
      photoId,
      kind: "stage",
      params: { roomType: "bedroom", designStyle: "modern" },
      status,
      attempts: status === "running" ? attempts : 0,
      createdAt: now,
      startedAt: status === "running" ? now : null,
    });
    await evictDurableObject(stub);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    return jobId;
  }

  it("a job left running by an evicted object is tried once more by the alarm, and charged once", async () => {
    const user = await signedIn({ credits: 2 });
    const photo = await makePhoto(user.id);
    const jobId = await orphanJob(user.id, photo.id, "running");
    const done = await settle(user.cookie, jobId);
    expect(done.job.status).toBe("succeeded");
    expect(provider.calls).toHaveLength(1);
    expect(await credits(user.id)).toBe(1);
  });

  it("a job lost twice is failed and refunded by the alarm, keeping no bytes", async () => {
    const user = await signedIn({ credits: 2 });
    const photo = await makePhoto(user.id);
    const jobId = await orphanJob(user.id, photo.id, "running", 2);
    const done = await settle(user.cookie, jobId);
    expect(done.job.status).toBe("failed");
    expect(done.job.error).toBe(INTERRUPTED_MESSAGE);
    expect(await credits(user.id)).toBe(2);
    expect(provider.calls).toEqual([]);
    expect((await storedKeys(user.id)).filter((k) => k.includes("/versions/"))).toEqual([]);
  });

  it("a job left queued by an evicted object is started by the alarm and charged once", async () => {
    const user = await signedIn({ credits: 2 });
    const photo = await makePhoto(user.id);
    const jobId = await orphanJob(user.id, photo.id, "queued");
    const done = await settle(user.cookie, jobId);
    expect(done.job.status).toBe("succeeded");
    expect(provider.calls).toHaveLength(1);
    expect(await credits(user.id)).toBe(1);
  });

  it("a job D1 refuses to mark running waits, uncalled and uncharged, and runs once it can, charged once", async () => {
    const user = await signedIn({ credits: 2 });
    const photo = await makePhoto(user.id);
    // The provider is called only once the job is marked running (the "early-start" shortcut, which called it while
    // the mark was in flight, did not earn its place: bench/results/report-shortcuts.md). Here D1 refuses that mark
    // until the trigger is dropped.
    await env.DB.exec(
      "CREATE TRIGGER test_refuse_running BEFORE UPDATE OF status ON jobs WHEN NEW.status = 'running' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END",
    );
    let jobId: string;
    const logged: unknown[][] = [];
    try {
      const res = await post(user.cookie, photo.id, STAGE);
      expect(res.status).toBe(202);
      jobId = ((await res.json()) as JobAnswer).job.id;
      await vi.waitFor(() => {
        logged.push(...takeConsoleErrors());
        expect(logged.length).toBeGreaterThanOrEqual(1);
      });
      // The mark was refused: no provider call, nothing stored, the job still queued and its credit held.
      expect(provider.calls).toEqual([]);
      expect((await storedKeys(user.id)).filter((k) => k.includes("/versions/"))).toEqual([]);
      const row = await db.select().from(jobs).where(eq(jobs.id, jobId)).get();
      expect(row?.status).toBe("queued");
      const held = await db.select().from(creditReservations).where(eq(creditReservations.key, jobId)).get();
      expect(held?.status).toBe("held");
    } finally {
      await env.DB.exec("DROP TRIGGER IF EXISTS test_refuse_running");
    }
    const done = await settle(user.cookie, jobId);
    expect(done.job.status).toBe("succeeded");
    expect(provider.calls).toHaveLength(1);
    // Each refused mark was logged once, and tried again by the alarm a moment later (not in a loop).
    logged.push(...takeConsoleErrors());
    expect(logged.length).toBeLessThanOrEqual(3);
    for (const args of logged) expect(String(args[0])).toContain("refused by the test");
    expect(await credits(user.id)).toBe(1);
    expect(await db.select().from(photoVersions).where(eq(photoVersions.jobId, jobId))).toHaveLength(1);
  });

  it("never sends the provider's key or address in an answer", async () => {
    const user = await signedIn({ credits: 1 });
    const photo = await makePhoto(user.id);
    const res = await post(user.cookie, photo.id, STAGE);
    const text = await res.text();
    const { job } = JSON.parse(text) as JobAnswer;
    await settle(user.cookie, job.id);
    const answers = [
      text,
      await (await workerFetch(`/api/jobs/${job.id}`, { headers: { Cookie: user.cookie } })).text(),
      await (await workerFetch(`/api/photos/${photo.id}/versions`, { headers: { Cookie: user.cookie } })).text(),
    ];
    for (const a of answers) {
      expect(a).not.toContain("test-provider-key");
      expect(a).not.toContain("provider.test");
    }
  });
});
