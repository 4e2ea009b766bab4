import { env } from "cloudflare:workers";
import { photos } from "@db/schema";
import { makeMaskPng } from "@test/fixtures/images";
import { db } from "@test/support/factories";
import { api, balance, onPlan, photosOf, rowsOf, settleBatch, settleJob } from "@test/support/listing";
import { storedKeys } from "@test/support/photos";
import { stubProvider } from "@test/support/provider-stub";
import {
  ROOM_SIZE,
  refuseOverOne,
  roomAnswer,
  useRoomAsOriginal,
  windowGoneAnswer,
} from "@test/support/structure-room";
import { workerFetch } from "@test/support/worker";
import { createApiKey } from "@workers/services/api-keys";
import { restorePhoto, trashPhoto } from "@workers/services/library";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { inTrashMessage } from "~/shared/library-view";

// A photo in the trash refuses every paid action (issue 45 part 3, docs/decisions/0202-paid-work-on-a-live-photo-only.md).
// The hostile run kept a refused result of a trashed photo for a credit, and the trashed photo's shown image changed.
// Each paid action is tried here on a trashed photo through the route a person or a script uses: each answers 409
// with the same clear message, and nothing is written, reserved or stored (rows, ledger, photo, R2 all as before).
// The check is made once, where the user's object starts paid work (objects/user/jobs/paid-photos.ts).

interface Fixture {
  user: { id: string; cookie: string };
  photoId: string;
  otherPhotoId: string;
  name: string;
  stagedJobId: string;
  passedVersionId: string;
  refusedVersionId: string;
  maskId: string;
  batchId: string;
  apiKey: string;
}
let f: Fixture;

beforeAll(async () => {
  const provider = stubProvider();
  const user = await onPlan("Starter plan", 10);
  const [photo, other] = await photosOf(user.id, 2);
  await useRoomAsOriginal(photo!);
  // Production's limits refuse nothing (ADR 0215): this user's results are judged by the old two-outcome rule.
  await refuseOverOne(photo!.userId);
  const stage = () =>
    api(user.cookie, "POST", `/api/photos/${photo!.id}/jobs`, {
      kind: "stage",
      roomType: "Living Room",
      designStyle: "Modern",
    });
  provider.answer = () => [roomAnswer("stage")];
  const staged = await settleJob(user.cookie, (await stage()).body.job.id);
  expect(staged.status).toBe("succeeded");
  provider.answer = () => [windowGoneAnswer("stage")];
  const refused = await settleJob(user.cookie, (await stage()).body.job.id);
  expect(refused.status).toBe("failed");
  // A mask painted on the original (the brush), stored before the photo went to the trash.
  const mask = await workerFetch(`/api/photos/${photo!.id}/masks?source=original`, {
    method: "POST",
    headers: { Cookie: user.cookie, Origin: "http://localhost", "Content-Type": "image/png" },
    body: makeMaskPng(ROOM_SIZE.width, ROOM_SIZE.height, (x) => x < 40),
  });
  expect(mask.status).toBe(201);
  // A batch whose job for the photo failed: its retry is paid work on the photo.
  provider.answer = null;
  provider.failEvery = 1;
  const batch = await api(user.cookie, "POST", "/api/batches", {
    designStyle: "Modern",
    items: [{ photoId: photo!.id, roomType: "Living Room" }],
  });
  expect(batch.status).toBe(202);
  const settled = await settleBatch(user.cookie, batch.body.batch.id);
  expect(settled.counts.failed).toBe(1);
  provider.failEvery = 0;
  const key = await createApiKey({ db, env, clock: Date.now }, user.id, { name: "trash", scopes: ["stage", "read"] });
  if (!key.ok) throw new Error(key.error);
  expect(await trashPhoto(db, user.id, photo!.id)).toBe(true);
  f = {
    user,
    photoId: photo!.id,
    otherPhotoId: other!.id,
    name: photo!.name,
    stagedJobId: staged.id,
    passedVersionId: staged.versionId!,
    refusedVersionId: refused.versionId!,
    maskId: ((await mask.json()) as { mask: { id: string } }).mask.id,
    batchId: batch.body.batch.id,
    apiKey: key.token,
  };
}, 120_000);

/** Everything a paid action could write: the user's rows, balance, the photo's row and its stored objects. */
async function everything() {
  return {
    rows: await rowsOf(f.user.id),
    balance: await balance(f.user.id),
    photo: await db.select().from(photos).where(eq(photos.id, f.photoId)).get(),
    keys: await storedKeys(f.user.id),
  };
}

describe("a photo in the trash refuses every paid action", { timeout: 120_000 }, () => {
  it("keep, stage, variations, removal, sky, from a version, the brush, re-roll, batch, retry, the API: 409, nothing written", async () => {
    const p = `/api/photos/${f.photoId}`;
    const stage = { kind: "stage", roomType: "Living Room", designStyle: "Modern" };
    const cases: [string, string, string, unknown, Record<string, string>?][] = [
      ["keep it anyway", "POST", `${p}/versions/${f.refusedVersionId}/keep`, {}],
      ["stage", "POST", `${p}/jobs`, stage],
      ["stage, sent with the page's key", "POST", `${p}/jobs`, stage, { "Idempotency-Key": "trashed-stage-key" }],
      ["variations", "POST", `${p}/jobs`, { ...stage, variations: 3 }],
      ["stage from a version", "POST", `${p}/jobs`, { ...stage, sourceVersionId: f.passedVersionId }],
      ["remove the furniture", "POST", `${p}/jobs`, { kind: "removal" }],
      ["replace the sky", "POST", `${p}/jobs`, { kind: "sky", skyType: "dusk" }],
      ["the brush", "POST", `${p}/jobs`, { kind: "removal", maskId: f.maskId, sourceVersionId: "original" }],
      ["re-roll", "POST", `/api/jobs/${f.stagedJobId}/reroll`, {}],
      ["re-roll, agreeing to a credit", "POST", `/api/jobs/${f.stagedJobId}/reroll`, { acceptCharge: true }],
      [
        "a batch with it and a live photo",
        "POST",
        "/api/batches",
        {
          designStyle: "Modern",
          items: [
            { photoId: f.otherPhotoId, roomType: "Bedroom" },
            { photoId: f.photoId, roomType: "Living Room" },
          ],
        },
      ],
      ["the batch's retry", "POST", `/api/batches/${f.batchId}/retry`, {}],
    ];
    const before = await everything();
    expect(before.photo!.trashedAt).not.toBeNull();
    const message = inTrashMessage(f.name);
    for (const [name, method, path, body, headers] of cases) {
      const res = await api(f.user.cookie, method, path, body, headers);
      expect([res.status, res.body.error], name).toEqual([409, message]);
      expect(await everything(), `${name} wrote something`).toEqual(before);
    }
    // The public API, with a key that may stage.
    for (const body of [stage, { kind: "removal" }, { kind: "sky", skyType: "day" }]) {
      const res = await workerFetch(`/api/v1/photos/${f.photoId}/jobs`, {
        method: "POST",
        headers: { Authorization: `Bearer ${f.apiKey}`, "Content-Type": "application/json", "Idempotency-Key": "k1" },
        body: JSON.stringify(body),
      });
      const answer = (await res.json()) as { error: string };
      expect([res.status, answer.error], `API ${body.kind}`).toEqual([409, message]);
      expect(await everything(), `API ${body.kind} wrote something`).toEqual(before);
    }
    // A new mask for the brush (free, but stored for nothing) is refused as before: a 4xx, nothing stored.
    const mask = await workerFetch(`${p}/masks?source=original`, {
      method: "POST",
      headers: { Cookie: f.user.cookie, Origin: "http://localhost", "Content-Type": "image/png" },
      body: makeMaskPng(ROOM_SIZE.width, ROOM_SIZE.height, (x) => x > 40),
    });
    expect(mask.status).toBe(404);
    expect(await everything()).toEqual(before);

    // Restored, the same actions are paid work again: keep it, for one credit.
    expect(await restorePhoto(db, f.user.id, f.photoId)).toBe(true);
    const kept = await api(f.user.cookie, "POST", `${p}/versions/${f.refusedVersionId}/keep`, {});
    expect(kept.status).toBe(200);
    expect(await balance(f.user.id)).toBe(before.balance - 1);
  });
});
