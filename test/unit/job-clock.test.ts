import { isCheckTiming } from "@workers/lib/structure/verdict";
import { JobClock, RecentTimings } from "@workers/objects/user/jobs/clock";
import { describe, expect, it } from "vitest";

// Issue 44 part 2: where a job's time goes. The object records each wait of a job's run as a span; a structure
// check's round trip is cut with the check Worker's own times (docs/decisions/0226-where-a-jobs-time-goes.md).

describe("a job's clock", () => {
  it("cuts a check's round trip into queue, the check Worker, its image calls and the answer", () => {
    const clock = new JobClock("job-1", "photo-1");
    clock.check(1000, 1100, { receivedAt: 1010, imagesStart: 1020, imagesEnd: 1070, imagesCalls: 2, judgedAt: 1090 });
    expect(clock.timings.spans.map((s) => [s.part, s.end - s.start, s.calls])).toEqual([
      ["checkQueue", 10, 1],
      ["checkWorker", 10, 1],
      ["images", 50, 2],
      ["checkWorker", 20, 1],
      ["checkAnswer", 10, 1],
    ]);
    // The spans tile the round trip: nothing counted twice, nothing left out.
    expect(clock.timings.spans.reduce((n, s) => n + s.end - s.start, 0)).toBe(100);
  });

  it("counts the source reduced beside the provider call (ADR 0322) as a call ahead, not a span on the job's path", () => {
    const clock = new JobClock("job-4", "photo-1");
    clock.check(0, 100, {
      receivedAt: 10,
      imagesStart: 20,
      imagesEnd: 50,
      imagesCalls: 1,
      judgedAt: 90,
      sourceAhead: true,
    });
    clock.check(200, 300, { receivedAt: 210, imagesStart: 220, imagesEnd: 260, imagesCalls: 2, judgedAt: 290 });
    expect(clock.timings.imagesAhead).toBe(1);
    expect(clock.timings.spans.filter((s) => s.part === "images").map((s) => s.calls)).toEqual([1, 2]);
  });

  it("counts a check without the Worker's times (timed out, or not judged) as waiting on the queue", () => {
    const clock = new JobClock("job-2", "photo-1");
    clock.check(0, 20_000, undefined);
    expect(clock.timings.spans).toEqual([{ part: "checkQueue", start: 0, end: 20_000, calls: 1 }]);
  });

  it("times a wait even when it fails, and marks spans after the job's end", async () => {
    const clock = new JobClock("job-3", "photo-1");
    await expect(clock.time("r2Write", () => Promise.reject(new Error("R2 down")))).rejects.toThrow("R2 down");
    expect(clock.timings.spans.map((s) => s.part)).toEqual(["r2Write"]);
    clock.end();
    expect(clock.timings.endedAt).not.toBeNull();
    await clock.time("images", async () => "thumb");
    expect(clock.timings.spans.at(-1)).toMatchObject({ part: "images", afterEnd: true });
  });

  it("keeps only the last jobs' timings", () => {
    const kept = new RecentTimings(2);
    for (const id of ["a", "b", "c"]) kept.keep(new JobClock(id, "p").timings);
    expect(kept.list().map((t) => t.jobId)).toEqual(["b", "c"]);
  });

  it("takes the check Worker's times only when every one is a finite number", () => {
    expect(isCheckTiming({ receivedAt: 1, imagesStart: 2, imagesEnd: 3, imagesCalls: 2, judgedAt: 4 })).toBe(true);
    expect(isCheckTiming({ receivedAt: 1, imagesStart: 2, imagesEnd: Number.NaN, imagesCalls: 2, judgedAt: 4 })).toBe(
      false,
    );
    expect(
      isCheckTiming({ receivedAt: 1, imagesStart: 2, imagesEnd: 3, imagesCalls: 1, judgedAt: 4, sourceAhead: true }),
    ).toBe(true);
    expect(
      isCheckTiming({ receivedAt: 1, imagesStart: 2, imagesEnd: 3, imagesCalls: 1, judgedAt: 4, sourceAhead: 1 }),
    ).toBe(false);
    expect(isCheckTiming("fast")).toBe(false);
    expect(isCheckTiming(null)).toBe(false);
  });
});
