import { env } from "cloudflare:workers";
import { db } from "@test/support/factories";
import { api, balance, onPlan, photosOf, settleJob } from "@test/support/listing";
import { stubProvider } from "@test/support/provider-stub";
import { runLibraryAction } from "@workers/services/library-actions";
import { describe, expect, it } from "vitest";
import { inTrashMessage } from "~/shared/library-view";
import { displayName } from "~/shared/text";

// Paid work only on a live photo (ADR 0202) was asked when jobs were created; a photo trashed while its job waited
// in the user's queue was still staged, charged, and shown again. The run asks once more before its provider call.

describe("a photo trashed while its job waits in the queue", () => {
  it("is not staged: its job fails refunded, with the trash's words, and no provider call is made for it", async () => {
    const provider = stubProvider();
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    provider.hold = () => held;
    const user = await onPlan(null, 5);
    const rooms = await photosOf(user.id, 5);
    const started = [];
    for (const photo of rooms) {
      const res = await api(user.cookie, "POST", `/api/photos/${photo.id}/jobs`, {
        kind: "stage",
        roomType: "Bedroom",
        designStyle: "Modern",
      });
      expect(res.status).toBe(202);
      started.push(res.body.job.id as string);
    }
    // Four run at once (the plan's places); the fifth waits.
    await expect.poll(() => provider.calls.length).toBe(4);
    const last = rooms[4]!;
    const trashed = await runLibraryAction({ db, bucket: env.PHOTOS }, user.id, { intent: "trash", photoId: last.id });
    expect(trashed.ok).toBe(true);
    release();
    const settled = await Promise.all(started.map((id) => settleJob(user.cookie, id)));
    expect(settled.slice(0, 4).map((j) => j.status)).toEqual(["succeeded", "succeeded", "succeeded", "succeeded"]);
    expect(settled[4]).toMatchObject({
      status: "failed",
      error: inTrashMessage(displayName(last.name, "This photo", 80)),
    });
    // Nothing more was sent to the provider once the held calls ended.
    expect(provider.calls).toHaveLength(4);
    expect(await balance(user.id)).toBe(1);
  });
});
