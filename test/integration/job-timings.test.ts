import { env } from "cloudflare:workers";
import { providerSize } from "@test/fixtures/structure/edit";
import { decodeImage, encodeJpeg } from "@test/fixtures/structure/pixels";
import { api, onPlan, photosOf, settleJob } from "@test/support/listing";
import { stubProvider } from "@test/support/provider-stub";
import { ROOM_SOURCE, useRoomAsOriginal } from "@test/support/structure-room";
import { userObject } from "@workers/objects/client";
import { describe, expect, it } from "vitest";

// Issue 44 part 2: where a job's time goes (docs/decisions/0226-where-a-jobs-time-goes.md). A staging job runs the
// whole path (the app's object, the provider stubbed at the isolate's fetch, the queue, the check Worker, its answer
// by RPC, the commit) and the user's object keeps the spans of what the run waited on, the check Worker's own times
// among them, for the bench's dev route.

const TRUE = encodeJpeg(providerSize(decodeImage(ROOM_SOURCE), 768, 512, "stretch"), 85);

/** Stages the photo through the page's route, waits for the job to succeed, and answers its recorded timings. */
async function stagedTimings(user: { id: string; cookie: string }, photoId: string) {
  const res = await api(user.cookie, "POST", `/api/photos/${photoId}/jobs`, {
    kind: "stage",
    roomType: "Living Room",
    designStyle: "Modern",
  });
  expect(res.status).toBe(202);
  const jobId = res.body.job.id as string;
  expect((await settleJob(user.cookie, jobId)).status).toBe("succeeded");
  return (await userObject(env, user.id).jobTimings()).find((t) => t.jobId === jobId);
}

describe("a job's timings", () => {
  it("records each wait of the run, the check cut by the check Worker's own times, inside the run's window", async () => {
    const provider = stubProvider();
    provider.answer = () => [TRUE];
    const user = await onPlan("Starter plan", 2);
    const [photo] = await photosOf(user.id, 1);
    await useRoomAsOriginal(photo!);
    const timings = await stagedTimings(user, photo!.id);
    expect(timings).toBeDefined();
    const { spans, startedAt, endedAt } = timings!;
    expect(timings!.photoId).toBe(photo!.id);
    expect(endedAt).not.toBeNull();
    const onPath = spans.filter((s) => !s.afterEnd);
    const parts = new Set(onPath.map((s) => s.part));
    for (const part of ["slotWait", "d1Write", "providerCall", "r2Write", "checkQueue", "checkWorker", "checkAnswer"])
      expect(parts, part).toContain(part);
    // Both pictures went through the image service: the result on the job's path, the source there too or beside the
    // provider call (ADR 0322; which one wins that race depends on the stub's speed), sent back with the answer.
    const calls = onPath.filter((s) => s.part === "images").reduce((n, s) => n + s.calls, 0);
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(calls + (timings!.imagesAhead ?? 0)).toBe(2);
    for (const s of onPath) {
      expect(s.end, s.part).toBeGreaterThanOrEqual(s.start);
      expect(s.start, s.part).toBeGreaterThanOrEqual(startedAt);
      expect(s.end, s.part).toBeLessThanOrEqual(endedAt!);
    }
  });

  it("a second job of the same photo reduces only its result: the source's gray was kept beside its original", async () => {
    const provider = stubProvider();
    provider.answer = () => [TRUE];
    const user = await onPlan("Starter plan", 3);
    const [photo] = await photosOf(user.id, 1);
    await useRoomAsOriginal(photo!);
    await stagedTimings(user, photo!.id);
    expect(await env.PHOTOS.head(`${photo!.originalKey}.gray`)).not.toBeNull();
    const second = (await stagedTimings(user, photo!.id))!;
    const onPath = second.spans.filter((s) => !s.afterEnd && s.part === "images");
    expect(onPath.reduce((n, s) => n + s.calls, 0)).toBe(1);
    expect(second.imagesAhead).toBe(1);
  });
});
