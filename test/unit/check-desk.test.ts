import type { CheckRequest } from "@workers/lib/structure/verdict";
import { CheckDesk } from "@workers/objects/user/jobs/checks";
import { describe, expect, it } from "vitest";

// The object's side of the structure check (workers/objects/user/jobs/checks.ts, docs/decisions/0188): each check
// waits for exactly one answer, from the check Worker or from the timeout, and nothing else can settle it.

const CHECK = { userId: "u1", kind: "stage", sourceKey: "s", resultKey: "r" } as const;

/** A desk whose sent checks are kept for the test to answer. */
function deskKeeping(timeoutMs = 5_000) {
  const sent: CheckRequest[] = [];
  const desk = new CheckDesk(async (req) => {
    sent.push(req);
  }, timeoutMs);
  return { desk, sent };
}

async function until(cond: () => boolean) {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(cond()).toBe(true);
}

describe("the check desk", () => {
  it("sends the check with a fresh id and returns the answer that names it", async () => {
    const { desk, sent } = deskKeeping();
    const verdict = desk.request(CHECK);
    await until(() => sent.length === 1);
    expect(sent[0]).toMatchObject(CHECK);
    expect(sent[0]!.checkId).toMatch(/^[0-9a-f-]{36}$/);
    expect(desk.answer("another-id", { verdict: "refused", score: 2 })).toBe(false);
    expect(desk.answer(sent[0]!.checkId, { verdict: "refused", score: 1.25 })).toBe(true);
    expect(await verdict).toEqual({ verdict: "refused", score: 1.25 });
    expect(desk.waiting).toBe(0);
    // Answered once: a second answer (a retried message) finds nobody waiting.
    expect(desk.answer(sent[0]!.checkId, { verdict: "passed", score: 0.1 })).toBe(false);
  });

  it("takes an answer that arrives while the send is still under way (a local queue delivers inside send)", async () => {
    let desk: CheckDesk;
    const answered: boolean[] = [];
    desk = new CheckDesk(async (req) => {
      answered.push(desk.answer(req.checkId, { verdict: "passed", score: 0.2 }));
    });
    expect(await desk.request(CHECK)).toEqual({ verdict: "passed", score: 0.2 });
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
      { verdict: "kept", score: 1 },
      { verdict: "passed", score: null },
      { verdict: "refused", score: Number.NaN },
      { verdict: "unchecked", score: 3 },
    ]) {
      expect(desk.answer(id, bad)).toBe(false);
    }
    expect(desk.waiting).toBe(1);
    expect(desk.answer(id, { verdict: "unchecked", score: null })).toBe(true);
    expect(await verdict).toEqual({ verdict: "unchecked", score: null });
  });

  it("counts a check nobody answers as unchecked after the timeout, and drops the late answer", async () => {
    const { desk, sent } = deskKeeping(80);
    const started = Date.now();
    expect(await desk.request(CHECK)).toEqual({ verdict: "unchecked", score: null });
    expect(Date.now() - started).toBeGreaterThanOrEqual(75);
    expect(desk.waiting).toBe(0);
    expect(desk.answer(sent[0]!.checkId, { verdict: "refused", score: 2 })).toBe(false);
  });

  it("counts a check that cannot be sent as unchecked at once", async () => {
    const desk = new CheckDesk(async () => {
      throw new Error("Queue send failed: 503");
    }, 60_000);
    const started = Date.now();
    expect(await desk.request(CHECK)).toEqual({ verdict: "unchecked", score: null });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(desk.waiting).toBe(0);
  });

  it("a send that hangs does not hold the job past the timeout", async () => {
    const desk = new CheckDesk(() => new Promise<void>(() => {}), 60);
    expect(await desk.request(CHECK)).toEqual({ verdict: "unchecked", score: null });
    expect(desk.waiting).toBe(0);
  });
});
