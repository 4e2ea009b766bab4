import { env } from "cloudflare:workers";
import { hourOf } from "@db/ops-counts";
import { opsCounts, photoVersions } from "@db/schema";
import { type Envelope, eventsOf, parseEnvelope } from "@emulators/sentry-envelope";
import { db } from "@test/support/factories";
import { api, balance, onPlan, photosOf, settleJob } from "@test/support/listing";
import { stubProvider } from "@test/support/provider-stub";
import { takeConsoleErrors } from "@test/support/setup";
import { roomAnswer, useRoomAsOriginal } from "@test/support/structure-room";
import { userObject } from "@workers/objects/user-object";
import { readOperations } from "@workers/services/operations";
import { and, eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";

// The check cannot switch off unseen (issue 43 item 9, docs/decisions/0262-unchecked-results-seen.md): with the check
// Worker "down" (UserObject.stopChecksForTesting: each check's message dropped, its wait cut to 200 ms), results are
// delivered unchecked and charged, counted per hour by cause on the operations page, and once the hour's unchecked
// results pass 5 % of its results one error report goes out, not one per result. SENTRY_DSN points at 127.0.0.1:9
// here (vitest.config.ts): the isolate's fetch is stubbed for it beside the provider's stub.

const SINK = "http://127.0.0.1:9/api/1/envelope/";

afterEach(() => {
  vi.restoreAllMocks();
});

async function until(read: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await read()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function hourCount(metric: string, cause: string): Promise<number> {
  const row = await db
    .select({ n: opsCounts.count })
    .from(opsCounts)
    .where(and(eq(opsCounts.hour, hourOf(Date.now())), eq(opsCounts.metric, metric), eq(opsCounts.cause, cause)))
    .get();
  return row?.n ?? 0;
}

describe("unchecked results", () => {
  it("with the check Worker stopped, results are delivered unchecked, counted on the operations page, and reported once", async () => {
    const provider = stubProvider();
    provider.answer = () => [roomAnswer("stage")];
    const providerFetch = vi.mocked(globalThis.fetch).getMockImplementation()!;
    const envelopes: Envelope[] = [];
    vi.mocked(globalThis.fetch).mockImplementation(async (input, init) => {
      const req = new Request(input, init);
      if (req.url.startsWith(SINK)) {
        envelopes.push(parseEnvelope(new Uint8Array(await req.arrayBuffer())));
        return Response.json({ id: "ok" });
      }
      return providerFetch(input, init);
    });
    const reports = () =>
      envelopes
        .flatMap((e) => eventsOf(e))
        .filter((e) => JSON.stringify(e).includes("results this hour were delivered unchecked"));

    const before = await hourCount("job_unchecked", "timeout");
    const user = await onPlan("Starter plan", 3);
    await userObject(env, user.id).stopChecksForTesting(200);
    const photos = await photosOf(user.id, 2);
    for (const photo of photos) {
      await useRoomAsOriginal(photo);
      const res = await api(user.cookie, "POST", `/api/photos/${photo.id}/jobs`, {
        kind: "stage",
        roomType: "Living Room",
        designStyle: "Modern",
      });
      const job = await settleJob(user.cookie, res.body.job.id);
      expect(job.status).toBe("succeeded");
      const version = await db.select().from(photoVersions).where(eq(photoVersions.id, job.versionId!)).get();
      // Delivered and charged, never refused for it; no change map without a check.
      expect([version?.structureVerdict, version?.structureMapKey]).toEqual(["unchecked", null]);
    }
    expect(await balance(user.id)).toBe(1);
    expect(await hourCount("job_unchecked", "timeout")).toBe(before + 2);
    await until(() => reports().length > 0, "the error report");
    // A moment for a second report, were one to be sent.
    await new Promise((r) => setTimeout(r, 300));
    expect(reports()).toHaveLength(1);
    expect(await hourCount("unchecked_reported", "")).toBe(1);
    expect(takeConsoleErrors().some((line) => String(line).includes("delivered unchecked"))).toBe(true);

    const ops = await readOperations(db, env);
    const hour = ops.windows[0]!;
    expect(hour.label).toBe("This hour");
    expect(hour.jobs.unchecked.find((t) => t.cause === "timeout")?.count).toBeGreaterThanOrEqual(2);

    // The check Worker back: the next result is judged again (passed), counted as neither.
    await userObject(env, user.id).stopChecksForTesting(null);
    const [again] = await photosOf(user.id, 1);
    await useRoomAsOriginal(again!);
    const res = await api(user.cookie, "POST", `/api/photos/${again!.id}/jobs`, {
      kind: "stage",
      roomType: "Living Room",
      designStyle: "Modern",
    });
    const job = await settleJob(user.cookie, res.body.job.id);
    const version = await db.select().from(photoVersions).where(eq(photoVersions.id, job.versionId!)).get();
    expect(version?.structureVerdict).toBe("passed");
    expect(await hourCount("job_unchecked", "timeout")).toBe(before + 2);
    expect(reports()).toHaveLength(1);
  });
});
