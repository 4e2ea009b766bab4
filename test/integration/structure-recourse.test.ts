import { env } from "cloudflare:workers";
import { creditGrants, creditLedger, photoVersions, structureRecourses } from "@db/schema";
import { db } from "@test/support/factories";
import { api, balance, onPlan, photosOf, settleJob } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { refuseOverOne, roomAnswer, useRoomAsOriginal, windowGoneAnswer } from "@test/support/structure-room";
import { listKeys } from "@workers/lib/photo-storage";
import { purgeStep } from "@workers/objects/user/background";
import { ALREADY_RETURNED } from "@workers/objects/user/credits/returns";
import { candidatePrefix, monthSpent, ONLY_CHECKED, RETURN_REASON, tooLate } from "@workers/objects/user/jobs/recourse";
import { userObject } from "@workers/objects/user-object";
import { and, eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { RETURNED_HELD_BACK, RETURNS_PER_MONTH, returnedMessage } from "~/shared/version-view";

// "This result changed the room" (issue 43 item 7, docs/decisions/0261-this-result-changed-the-room.md): a result the
// check passed or marked gives its credit back through the user's object, once per version, within 7 days, at most
// RETURNS_PER_MONTH a month, with a ledger row naming why; with consent, the pair is copied where only operators
// read it. Results are made by real jobs through the queue and the check Worker.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

async function staged(answer: "flagged" | "passed" | "refused", credits = 3) {
  const user = await onPlan("Starter plan", credits);
  if (answer === "refused") await refuseOverOne(user.id);
  const [photo] = await photosOf(user.id, 1);
  await useRoomAsOriginal(photo!);
  provider.answer = () => [answer === "passed" ? roomAnswer("stage") : windowGoneAnswer("stage")];
  const res = await api(user.cookie, "POST", `/api/photos/${photo!.id}/jobs`, {
    kind: "stage",
    roomType: "Living Room",
    designStyle: "Modern",
  });
  const job = await settleJob(user.cookie, res.body.job.id);
  const versionId = job.versionId!;
  return { user, photo: photo!, versionId, base: `/api/photos/${photo!.id}/versions/${versionId}` };
}

async function returns(userId: string) {
  return db
    .select()
    .from(creditLedger)
    .where(and(eq(creditLedger.userId, userId), eq(creditLedger.reason, RETURN_REASON)))
    .all();
}

describe("This result changed the room", () => {
  it("returns a marked result's credit once, with a ledger row naming why; the second ask is a 409 and returns nothing", async () => {
    const { user, versionId, base } = await staged("flagged");
    expect(await balance(user.id)).toBe(2);
    const first = await api(user.cookie, "POST", `${base}/changed-room`, {});
    expect([first.status, first.body.credits, first.body.kept]).toEqual([200, 3, false]);
    expect(await balance(user.id)).toBe(3);
    const ledger = await returns(user.id);
    expect(ledger.map((l) => [l.kind, l.amount, l.reservationKey])).toEqual([["refund", 1, versionId]]);
    const second = await api(user.cookie, "POST", `${base}/changed-room`, { keepPair: true });
    expect([second.status, second.body.error]).toEqual([409, ALREADY_RETURNED]);
    expect(await balance(user.id)).toBe(3);
    expect(await returns(user.id)).toHaveLength(1);
    const row = await db.select().from(photoVersions).where(eq(photoVersions.id, versionId)).get();
    expect(row?.structureReturnedAt).not.toBeNull();
    const view = await api(user.cookie, "GET", `/api/photos/${base.split("/")[3]}/versions`);
    expect(view.body.versions[0].returnedAt).toBe(row?.structureReturnedAt);
  });

  it("a credit whose payment came back since stays spent: the result is returned, nothing given (ADR 0339)", async () => {
    const { user, versionId, base } = await staged("flagged");
    // What a refund of the payment that bought it leaves: the grant owes the credit that was out in the job.
    await db.update(creditGrants).set({ owed: 1 }).where(eq(creditGrants.userId, user.id));
    const res = await api(user.cookie, "POST", `${base}/changed-room`, {});
    expect([res.status, res.body.credits, res.body.returnedTo]).toEqual([200, 2, "held-back"]);
    expect(await balance(user.id)).toBe(2);
    const rows = await db.select().from(creditLedger).where(eq(creditLedger.userId, user.id)).all();
    expect(rows.filter((r) => r.idempotencyKey === `return:${versionId}`).map((r) => r.amount)).toEqual([1]);
    expect(
      rows.filter((r) => r.idempotencyKey.startsWith(`held-back:return:${versionId}`)).map((r) => r.amount),
    ).toEqual([-1]);
    expect(
      await db.select({ owed: creditGrants.owed }).from(creditGrants).where(eq(creditGrants.userId, user.id)).all(),
    ).toEqual([{ owed: 0 }]);
    expect(returnedMessage(res.body.returnedTo)).toBe(RETURNED_HELD_BACK);
  });

  it("another user's version is a 404 that changes nothing", async () => {
    const { user, photo, versionId, base } = await staged("passed");
    const stranger = await onPlan("Starter plan", 1);
    const [theirs] = await photosOf(stranger.id, 1);
    const tries = [
      await api(stranger.cookie, "POST", `${base}/changed-room`, {}),
      await api(stranger.cookie, "POST", `/api/photos/${theirs!.id}/versions/${versionId}/changed-room`, {}),
    ];
    expect(tries.map((t) => t.status)).toEqual([404, 404]);
    expect([await balance(user.id), await balance(stranger.id)]).toEqual([2, 1]);
    expect(await db.select().from(structureRecourses).where(eq(structureRecourses.versionId, versionId)).all()).toEqual(
      [],
    );
    expect(photo.id).toBeTruthy();
  });

  it("after 7 days the answer is a 409 that says so, and the credit stays spent", async () => {
    const { user, base } = await staged("passed");
    await userObject(env, user.id).advanceClockForTesting(7 * 24 * 60 * 60 * 1000 + 60_000);
    const late = await api(user.cookie, "POST", `${base}/changed-room`, {});
    const version = await db
      .select()
      .from(photoVersions)
      .where(eq(photoVersions.photoId, base.split("/")[3]!))
      .get();
    expect([late.status, late.body.error]).toEqual([409, tooLate(version!.createdAt)]);
    expect(await balance(user.id)).toBe(2);
  });

  it("a refused result, and one kept after its refusal, are 409: they were not charged as checked results", async () => {
    const { user, base } = await staged("refused");
    expect(await balance(user.id)).toBe(3);
    const refused = await api(user.cookie, "POST", `${base}/changed-room`, {});
    expect([refused.status, refused.body.error]).toEqual([409, ONLY_CHECKED]);
    expect((await api(user.cookie, "POST", `${base}/keep`, {})).status).toBe(200);
    const kept = await api(user.cookie, "POST", `${base}/changed-room`, {});
    expect([kept.status, kept.body.error]).toEqual([409, ONLY_CHECKED]);
    expect(await balance(user.id)).toBe(2);
    expect(await returns(user.id)).toEqual([]);
  });

  it(`past ${RETURNS_PER_MONTH} returns in a month the answer is a 429 with the wait until the 1st`, async () => {
    const { user, photo, base } = await staged("passed");
    const now = Date.now();
    for (let i = 0; i < RETURNS_PER_MONTH; i++) {
      await db.insert(structureRecourses).values({
        versionId: `earlier-${user.id}-${i}`,
        userId: user.id,
        photoId: photo.id,
        kind: "stage",
        verdict: "passed",
        createdAt: now - i * 1000,
      });
    }
    const res = await api(user.cookie, "POST", `${base}/changed-room`, {});
    expect([res.status, res.body.error]).toEqual([429, monthSpent()]);
    expect(Number(res.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(await balance(user.id)).toBe(2);
  });

  it("with consent, keeps the pair under candidates/ (no user route serves it), gone with the account", async () => {
    const { user, versionId, base } = await staged("flagged");
    const res = await api(user.cookie, "POST", `${base}/changed-room`, { keepPair: true });
    expect([res.status, res.body.kept]).toEqual([200, true]);
    const prefix = candidatePrefix(user.id, versionId);
    const row = await db.select().from(structureRecourses).where(eq(structureRecourses.versionId, versionId)).get();
    expect(row).toMatchObject({ userId: user.id, kind: "stage", verdict: "flagged", candidatePrefix: prefix });
    expect((await listKeys(env.PHOTOS, prefix)).map((o) => o.key).sort()).toEqual(
      [`${prefix}changes.png`, `${prefix}result`, `${prefix}source`].sort(),
    );
    for (let i = 0; i < 20 && (await purgeStep(env, db, user.id)); i++);
    expect(await listKeys(env.PHOTOS, prefix)).toEqual([]);
    expect(await db.select().from(structureRecourses).where(eq(structureRecourses.userId, user.id)).all()).toEqual([]);
  });
});
