import { env } from "cloudflare:workers";
import { jobs, photoVersions } from "@db/schema";
import { db } from "@test/support/factories";
import { api, balance, onPlan, photosOf, settleJob } from "@test/support/listing";
import { stubProvider } from "@test/support/provider-stub";
import { takeConsoleErrors } from "@test/support/setup";
import { WakePlan } from "@workers/objects/user/wake";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";

// What follows a change of the user's data once it is written (the alarm it sets, the pages it tells) cannot make
// the change look failed: the runner used to take a fault there for a failed commit, refund a
// reservation that was already committed (refused: it was), and delete the result the user had just paid for.

const schedule = WakePlan.prototype.schedule;
afterEach(() => {
  WakePlan.prototype.schedule = schedule;
});

describe("a fault after a job's commit", () => {
  it("keeps the job succeeded, its credit spent and its result stored; the alarm is set again", async () => {
    const provider = stubProvider();
    const user = await onPlan(null, 3);
    const [photo] = await photosOf(user.id, 1);
    // From the provider call on, the next alarm the object sets fails once: the commit's is the first.
    let failNext = 0;
    let failed = 0;
    provider.hold = async () => {
      failNext = 1;
    };
    WakePlan.prototype.schedule = function (this: WakePlan, ...args: Parameters<WakePlan["schedule"]>) {
      if (failNext > 0) {
        failNext--;
        failed++;
        return Promise.reject(new Error("D1 went away for a moment"));
      }
      return schedule.apply(this, args);
    };
    const started = await api(user.cookie, "POST", `/api/photos/${photo!.id}/jobs`, {
      kind: "stage",
      roomType: "Bedroom",
      designStyle: "Modern",
    });
    expect(started.status).toBe(202);
    const job = await settleJob(user.cookie, started.body.job.id);
    expect(failed).toBe(1);
    // The fault is logged as the error it is, once.
    expect(takeConsoleErrors().map((e) => String(e[0]))).toEqual([expect.stringContaining("alarm after a change")]);
    expect(job.status).toBe("succeeded");
    expect(await balance(user.id)).toBe(2);
    const row = await db.select().from(jobs).where(eq(jobs.id, job.id)).get();
    const version = await db.select().from(photoVersions).where(eq(photoVersions.id, row!.versionId!)).get();
    expect(await env.PHOTOS.head(version!.key)).not.toBeNull();
  });
});
