import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { jobs, photoVersions } from "@db/schema";
import { db, signedIn } from "@test/support/factories";
import { balance, photosOf } from "@test/support/listing";
import { stubProvider } from "@test/support/provider-stub";
import { ROOM_SOURCE, roomAnswer, useRoomAsOriginal, windowGoneAnswer } from "@test/support/structure-room";
import checker, { type CheckerEnv } from "@workers/checker/index";
import { sourceGrayKey } from "@workers/lib/source-gray";
import { type Checked, type CheckRequest, type CheckTiming, STALE_CHECK_MS } from "@workers/lib/structure/verdict";
import { userObject } from "@workers/objects/client";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";

// The check Worker (workers/checker, docs/decisions/0188-the-check-off-the-object.md): its queue handler, run here
// against the real R2 and Images bindings with the user's object replaced by a recorder, and the object's answer
// side, which must drop answers nobody waits for. The jobs' own tests (structure-jobs, masks-structure,
// listing-look-structure) run the whole path: the app's object, the queue, the check Worker and the RPC back.

interface Delivered {
  acked: boolean;
  retried: boolean;
}

/** Runs the check Worker's handler on `bodies`; returns what it answered each object and did with each message. */
async function consume(bodies: unknown[], reach: "ok" | "fails" = "ok", sentAt = new Date()) {
  const answers: { userId: string; checkId: string; checked: Checked; timing?: CheckTiming }[] = [];
  const delivered: Delivered[] = bodies.map(() => ({ acked: false, retried: false }));
  const fakeObjects = {
    idFromName: (name: string) => name,
    get: (userId: string) => ({
      structureChecked: async (checkId: string, checked: Checked, timing?: CheckTiming) => {
        if (reach === "fails") throw new Error("Durable Object reset because its code was updated.");
        answers.push({ userId, checkId, checked, ...(timing ? { timing } : {}) });
        return true;
      },
    }),
  };
  const batch = {
    queue: "stagewise-structure-checks",
    messages: bodies.map((body, i) => ({
      id: `m${i}`,
      timestamp: sentAt,
      attempts: 1,
      body,
      ack: () => {
        delivered[i]!.acked = true;
      },
      retry: () => {
        delivered[i]!.retried = true;
      },
    })),
    ackAll: () => {},
    retryAll: () => {},
  } as unknown as MessageBatch<unknown>;
  const checkerEnv = { PHOTOS: env.PHOTOS, IMAGES: env.IMAGES, APP_ENV: "test", USER_OBJECT: fakeObjects };
  await checker.queue(batch, checkerEnv as unknown as CheckerEnv);
  // A batch's checks are judged at once (docs/decisions/0240): their answers come in the order they were judged.
  const arrived = answers.map((a) => a.checkId);
  const at = (checkId: string) => bodies.findIndex((b) => (b as { checkId?: string } | null)?.checkId === checkId);
  answers.sort((a, b) => at(a.checkId) - at(b.checkId));
  return { answers, delivered, arrived };
}

async function stored(bytes: Uint8Array): Promise<string> {
  const key = `test-check/${crypto.randomUUID()}`;
  await env.PHOTOS.put(key, bytes);
  return key;
}

function request(over: Partial<CheckRequest>): CheckRequest {
  return { checkId: crypto.randomUUID(), userId: "user-1", kind: "stage", sourceKey: "", resultKey: "", ...over };
}

describe("the check Worker's queue handler", () => {
  it("drops a check sent so long ago that nobody waits for it: acknowledged, not judged, nobody answered", async () => {
    const req = request({ resultKey: await stored(new Uint8Array([1, 2, 3])) });
    const old = new Date(Date.now() - STALE_CHECK_MS - 1000);
    const { answers, delivered } = await consume([req, { prepare: "source", sourceKey: "x" }], "ok", old);
    expect(answers).toEqual([]);
    expect(delivered).toEqual([
      { acked: true, retried: false },
      { acked: true, retried: false },
    ]);
  });

  it("judges a true result passed and a result without its window flagged, saying where, and answers each user's object", async () => {
    const source = await stored(ROOM_SOURCE);
    const same = request({ sourceKey: source, resultKey: await stored(roomAnswer("stage")) });
    const gone = request({ userId: "user-2", sourceKey: source, resultKey: await stored(windowGoneAnswer("stage")) });
    const { answers, delivered } = await consume([same, gone]);
    // Production's limits refuse nothing (docs/decisions/0215-flag-when-unsure.md): over the mark is flagged.
    expect(answers.map((a) => [a.userId, a.checkId, a.checked.verdict])).toEqual([
      ["user-1", same.checkId, "passed"],
      ["user-2", gone.checkId, "flagged"],
    ]);
    expect(answers[0]!.checked.reasons).toEqual([]);
    expect(answers[1]!.checked.score).toBeGreaterThan(1);
    expect(answers[1]!.checked.reasons.length).toBeGreaterThan(0);
    for (const place of answers[1]!.checked.reasons) expect(place).toMatch(/^(upper|lower) (left|centre|right)$/);
    expect(delivered).toEqual([
      { acked: true, retried: false },
      { acked: true, retried: false },
    ]);
  });

  it("judges a batch's checks at once: a slow check does not hold the one after it", async () => {
    const source = await stored(ROOM_SOURCE);
    const slow = request({ sourceKey: source, resultKey: await stored(roomAnswer("stage")), delayMs: 1500 });
    const quick = request({ sourceKey: source, resultKey: await stored(roomAnswer("stage")) });
    const { answers, arrived, delivered } = await consume([slow, quick]);
    expect(arrived).toEqual([quick.checkId, slow.checkId]);
    expect(answers.map((a) => a.checked.verdict)).toEqual(["passed", "passed"]);
    expect(delivered.every((d) => d.acked && !d.retried)).toBe(true);
  });

  it("judges by the limits a test's request carries: the same result refused when its kind refuses over 1", async () => {
    const source = await stored(ROOM_SOURCE);
    const result = await stored(windowGoneAnswer("stage"));
    const refusing = request({ sourceKey: source, resultKey: result, limits: { mark: 1, refuse: 1 } });
    const banded = request({ sourceKey: source, resultKey: result, limits: { mark: 1, refuse: null } });
    const { answers } = await consume([refusing, banded]);
    expect(answers.map((a) => a.checked.verdict)).toEqual(["refused", "flagged"]);
    expect(answers[0]!.checked.score).toBe(answers[1]!.checked.score);
  });

  it("answers unchecked for a missing picture, one too small to judge, or one that is not an image", async () => {
    const source = await stored(ROOM_SOURCE);
    const cases = [
      request({ sourceKey: source, resultKey: "test-check/never-stored" }),
      request({ sourceKey: "test-check/gone", resultKey: source }),
      request({ sourceKey: source, resultKey: await stored(new TextEncoder().encode("not an image")) }),
    ];
    const { answers, delivered } = await consume(cases);
    expect(answers.map((a) => a.checked)).toEqual(
      cases.map(() => ({ verdict: "unchecked", score: null, reasons: [], cause: "unjudgeable" })),
    );
    expect(delivered.every((d) => d.acked)).toBe(true);
  });

  it("drops a message that is not a check, answering nobody", async () => {
    const { answers, delivered } = await consume([
      null,
      "check this",
      { checkId: "c", userId: "u", kind: "brush", sourceKey: "a", resultKey: "b" },
      { checkId: "c", userId: "", kind: "stage", sourceKey: "a", resultKey: "b" },
    ]);
    expect(answers).toEqual([]);
    expect(delivered.every((d) => d.acked && !d.retried)).toBe(true);
  });

  it("retries a message whose answer could not reach the object", async () => {
    const source = await stored(ROOM_SOURCE);
    const { delivered } = await consume([request({ sourceKey: source, resultKey: source })], "fails");
    expect(delivered).toEqual([{ acked: false, retried: true }]);
  });
});

describe("the source reduced beside the provider call (ADR 0322)", () => {
  /** A photo's original, under the key every original has. */
  async function original(bytes: Uint8Array, userId = "user-1"): Promise<string> {
    const key = `photos/${userId}/${crypto.randomUUID().replaceAll("-", "")}/original`;
    await env.PHOTOS.put(key, bytes);
    return key;
  }

  it("keeps an original's gray; its checks then reduce only the result, with the verdict and score of a full check", async () => {
    const bare = await original(ROOM_SOURCE);
    const ahead = await original(ROOM_SOURCE);
    const [pass, gone] = [await stored(roomAnswer("stage")), await stored(windowGoneAnswer("stage"))];
    // Without a copy: both pictures reduced, and the copy kept for the next check of that original.
    const checkBoth = (sourceKey: string) =>
      consume([request({ sourceKey, resultKey: pass }), request({ sourceKey, resultKey: gone })]);
    const full = await checkBoth(bare);
    expect(full.answers.map((a) => [a.timing?.imagesCalls, a.timing?.sourceAhead])).toEqual([
      [2, undefined],
      [2, undefined],
    ]);
    expect(await env.PHOTOS.head(sourceGrayKey(bare)!)).not.toBeNull();
    // Reduced ahead: the prepare message answers nobody and is acknowledged.
    const prepared = await consume([{ prepare: "source", sourceKey: ahead }]);
    expect(prepared.answers).toEqual([]);
    expect(prepared.delivered).toEqual([{ acked: true, retried: false }]);
    const copy = await env.PHOTOS.get(sourceGrayKey(ahead)!);
    expect(copy?.customMetadata?.sourceEtag).toBe((await env.PHOTOS.head(ahead))!.etag);
    const quick = await checkBoth(ahead);
    expect(quick.answers.map((a) => [a.timing?.imagesCalls, a.timing?.sourceAhead])).toEqual([
      [1, true],
      [1, true],
    ]);
    expect(quick.answers.map((a) => a.checked.verdict)).toEqual(["passed", "flagged"]);
    expect(quick.answers.map((a) => [a.checked.score, a.checked.reasons])).toEqual(
      full.answers.map((a) => [a.checked.score, a.checked.reasons]),
    );
  });

  it("never uses a copy of other bytes: a replaced original, or a copy that is not a gray, is reduced again", async () => {
    const key = await original(windowGoneAnswer("stage"));
    await consume([{ prepare: "source", sourceKey: key }]);
    const stale = await env.PHOTOS.get(sourceGrayKey(key)!);
    const staleBytes = new Uint8Array(await stale!.arrayBuffer());
    // The original replaced under the same key (an original never is; the etag is what makes it safe if one were).
    await env.PHOTOS.put(key, ROOM_SOURCE);
    const result = await stored(roomAnswer("stage"));
    const replaced = await consume([request({ sourceKey: key, resultKey: result })]);
    expect(replaced.answers[0]!.timing).toMatchObject({ imagesCalls: 2 });
    expect(replaced.answers[0]!.checked.verdict).toBe("passed");
    const renewed = await env.PHOTOS.get(sourceGrayKey(key)!);
    expect(renewed?.customMetadata?.sourceEtag).toBe((await env.PHOTOS.head(key))!.etag);
    // A copy naming the right etag but holding anything else (cut short): not used, reduced again.
    await env.PHOTOS.put(sourceGrayKey(key)!, staleBytes.subarray(0, 100), {
      customMetadata: { sourceEtag: (await env.PHOTOS.head(key))!.etag },
    });
    const broken = await consume([request({ sourceKey: key, resultKey: result })]);
    expect(broken.answers[0]!.timing).toMatchObject({ imagesCalls: 2 });
    expect(broken.answers[0]!.checked.verdict).toBe("passed");
  });

  it("keeps nothing for a key that is not an original, a missing one, or a picture too small or not an image", async () => {
    const version = `photos/user-1/${crypto.randomUUID().replaceAll("-", "")}/versions/v1.jpg`;
    await env.PHOTOS.put(version, ROOM_SOURCE);
    const missing = `photos/user-1/${crypto.randomUUID().replaceAll("-", "")}/original`;
    const text = await original(new TextEncoder().encode("not an image"));
    const keys = [version, missing, text, "../photos/x/original", ""];
    const { answers, delivered } = await consume(keys.map((sourceKey) => ({ prepare: "source", sourceKey })));
    expect(answers).toEqual([]);
    expect(delivered.every((d) => d.acked && !d.retried)).toBe(true);
    expect(await env.PHOTOS.head(`${version}.gray`)).toBeNull();
    for (const key of [missing, text]) expect(await env.PHOTOS.head(sourceGrayKey(key)!)).toBeNull();
  });
});

describe("answers on the object's side", () => {
  it("an answer nobody waits for (the object restarted mid-check) changes nothing; the alarm's retry is checked anew", async () => {
    const provider = stubProvider();
    provider.answer = () => [roomAnswer("stage")];
    const user = await signedIn({ credits: 2 });
    const stub = userObject(env, user.id);
    // Unknown ids and malformed answers: false, and nothing moved.
    expect(await stub.structureChecked(crypto.randomUUID(), { verdict: "refused", score: 3, reasons: [] })).toBe(false);
    expect(await stub.structureChecked(crypto.randomUUID(), "refused")).toBe(false);
    expect(await balance(user.id)).toBe(2);
    // A job its evicted object left running (its check in flight): the alarm runs it again, and its new check
    // answers the new instance; the old check's answer, arriving late, is dropped.
    const [photo] = await photosOf(user.id, 1);
    await useRoomAsOriginal(photo!);
    const id = `checking-${photo!.id}`;
    await stub.reserve(user.id, id, 1, "AI stage");
    const now = Date.now();
    await db.insert(jobs).values({
      id,
      userId: user.id,
      photoId: photo!.id,
      kind: "stage",
      params: { roomType: "Living Room", designStyle: "Modern" },
      status: "running",
      attempts: 1,
      createdAt: now,
      startedAt: now,
    });
    await evictDurableObject(stub);
    expect(await stub.structureChecked(crypto.randomUUID(), { verdict: "refused", score: 3, reasons: [] })).toBe(false);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    let job = await db.select().from(jobs).where(eq(jobs.id, id)).get();
    for (let i = 0; i < 400 && job?.status === "running"; i++) {
      await new Promise((r) => setTimeout(r, 25));
      job = await db.select().from(jobs).where(eq(jobs.id, id)).get();
    }
    expect(job).toMatchObject({ status: "succeeded", attempts: 2 });
    expect(provider.calls).toHaveLength(1);
    expect(await balance(user.id)).toBe(1);
    const version = await db.select().from(photoVersions).where(eq(photoVersions.jobId, id)).get();
    expect(version?.structureVerdict).toBe("passed");
  });
});
