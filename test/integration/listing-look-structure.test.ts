import { folders } from "@db/schema";
import { db } from "@test/support/factories";
import { api, balance, expectSettled, folderOf, onPlan, photosOf, settleJob } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import {
  answerInTurn,
  refuseOverOne,
  roomAnswer,
  useRoomAsOriginal,
  windowGoneAnswer,
} from "@test/support/structure-room";
import { STRUCTURE_REFUSED } from "@workers/objects/user/jobs/structure";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_LOOK_STRENGTH, LOOK_NOT_REFUSED } from "~/shared/listing-look";

// The listing's look (docs/decisions/0190-one-look-for-a-listing.md) with the structure check on every result
// (docs/decisions/0160-structure-check.md): a result the check refused was not charged and becomes a look only once
// kept; a staging refused once is tried again free and that second call still follows the listing's look. The
// users' results are judged by limits that refuse any score over 1 (production's refuse nothing: ADR 0215). The
// provider is stubbed at the isolate's fetch and answers the labelled set's living room, as it is or with its
// window painted over.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const STAGE = { kind: "stage", roomType: "Living Room", designStyle: "Modern" };

async function listingOfRooms(credits: number, n: number) {
  const user = await onPlan("Starter plan", credits);
  await refuseOverOne(user.id);
  const folderId = await folderOf(user.id);
  const shots = await photosOf(user.id, n, folderId);
  for (const shot of shots) await useRoomAsOriginal(shot);
  return { user, folderId, shots };
}

const folderLook = async (folderId: string) =>
  (await db.select().from(folders).where(eq(folders.id, folderId)).get())!.lookVersionId;

describe("the listing's look and the structure check", () => {
  it("a result refused twice is not the listing's look until it is kept", async () => {
    const { user, folderId, shots } = await listingOfRooms(1, 1);
    answerInTurn(provider, windowGoneAnswer("stage"));
    const res = await api(user.cookie, "POST", `/api/photos/${shots[0]!.id}/jobs`, STAGE);
    expect(res.status).toBe(202);
    const job = await settleJob(user.cookie, res.body.job.id);
    expect([job.status, job.error]).toEqual(["failed", STRUCTURE_REFUSED]);
    const look = `/api/photos/${shots[0]!.id}/versions/${job.versionId}/look`;

    const refused = await api(user.cookie, "POST", look, {});
    expect([refused.status, refused.body.error]).toEqual([409, LOOK_NOT_REFUSED]);
    expect(await folderLook(folderId)).toBeNull();
    expect(await balance(user.id)).toBe(1);
    await expectSettled(user.id);

    const kept = await api(user.cookie, "POST", `/api/photos/${shots[0]!.id}/versions/${job.versionId}/keep`, {});
    expect(kept.status).toBe(200);
    const set = await api(user.cookie, "POST", look, {});
    expect(set.status).toBe(200);
    expect(await folderLook(folderId)).toBe(job.versionId);
    // The keep's one credit, and nothing for the look.
    expect(await balance(user.id)).toBe(0);
  });

  it("a staging refused once is tried again free with the listing's look, and charged once", async () => {
    const { user, shots } = await listingOfRooms(3, 2);
    answerInTurn(provider, roomAnswer("stage"));
    const first = await api(user.cookie, "POST", `/api/photos/${shots[0]!.id}/jobs`, STAGE);
    const ref = await settleJob(user.cookie, first.body.job.id);
    expect(ref.status).toBe("succeeded");
    const set = await api(user.cookie, "POST", `/api/photos/${shots[0]!.id}/versions/${ref.versionId}/look`, {});
    expect(set.status).toBe(200);

    provider.calls.length = 0;
    answerInTurn(provider, windowGoneAnswer("stage"), roomAnswer("stage"));
    const res = await api(user.cookie, "POST", `/api/photos/${shots[1]!.id}/jobs`, {
      ...STAGE,
      designCreativity: 0.6,
    });
    expect(res.status).toBe(202);
    const job = await settleJob(user.cookie, res.body.job.id);
    expect(job.status).toBe("succeeded");
    const stagings = provider.calls.filter((c) => c.path === "/generate_designs_for_room");
    expect(stagings).toHaveLength(2);
    // The second try: half the creativity, and the same reference at the same strength, fetched by the provider.
    expect(stagings.map((c) => c.body.design_creativity)).toEqual([0.6, 0.3]);
    for (const call of stagings) {
      expect(new URL(String(call.body.design_style_image_url)).pathname).toBe(
        `/api/signed/photos/${shots[0]!.id}/${ref.versionId}`,
      );
      expect(call.body.design_style_image_strength).toBe(DEFAULT_LOOK_STRENGTH);
      expect(call.reference).toEqual(stagings[0]!.reference);
      expect(call.reference?.byteLength).toBeGreaterThan(0);
    }
    expect(await balance(user.id)).toBe(1);
    await expectSettled(user.id);
  });
});
