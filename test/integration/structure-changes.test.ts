import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { dataExports, photos, photoVersions } from "@db/schema";
import { db } from "@test/support/factories";
import { api, onPlan, photosOf, settleJob } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { roomAnswer, useRoomAsOriginal, windowGoneAnswer } from "@test/support/structure-room";
import { workerFetch } from "@test/support/worker";
import { listKeys, photoPrefix } from "@workers/lib/photo-storage";
import { purgeStep } from "@workers/objects/user/background";
import { userObject } from "@workers/objects/user-object";
import { createApiKey } from "@workers/services/api-keys";
import { deletePhotoForever, trashPhoto } from "@workers/services/library";
import { requestExport } from "@workers/services/mls/account-data";
import { eq } from "drizzle-orm";
import { decode } from "fast-png";
import { unzipSync } from "fflate";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

// The structure check's change map (issue 43 item 5, docs/decisions/0260-change-map-with-the-version.md): every
// checked result's map is stored beside its bytes by the check Worker, named on its version, given to its owner only
// (page and public API), deleted with the photo and the account, and included in the data export. The results are
// made by real jobs through the queue and the check Worker; the provider is stubbed at the isolate's fetch.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function staged(answer: "flagged" | "passed") {
  const user = await onPlan("Starter plan", 3);
  const [photo] = await photosOf(user.id, 1);
  await useRoomAsOriginal(photo!);
  provider.answer = () => [answer === "flagged" ? windowGoneAnswer("stage") : roomAnswer("stage")];
  const res = await api(user.cookie, "POST", `/api/photos/${photo!.id}/jobs`, {
    kind: "stage",
    roomType: "Living Room",
    designStyle: "Modern",
  });
  const job = await settleJob(user.cookie, res.body.job.id);
  expect(job.status).toBe("succeeded");
  const versionId = job.versionId!;
  const row = (await db.select().from(photoVersions).where(eq(photoVersions.id, versionId)).get())!;
  return { user, photo: photo!, versionId, row, base: `/api/photos/${photo!.id}/versions/${versionId}` };
}

async function keyFor(userId: string, scopes: ("stage" | "read")[]) {
  const made = await createApiKey({ db, env, clock: () => Date.now() }, userId, { name: "t", scopes });
  if (!made.ok) throw new Error(made.error);
  return { Authorization: `Bearer ${made.token}` };
}

/** The share of marked pixels in a part of the map (fractions of its width and height). */
function markedIn(map: ReturnType<typeof decode>, x0: number, x1: number, y0: number, y1: number): number {
  let marked = 0;
  let all = 0;
  for (let y = Math.floor(y0 * map.height); y < Math.ceil(y1 * map.height); y++) {
    for (let x = Math.floor(x0 * map.width); x < Math.ceil(x1 * map.width); x++) {
      all++;
      if (map.data[y * map.width + x]! > 0) marked++;
    }
  }
  return marked / all;
}

describe("the change map of a checked result", () => {
  it("is stored beside the version, a small gray PNG marked in part, named by its verdict's changesUrl", async () => {
    const { user, photo, versionId, row, base } = await staged("flagged");
    expect(row.structureVerdict).toBe("flagged");
    expect(row.structureMapKey).toBe(`${photoPrefix(user.id, photo.id)}versions/${versionId}.changes.png`);
    const res = await workerFetch(`${base}/changes`, { headers: { Cookie: user.cookie } });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("image/png");
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(bytes.byteLength).toBeLessThan(40_000);
    const map = decode(bytes);
    expect([map.width, map.channels, map.depth]).toEqual([320, 1, 8]);
    expect(map.height).toBe(Math.round((320 * 512) / 766));
    // Marked somewhere, and not everywhere: a map that says "everything changed" shows nothing.
    const share = markedIn(map, 0, 1, 0, 1);
    expect(share).toBeGreaterThan(0.001);
    expect(share).toBeLessThan(0.6);
    const view = await api(user.cookie, "GET", `/api/photos/${photo.id}/versions`);
    expect(view.body.versions[0].structure.changesUrl).toBe(`${base}/changes`);
  });

  it("a result that passed carries its map too; the public API answers its verdict, score and map address", async () => {
    const { user, photo, versionId, row } = await staged("passed");
    expect(row.structureVerdict).toBe("passed");
    expect(row.structureMapKey).not.toBeNull();
    const auth = await keyFor(user.id, ["read"]);
    const listed = await workerFetch(`/api/v1/photos/${photo.id}/versions`, { headers: auth });
    const { versions } = (await listed.json()) as {
      versions: { id: string; structure: { verdict: string; score: number; changesUrl: string } }[];
    };
    const path = `/api/v1/photos/${photo.id}/versions/${versionId}/changes`;
    expect(versions[0]!.structure).toMatchObject({ verdict: "passed", changesUrl: path });
    expect(typeof versions[0]!.structure.score).toBe("number");
    const map = await workerFetch(path, { headers: auth });
    expect([map.status, map.headers.get("Content-Type")]).toEqual([200, "image/png"]);
    expect(decode(new Uint8Array(await map.arrayBuffer())).width).toBe(320);
  });

  it("another user's request is a 404, through the page's API and the public API, and writes nothing", async () => {
    const { user, photo, versionId, row, base } = await staged("flagged");
    const stranger = await onPlan("Starter plan", 1);
    const [theirs] = await photosOf(stranger.id, 1);
    const stored = new Uint8Array(await (await env.PHOTOS.get(row.structureMapKey!))!.arrayBuffer());
    const keysBefore = (await listKeys(env.PHOTOS, photoPrefix(user.id, photo.id))).map((o) => o.key).sort();
    const tries = [
      await workerFetch(`${base}/changes`, { headers: { Cookie: stranger.cookie } }),
      await workerFetch(`/api/photos/${theirs!.id}/versions/${versionId}/changes`, {
        headers: { Cookie: stranger.cookie },
      }),
      await workerFetch(`/api/v1/photos/${photo.id}/versions/${versionId}/changes`, {
        headers: await keyFor(stranger.id, ["read"]),
      }),
      await workerFetch(`${base}/changes`),
    ];
    expect(tries.map((r) => r.status)).toEqual([404, 404, 404, 401]);
    for (const r of tries) expect(r.headers.get("Content-Type")).toMatch(/json/);
    expect((await listKeys(env.PHOTOS, photoPrefix(user.id, photo.id))).map((o) => o.key).sort()).toEqual(keysBefore);
    expect(new Uint8Array(await (await env.PHOTOS.get(row.structureMapKey!))!.arrayBuffer())).toEqual(stored);
    expect(await db.select().from(photoVersions).where(eq(photoVersions.id, versionId)).get()).toEqual(row);
  });

  it("goes with its photo when the trash is emptied, and with the account when it is purged", async () => {
    const trashed = await staged("flagged");
    expect(await trashPhoto(db, trashed.user.id, trashed.photo.id)).toBe(true);
    await deletePhotoForever(db, env.PHOTOS, trashed.user.id, trashed.photo.id);
    expect(await db.select().from(photos).where(eq(photos.id, trashed.photo.id)).get()).toBeUndefined();
    expect(await env.PHOTOS.head(trashed.row.structureMapKey!)).toBeNull();

    const deleted = await staged("flagged");
    expect(await env.PHOTOS.head(deleted.row.structureMapKey!)).not.toBeNull();
    for (let i = 0; i < 20 && (await purgeStep(env, db, deleted.user.id)); i++);
    expect(await env.PHOTOS.head(deleted.row.structureMapKey!)).toBeNull();
    expect(await db.select().from(photos).where(eq(photos.userId, deleted.user.id)).all()).toEqual([]);
  });

  it("is in the data export, beside the version, with a line in its README", async () => {
    const { user, photo, versionId, row } = await staged("flagged");
    // The export's e-mail: answered here (there is no mail server in workerd).
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => Response.json({ id: "m" }));
    const allow = async () => ({ allowed: true, retryAfterSeconds: 0 });
    const asked = await requestExport({ db, env, clock: Date.now, rateLimit: allow }, user.id);
    if (!asked.ok) throw new Error(asked.error);
    await runDurableObjectAlarm(userObject(env, user.id));
    const done = await db.select().from(dataExports).where(eq(dataExports.id, asked.id)).get();
    expect(done?.status).toBe("ready");
    const zip = unzipSync(new Uint8Array(await (await env.PHOTOS.get(done!.objectKey!))!.arrayBuffer()));
    const stored = new Uint8Array(await (await env.PHOTOS.get(row.structureMapKey!))!.arrayBuffer());
    expect(zip[`photos/${photo.id}/versions/${versionId}-stage-changes.png`]).toEqual(stored);
    expect(new TextDecoder().decode(zip["README.txt"])).toContain("-changes.png");
    const json = JSON.parse(new TextDecoder().decode(zip["account.json"])) as { versions: { id: string }[] };
    expect(json.versions.map((v) => v.id)).toEqual([versionId]);
  });
});
