import { api, balance, expectSettled, onPlan, photosOf, rowsOf, settleJob } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { SUBMISSION_REUSED } from "@workers/objects/user/jobs/job-queue";
import { submittedJobIds } from "@workers/services/jobs/start-queued";
import { beforeEach, describe, expect, it } from "vitest";

// A page's job request sent again with its key (the Idempotency-Key header of POST /api/photos/:id/jobs): the
// answer was lost on a phone's bad connection and app/lib/use-job.ts sends the request again. The first sending
// starts the job and reserves its credit; every later one is answered with that job and charges nothing.
// docs/decisions/0148-page-job-requests-sent-once.md

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const STAGE = { kind: "stage", roomType: "Bedroom", designStyle: "Modern" };

function stage(cookie: string, photoId: string, key: string | null, extra: Record<string, unknown> = {}) {
  return api(
    cookie,
    "POST",
    `/api/photos/${photoId}/jobs`,
    { ...STAGE, ...extra },
    key === null ? {} : { "Idempotency-Key": key },
  );
}

describe("a page's job request sent twice", () => {
  it("one after the other, or both at once: one job, one credit, one provider call", async () => {
    const user = await onPlan(null, 5);
    const [photo] = await photosOf(user.id, 1);
    const a = await stage(user.cookie, photo!.id, "key-one");
    const b = await stage(user.cookie, photo!.id, "key-one");
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(b.body.job.id).toBe(a.body.job.id);
    expect(a.headers.get("Idempotent-Replayed")).toBeNull();
    expect(b.headers.get("Idempotent-Replayed")).toBe("true");
    expect(b.body.credits).toBe(4);

    const [c, d] = await Promise.all([
      stage(user.cookie, photo!.id, "key-two"),
      stage(user.cookie, photo!.id, "key-two"),
    ]);
    expect([c.status, d.status]).toEqual([202, 202]);
    expect(d.body.job.id).toBe(c.body.job.id);
    expect(c.body.job.id).not.toBe(a.body.job.id);

    expect((await settleJob(user.cookie, a.body.job.id)).status).toBe("succeeded");
    expect((await settleJob(user.cookie, c.body.job.id)).status).toBe("succeeded");
    // Sent again after it succeeded: the same job, as it stands now, and still no charge.
    const again = await stage(user.cookie, photo!.id, "key-one");
    expect(again.status).toBe(202);
    expect(again.body.job).toMatchObject({ id: a.body.job.id, status: "succeeded" });

    expect((await rowsOf(user.id)).jobs).toHaveLength(2);
    expect(provider.calls).toHaveLength(2);
    expect(await balance(user.id)).toBe(3);
    await expectSettled(user.id);
  });

  it("variations sent twice: the same jobs, each result charged once", async () => {
    const user = await onPlan("Small plan", 5);
    const [photo] = await photosOf(user.id, 1);
    const a = await stage(user.cookie, photo!.id, "variations-key", { variations: 3 });
    const b = await stage(user.cookie, photo!.id, "variations-key", { variations: 3 });
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(a.body.jobIds).toHaveLength(3);
    expect(b.body.jobIds).toEqual(a.body.jobIds);
    expect(a.body.jobIds).toEqual(submittedJobIds("page-job", user.id, "variations-key", 3));
    for (const id of a.body.jobIds) expect((await settleJob(user.cookie, id)).status).toBe("succeeded");
    expect((await rowsOf(user.id)).jobs).toHaveLength(3);
    expect(await balance(user.id)).toBe(2);
    await expectSettled(user.id);
  });

  it("sent again once its credit is spent: its job, not a refusal for want of credits", async () => {
    const user = await onPlan(null, 1);
    const [photo] = await photosOf(user.id, 1);
    const a = await stage(user.cookie, photo!.id, "last-credit");
    expect(a.status).toBe(202);
    expect(a.body.credits).toBe(0);
    const b = await stage(user.cookie, photo!.id, "last-credit");
    expect(b.status).toBe(202);
    expect(b.body.job.id).toBe(a.body.job.id);
    // A new request without credits is still refused.
    const c = await stage(user.cookie, photo!.id, "another-key");
    expect(c.status).toBe(402);
    await settleJob(user.cookie, a.body.job.id);
    expect(await balance(user.id)).toBe(0);
    await expectSettled(user.id);
  });

  it("the same key with another request is 409 and writes nothing; another person's same key is their own job", async () => {
    const alice = await onPlan(null, 5);
    const bob = await onPlan(null, 5);
    const [alicePhoto, otherPhoto] = await photosOf(alice.id, 2);
    const [bobPhoto] = await photosOf(bob.id, 1);
    const first = await stage(alice.cookie, alicePhoto!.id, "shared-key");
    expect(first.status).toBe(202);
    await settleJob(alice.cookie, first.body.job.id);
    const before = await rowsOf(alice.id);

    for (const [photoId, extra] of [
      [alicePhoto!.id, { roomType: "Kitchen" }],
      [alicePhoto!.id, { designStyle: "Coastal" }],
      [otherPhoto!.id, {}],
      [alicePhoto!.id, { variations: 2 }],
    ] as const) {
      const res = await stage(alice.cookie, photoId, "shared-key", extra);
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ ok: false, code: "conflict", error: SUBMISSION_REUSED });
    }
    expect(await rowsOf(alice.id)).toEqual(before);
    expect(await balance(alice.id)).toBe(4);

    const bobs = await stage(bob.cookie, bobPhoto!.id, "shared-key");
    expect(bobs.status).toBe(202);
    expect(bobs.body.job.id).not.toBe(first.body.job.id);
    // Bob cannot reach Alice's job through her key either: her photo is not his to name (404 before any key is read,
    // since the access rule of ADR 0280), and his request names his own jobs only.
    const probe = await stage(bob.cookie, alicePhoto!.id, "shared-key");
    expect(probe.status).toBe(404);
    await settleJob(bob.cookie, bobs.body.job.id);
    expect(await balance(bob.id)).toBe(4);
    await expectSettled(alice.id);
    await expectSettled(bob.id);
  });

  it("a malformed key is 400 and writes nothing; without a key every sending is a job of its own", async () => {
    const user = await onPlan(null, 5);
    const [photo] = await photosOf(user.id, 1);
    const before = await rowsOf(user.id);
    for (const bad of ["", "with space", "x".repeat(256)]) {
      const res = await stage(user.cookie, photo!.id, bad);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ ok: false, code: "invalid" });
    }
    expect(await rowsOf(user.id)).toEqual(before);

    const a = await stage(user.cookie, photo!.id, null);
    const b = await stage(user.cookie, photo!.id, null);
    expect(b.body.job.id).not.toBe(a.body.job.id);
    await settleJob(user.cookie, a.body.job.id);
    await settleJob(user.cookie, b.body.job.id);
    expect(await balance(user.id)).toBe(3);
    await expectSettled(user.id);
  });
});

// The re-roll (POST /api/jobs/:id/reroll) carries a key the same way: quick-dialog.tsx sends it through startJob.
describe("a re-roll sent twice", () => {
  async function staged(user: { cookie: string }, photoId: string) {
    const res = await stage(user.cookie, photoId, null);
    expect(res.status).toBe(202);
    expect((await settleJob(user.cookie, res.body.job.id)).status).toBe("succeeded");
    return res.body.job.id as string;
  }
  function reroll(cookie: string, jobId: string, key: string | null, body: Record<string, unknown> = {}) {
    return api(cookie, "POST", `/api/jobs/${jobId}/reroll`, body, key === null ? {} : { "Idempotency-Key": key });
  }

  it("the free re-roll sent again after it was taken: its job, not the paid price; a paid one sent twice at once is charged once", async () => {
    const user = await onPlan(null, 5);
    const [photo] = await photosOf(user.id, 1);
    const jobId = await staged(user, photo!.id);

    const free = await reroll(user.cookie, jobId, "reroll-free");
    expect(free.status).toBe(202);
    expect(free.body).toMatchObject({ cost: 0, credits: 4 });
    expect(free.body.job.id).toBe(submittedJobIds("reroll", user.id, "reroll-free", 1)[0]);
    // The free re-roll is taken now, so a new request is quoted 1 credit; the resend is not that request.
    const resent = await reroll(user.cookie, jobId, "reroll-free");
    expect(resent.status).toBe(202);
    expect(resent.headers.get("Idempotent-Replayed")).toBe("true");
    expect(resent.body).toMatchObject({ job: { id: free.body.job.id }, cost: 0, credits: 4 });
    expect((await settleJob(user.cookie, free.body.job.id)).status).toBe("succeeded");
    const afterSettled = await reroll(user.cookie, jobId, "reroll-free");
    expect(afterSettled.body.job).toMatchObject({ id: free.body.job.id, status: "succeeded" });

    const [a, b] = await Promise.all([
      reroll(user.cookie, jobId, "reroll-paid", { acceptCharge: true }),
      reroll(user.cookie, jobId, "reroll-paid", { acceptCharge: true }),
    ]);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(b.body.job.id).toBe(a.body.job.id);
    expect([a.body.cost, b.body.cost]).toEqual([1, 1]);
    expect((await settleJob(user.cookie, a.body.job.id)).status).toBe("succeeded");

    expect((await rowsOf(user.id)).jobs).toHaveLength(3);
    expect(provider.calls).toHaveLength(3);
    expect(await balance(user.id)).toBe(3);
    await expectSettled(user.id);
  });

  it("the key used for another result's re-roll or for a staging request is 409; a malformed key is 400; each writes nothing", async () => {
    const user = await onPlan(null, 5);
    const [photo] = await photosOf(user.id, 1);
    // Two results of the same choices on the same photo: only the result re-rolled tells the requests apart.
    const first = await staged(user, photo!.id);
    const second = await staged(user, photo!.id);
    const taken = await reroll(user.cookie, first, "reroll-key");
    expect(taken.status).toBe(202);
    await settleJob(user.cookie, taken.body.job.id);
    const before = await rowsOf(user.id);

    const other = await reroll(user.cookie, second, "reroll-key", { acceptCharge: true });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ ok: false, code: "conflict", error: SUBMISSION_REUSED });
    for (const bad of ["", "with space", "x".repeat(256)]) {
      const res = await reroll(user.cookie, first, bad, { acceptCharge: true });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ ok: false, code: "invalid" });
    }
    expect(await rowsOf(user.id)).toEqual(before);
    expect(await balance(user.id)).toBe(3);

    // The same key on a page job request is its own (another scope): a job of its own.
    const staging = await stage(user.cookie, photo!.id, "reroll-key");
    expect(staging.status).toBe(202);
    expect(staging.body.job.id).not.toBe(taken.body.job.id);
    await settleJob(user.cookie, staging.body.job.id);
    expect(await balance(user.id)).toBe(2);
    await expectSettled(user.id);
  });
});
