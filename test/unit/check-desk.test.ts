import { type CheckRequest, isPrepareRequest, type PrepareRequest } from "@workers/lib/structure/verdict";
import { CheckDesk } from "@workers/objects/user/jobs/checks";
import { describe, expect, it } from "vitest";

// The object's side of the structure check (workers/objects/user/jobs/checks.ts, docs/decisions/0188): each check
// waits for exactly one answer, from the check Worker or from the timeout, and nothing else can settle it.

const CHECK = { userId: "u1", kind: "stage", sourceKey: "s", resultKey: "r" } as const;

/** A desk whose sent checks are kept for the test to answer. */
function deskKeeping(timeoutMs = 5_000) {
  const sent: CheckRequest[] = [];
  const prepared: PrepareRequest[] = [];
  const desk = new CheckDesk(async (req) => {
    if (isPrepareRequest(req)) prepared.push(req);
    else sent.push(req);
  }, timeoutMs);
  return { desk, sent, prepared };
}

async function until(cond: () => boolean) {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(cond()).toBe(true);
}

describe("the check desk", () => {
  it("sends an original ahead to be reduced (ADR 0322), never a version or another key, nor while checks are stopped", async () => {
    const { desk, prepared } = deskKeeping();
    desk.prepare("photos/u1/p1/original");
    desk.prepare("photos/u1/p1/versions/v1.jpg");
    desk.prepare("photos/u1/../u2/p1/original");
    desk.prepare("elsewhere/original");
    desk.stoppedForTesting = 1_000;
    desk.prepare("photos/u1/p2/original");
    await until(() => prepared.length === 1);
    await new Promise((r) => setTimeout(r, 20));
    expect(prepared).toEqual([{ prepare: "source", sourceKey: "photos/u1/p1/original" }]);
  });

  it("a source that cannot be sent ahead is only logged: nothing throws, and the check is still sent", async () => {
    const sent: unknown[] = [];
    const desk = new CheckDesk(async (req) => {
      if (isPrepareRequest(req)) throw new Error("queue full");
      sent.push(req);
    }, 50);
    expect(() => desk.prepare("photos/u1/p1/original")).not.toThrow();
    void desk.request(CHECK);
    await until(() => sent.length === 1);
  });

  it("sends the check with a fresh id and returns the answer that names it", async () => {
    const { desk, sent } = deskKeeping();
    const verdict = desk.request(CHECK);
    await until(() => sent.length === 1);
    expect(sent[0]).toMatchObject(CHECK);
    expect(sent[0]!.checkId).toMatch(/^[0-9a-f-]{36}$/);
    expect(desk.answer("another-id", { verdict: "refused", score: 2, reasons: [] })).toBe(false);
    expect(desk.answer(sent[0]!.checkId, { verdict: "flagged", score: 1.25, reasons: ["upper left"] })).toBe(true);
    expect(await verdict).toEqual({ verdict: "flagged", score: 1.25, reasons: ["upper left"], mapped: false });
    expect(desk.waiting).toBe(0);
    // Answered once: a second answer (a retried message) finds nobody waiting.
    expect(desk.answer(sent[0]!.checkId, { verdict: "passed", score: 0.1, reasons: [] })).toBe(false);
  });

  it("sends a kind's test limits with its checks when the user's object has them, and none otherwise", async () => {
    const { desk, sent } = deskKeeping(50);
    void desk.request(CHECK);
    desk.limitsForTesting = { stage: { mark: 1, refuse: 1 } };
    void desk.request(CHECK);
    void desk.request({ ...CHECK, kind: "sky" });
    await until(() => sent.length === 3);
    expect(sent.map((r) => r.limits)).toEqual([undefined, { mark: 1, refuse: 1 }, undefined]);
  });

  it("takes an answer that arrives while the send is still under way (a local queue delivers inside send)", async () => {
    let desk: CheckDesk;
    const answered: boolean[] = [];
    desk = new CheckDesk(async (req) => {
      if (isPrepareRequest(req)) return;
      answered.push(desk.answer(req.checkId, { verdict: "passed", score: 0.2, reasons: [] }));
    });
    expect(await desk.request(CHECK)).toEqual({ verdict: "passed", score: 0.2, reasons: [], mapped: false });
    expect(answered).toEqual([true]);
  });

  it("ignores answers that are not verdicts, and keeps waiting for a real one", async () => {
    const { desk, sent } = deskKeeping();
    const verdict = desk.request(CHECK);
    await until(() => sent.length === 1);
    const id = sent[0]!.checkId;
    for (const bad of [
      null,
      "passed",
      { verdict: "kept", score: 1, reasons: [] },
      { verdict: "passed", score: null, reasons: [] },
      { verdict: "refused", score: Number.NaN, reasons: [] },
      { verdict: "unchecked", score: 3, reasons: [] },
      // Before the three outcomes an answer had no reasons: not a verdict now.
      { verdict: "refused", score: 2 },
      { verdict: "flagged", score: 2, reasons: "upper left" },
      { verdict: "flagged", score: 2, reasons: [7] },
      { verdict: "flagged", score: 2, reasons: ["x".repeat(81)] },
      { verdict: "flagged", score: 2, reasons: Array.from({ length: 9 }, () => "upper left") },
      { verdict: "unchecked", score: null, reasons: ["upper left"] },
    ]) {
      expect(desk.answer(id, bad)).toBe(false);
    }
    expect(desk.waiting).toBe(1);
    expect(desk.answer(id, { verdict: "unchecked", score: null, reasons: [] })).toBe(true);
    // An unchecked answer without a cause (a check Worker of the release before) counts as failed (ADR 0262).
    expect(await verdict).toEqual({ verdict: "unchecked", score: null, reasons: [], cause: "failed", mapped: false });
  });

  it("counts a check nobody answers as unchecked after the timeout, and drops the late answer", async () => {
    const { desk, sent } = deskKeeping(80);
    const started = Date.now();
    expect(await desk.request(CHECK)).toEqual({
      verdict: "unchecked",
      score: null,
      reasons: [],
      cause: "timeout",
      mapped: false,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(75);
    expect(desk.waiting).toBe(0);
    expect(desk.answer(sent[0]!.checkId, { verdict: "refused", score: 2, reasons: [] })).toBe(false);
  });

  it("counts a check that cannot be sent as unchecked at once", async () => {
    const desk = new CheckDesk(async () => {
      throw new Error("Queue send failed: 503");
    }, 60_000);
    const started = Date.now();
    expect(await desk.request(CHECK)).toEqual({
      verdict: "unchecked",
      score: null,
      reasons: [],
      cause: "unsent",
      mapped: false,
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(desk.waiting).toBe(0);
  });

  it("a send that hangs does not hold the job past the timeout", async () => {
    const desk = new CheckDesk(() => new Promise<void>(() => {}), 60);
    expect(await desk.request(CHECK)).toEqual({
      verdict: "unchecked",
      score: null,
      reasons: [],
      cause: "timeout",
      mapped: false,
    });
    expect(desk.waiting).toBe(0);
  });
});
