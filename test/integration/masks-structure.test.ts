import { jobs, photoVersions } from "@db/schema";
import { makeMaskPng } from "@test/fixtures/images";
import { db, signedIn } from "@test/support/factories";
import { api, balance, expectSettled, settleJob } from "@test/support/listing";
import { makePhoto } from "@test/support/photos";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import {
  answerInTurn,
  ROOM_SIZE,
  refuseOverOne,
  roomAnswer,
  useRoomAsOriginal,
  windowGoneAnswer,
} from "@test/support/structure-room";
import { workerFetch } from "@test/support/worker";
import { STRUCTURE_REFUSED } from "@workers/objects/user/jobs/structure";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";

// A brushed removal (docs/decisions/0195-removal-brush-masks.md) goes through the same structure check as any
// removal (docs/decisions/0160-structure-check.md, 0215-flag-when-unsure.md): its result is compared with the room
// before it is charged. A removal call sends no seed nor creativity, so a refused one is not tried again (the same
// call would cost another provider charge for nothing new); under production's limits, which refuse nothing, the
// same result is flagged and charged. The provider is stubbed at the isolate's fetch and answers the labelled set's
// living room, as it is or with its window painted over.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

/** A painted area in the lower right of the room (the answers below do not depend on it). */
const MASK = makeMaskPng(ROOM_SIZE.width, ROOM_SIZE.height, (x, y) => x > 420 && x < 620 && y > 300 && y < 420);

async function brushedRemoval(credits: number, limits: "production" | "refuse over 1" = "production") {
  const user = await signedIn({ credits });
  if (limits === "refuse over 1") await refuseOverOne(user.id);
  const photo = await makePhoto(user.id);
  await useRoomAsOriginal(photo);
  const stored = await workerFetch(`/api/photos/${photo.id}/masks?source=original`, {
    method: "POST",
    headers: { Cookie: user.cookie, Origin: "http://localhost", "Content-Type": "image/png" },
    body: MASK,
  });
  expect(stored.status).toBe(201);
  const maskId = ((await stored.json()) as { mask: { id: string } }).mask.id;
  const res = await api(user.cookie, "POST", `/api/photos/${photo.id}/jobs`, {
    kind: "removal",
    sourceVersionId: "original",
    maskId,
  });
  expect(res.status).toBe(202);
  return { user, photo, maskId, job: await settleJob(user.cookie, res.body.job.id) };
}

/** The removal calls (not the enlargements): one, which sent the mask, and the provider fetched the stored PNG. */
function expectMaskSentOnce(maskId: string) {
  const removals = provider.calls.filter((c) => c.path === "/remove_objects_from_room");
  expect(removals).toHaveLength(1);
  for (const call of removals) {
    expect(new URL(String(call.body.mask_image_url)).pathname).toMatch(new RegExp(`/masks/${maskId}$`));
    expect(call.mask).toEqual({ status: 200, type: "image/png", bytes: MASK });
  }
}

describe("a brushed removal and the structure check", () => {
  it("flagged under production's limits: charged once with its mask, one call, marked where it changed", async () => {
    answerInTurn(provider, windowGoneAnswer("removal"), roomAnswer("removal"));
    const { user, maskId, job } = await brushedRemoval(2);
    expect(job.status).toBe("succeeded");
    expectMaskSentOnce(maskId);
    expect(await balance(user.id)).toBe(1);
    const version = await db.select().from(photoVersions).where(eq(photoVersions.id, job.versionId!)).get();
    expect(version!.structureVerdict).toBe("flagged");
    expect(version!.structureReasons?.length).toBeGreaterThan(0);
    expect(version!.params.mask).toBe(maskId);
    await expectSettled(user.id);
  });

  it("refused: not charged and not tried again (no new choice to send), kept with its mask for 'Keep it anyway'", async () => {
    answerInTurn(provider, windowGoneAnswer("removal"), roomAnswer("removal"));
    const { user, photo, maskId, job } = await brushedRemoval(1, "refuse over 1");
    expect(job.status).toBe("failed");
    expect(job.error).toBe(STRUCTURE_REFUSED);
    expectMaskSentOnce(maskId);
    expect(await balance(user.id)).toBe(1);
    await expectSettled(user.id);
    const version = await db.select().from(photoVersions).where(eq(photoVersions.id, job.versionId!)).get();
    expect(version!.structureVerdict).toBe("refused");
    expect(version!.structureScore).toBeGreaterThan(1);
    expect(version!.params.mask).toBe(maskId);
    const row = await db.select().from(jobs).where(eq(jobs.id, job.id)).get();
    expect(row!.params.mask).toBe(maskId);
    const kept = await api(user.cookie, "POST", `/api/photos/${photo.id}/versions/${job.versionId}/keep`, {});
    expect(kept.status).toBe(200);
    expect(await balance(user.id)).toBe(0);
  });
});
