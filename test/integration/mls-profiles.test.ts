import { env } from "cloudflare:workers";
import { folders, originalLinks, type Photo, photos, photoVersions, type StructureVerdict } from "@db/schema";
import { makeJpeg } from "@test/fixtures/images";
import { db, signedIn } from "@test/support/factories";
import { api } from "@test/support/listing";
import { makePhoto } from "@test/support/photos";
import { workerFetch } from "@test/support/worker";
import { checkFields } from "@workers/http/body";
import { randomToken } from "@workers/lib/crypto";
import { createApiKey } from "@workers/services/api-keys";
import { runLibraryAction } from "@workers/services/library-actions";
import { TRASHED_NOT_EXPORTED } from "@workers/services/mls/downloads";
import { listingActionInput, runListingAction } from "@workers/services/mls/listing-actions";
import { advertisedPages, closeSoldListings } from "@workers/services/mls/listing-status";
import { resolveLink } from "@workers/services/mls/original-page";
import { eq } from "drizzle-orm";
import { unzipSync } from "fflate";
import jpeg from "jpeg-js";
import jsQR from "jsqr";
import { describe, expect, it } from "vitest";
import { ADVERTISING_WARNING } from "~/shared/mls-profiles";
import { KEPT_NOT_FOR_MLS, REFUSED_NOT_DOWNLOADED } from "~/shared/version-view";

// Disclosure that fits the listing's MLS (issue 34, docs/decisions/0170-mls-profiles.md), through the Worker's own
// fetch handler: downloads and packs follow the listing's profile, nothing public is made by a GET, a listing that
// still advertises keeps its original pages unless its owner insists, and a sold listing's pages close by themselves.

const DAY = 24 * 60 * 60 * 1000;

async function listing(profile: string | null = null) {
  const user = await signedIn();
  const folderId = randomToken();
  await db
    .insert(folders)
    .values({ id: folderId, userId: user.id, name: "12 Oak Lane", createdAt: Date.now(), mlsProfile: profile });
  return { user, folderId };
}

let order = 0;
/** A photo in the folder with one result of `kind` (real JPEG bytes, so it can be labelled). */
type Extra = { kind?: "stage" | "sky" | "removal"; verdict?: StructureVerdict; shown?: boolean };

async function altered(userId: string, folderId: string, name: string, extra: Extra = {}) {
  const photo = await makePhoto(userId, { folderId, name, createdAt: Date.now() + order++ });
  return { photo, ...(await addVersion(userId, photo, extra)) };
}

/** Another result of the photo, newer than its others; `shown`: the photo shows it (as "Keep it anyway" does). */
async function addVersion(userId: string, photo: Photo, extra: Extra = {}) {
  const id = randomToken();
  const key = `photos/${userId}/${photo.id}/versions/${id}`;
  const bytes = makeJpeg(320, 240, 85, 24, order);
  await env.PHOTOS.put(key, bytes, { httpMetadata: { contentType: "image/jpeg" } });
  await db.insert(photoVersions).values({
    id,
    photoId: photo.id,
    userId,
    jobId: randomToken(),
    kind: extra.kind ?? "stage",
    params: { roomType: "livingroom", designStyle: "modern" },
    key,
    thumbKey: key,
    contentType: "image/jpeg",
    bytes: bytes.byteLength,
    width: 320,
    height: 240,
    createdAt: Date.now() + order++,
    // A flagged result is stored as passed with the reason it is flagged (migrations/0021).
    storedVerdict: extra.verdict === "flagged" ? "passed" : (extra.verdict ?? null),
    structureFlagged: extra.verdict === "flagged" ? "score" : null,
  });
  if (extra.shown) await db.update(photos).set({ processedKey: key }).where(eq(photos.id, photo.id));
  return { versionId: id, bytes, path: `/api/photos/${photo.id}/versions/${id}` };
}

function get(cookie: string, path: string) {
  return workerFetch(path, { headers: { Cookie: cookie } });
}

function post(cookie: string, path: string, form: Record<string, string>) {
  return workerFetch(path, {
    method: "POST",
    headers: { Cookie: cookie, Origin: "http://localhost", "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  });
}

async function linkRows(userId: string) {
  return db.select().from(originalLinks).where(eq(originalLinks.userId, userId)).all();
}

async function unzip(res: Response) {
  expect(res.status).toBe(200);
  const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
  const text = (name: string) => new TextDecoder().decode(files[name]);
  return { files, text, manifest: JSON.parse(text("manifest.json")) };
}

function qrOf(bytes: Uint8Array): string | null {
  const img = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true });
  return jsQR(new Uint8ClampedArray(img.data), img.width, img.height)?.data ?? null;
}

describe("no GET makes anything public", () => {
  it("California: the download and the pack publish nothing; the POST that says so does, once; a withdrawn page stays withdrawn until published again", async () => {
    const { user, folderId } = await listing();
    const a = await altered(user.id, folderId, "Living room.jpg");

    // GET: 409 saying why, and no page.
    const first = await api(user.cookie, "GET", `${a.path}/labelled`);
    expect(first.status).toBe(409);
    expect(first.body.error).toContain("no public original page yet");
    const gotPack = await unzip(await get(user.cookie, `/api/folders/${folderId}/pack`));
    expect(gotPack.manifest.leftOut).toEqual([
      expect.objectContaining({ reason: expect.stringContaining("no public original page") }),
    ]);
    expect(await linkRows(user.id)).toEqual([]);

    // The POST that says it publishes: one page, and the label's QR code opens it.
    const made = await post(user.cookie, `${a.path}/labelled`, { publish: "first" });
    expect(made.status).toBe(200);
    const rows = await linkRows(user.id);
    expect(rows).toHaveLength(1);
    expect(qrOf(new Uint8Array(await made.arrayBuffer()))).toBe(`${env.APP_ORIGIN}/o/${rows[0]!.token}`);

    // Withdrawn (the listing is active: asked first, then confirmed).
    const asked = await api(user.cookie, "DELETE", `${a.path}/link`);
    expect(asked.status).toBe(409);
    expect(asked.body.error).toBe(ADVERTISING_WARNING);
    expect(asked.body.error).toContain("Business and Professions Code 10140.8");
    expect((await api(user.cookie, "DELETE", `${a.path}/link`, { confirm: true })).status).toBe(200);

    // Now neither the GET, nor the POST that publishes a first page, nor either pack publishes it again.
    const again = await api(user.cookie, "GET", `${a.path}/labelled`);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/^You withdrew this photo's original page on \d{4}-\d{2}-\d{2}\./);
    const firstAgain = await post(user.cookie, `${a.path}/labelled`, { publish: "first" });
    expect(firstAgain.status).toBe(409);
    for (const res of [
      await get(user.cookie, `/api/folders/${folderId}/pack`),
      await post(user.cookie, `/api/folders/${folderId}/pack`, { publish: "new" }),
    ]) {
      const pack = await unzip(res);
      expect(pack.manifest.leftOut[0].reason).toContain("You withdrew");
      expect(Object.keys(pack.files).filter((n) => n.startsWith("photos/"))).toEqual(["photos/01 Living room.jpg"]);
    }
    expect((await linkRows(user.id)).map((r) => [r.revokedReason, r.revokedAt !== null])).toEqual([["owner", true]]);
    expect((await workerFetch(`/api/o/${rows[0]!.token}/staged`)).status).toBe(410);

    // Published again by its owner: then it downloads.
    expect((await api(user.cookie, "POST", `${a.path}/link`)).status).toBe(200);
    expect((await get(user.cookie, `${a.path}/labelled`)).status).toBe(200);
  });
});

describe("downloads and packs follow the listing's profile", () => {
  it("SDMLS: Download for MLS is the stored result, byte for byte; the pack's captions say Digitally Altered with the original's address", async () => {
    const { user, folderId } = await listing("sdmls");
    const a = await altered(user.id, folderId, "Kitchen.jpg");
    const res = await get(user.cookie, `${a.path}/labelled`);
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(a.bytes);
    expect(await linkRows(user.id)).toEqual([]);

    const pack = await unzip(await post(user.cookie, `/api/folders/${folderId}/pack`, { publish: "new" }));
    const [link] = await linkRows(user.id);
    const url = `${env.APP_ORIGIN}/o/${link!.token}`;
    const csv = pack.text("captions.csv").trim().split("\r\n");
    expect(csv[0]).toBe("file,caption,kind,original_link");
    expect(csv[1]).toBe(
      `photos/01 Kitchen - virtual staging.jpg,Digitally Altered (virtually staged). Original: ${url},stage,${url}`,
    );
    expect(JSON.parse(pack.text("captions.json")).photos[0]).toMatchObject({
      caption: expect.stringContaining("Digitally Altered"),
      original_link: url,
    });
    // Clean, as stored, and the original stays out of the upload (by link only).
    expect(pack.files["photos/01 Kitchen - virtual staging.jpg"]).toEqual(a.bytes);
    expect(Object.keys(pack.files).filter((n) => n.startsWith("originals/"))).toEqual([
      "originals/01 Kitchen - original.jpg",
    ]);
  });

  it("CRMLS: each original is next to its altered photo in file order; an unaltered photo is uploaded as it is", async () => {
    const { user, folderId } = await listing("crmls");
    await altered(user.id, folderId, "Living room.jpg");
    await altered(user.id, folderId, "Bedroom.jpg", { kind: "removal" });
    await makePhoto(user.id, { folderId, name: "Front.jpg", createdAt: Date.now() + order++ });
    const pack = await unzip(await get(user.cookie, `/api/folders/${folderId}/pack`));
    expect(
      Object.keys(pack.files)
        .filter((n) => n.startsWith("photos/"))
        .sort(),
    ).toEqual([
      "photos/01 Living room - original.jpg",
      "photos/02 Living room - virtual staging.jpg",
      "photos/03 Bedroom - original.jpg",
      "photos/04 Bedroom - furniture removal.jpg",
      "photos/05 Front.jpg",
    ]);
    expect(pack.manifest.profile).toMatchObject({ id: "crmls", labelOnPhoto: false, chosenBy: "listing" });
    expect(pack.text("captions.csv")).toContain(
      "photos/04 Bedroom - furniture removal.jpg,Digitally Altered: furniture removed,removal,",
    );
    // CRMLS needs no page: none was made.
    expect(await linkRows(user.id)).toEqual([]);
  });

  it("California (the account's default): the manifest gives the label's text, which says where the original is", async () => {
    const { user, folderId } = await listing();
    await altered(user.id, folderId, "Den.jpg", { kind: "sky" });
    const pack = await unzip(await post(user.cookie, `/api/folders/${folderId}/pack`, { publish: "new" }));
    const [link] = await linkRows(user.id);
    const row = pack.manifest.photos[0];
    expect(row.labelText).toBe(
      `Digitally altered photo: sky replaced / Unaltered original: ${env.APP_ORIGIN.replace(/^https?:\/\//, "")}/o/${link!.token}`,
    );
    expect(qrOf(pack.files[row.file]!)).toBe(`${env.APP_ORIGIN}/o/${link!.token}`);
    expect(pack.manifest.profile).toMatchObject({ id: "california", chosenBy: "account" });
  });

  it("a result kept after the structure check refused it is never exported: left out of the pack saying why, refused as a download and as a page", async () => {
    const { user, folderId } = await listing("bright");
    const a = await altered(user.id, folderId, "Hall.jpg", { verdict: "kept", shown: true });
    const pack = await unzip(await get(user.cookie, `/api/folders/${folderId}/pack`));
    expect(pack.manifest.leftOut).toEqual([{ photo: "Hall.jpg", kind: "stage", reason: KEPT_NOT_FOR_MLS }]);
    expect(Object.keys(pack.files).filter((n) => n.startsWith("photos/"))).toEqual(["photos/01 Hall.jpg"]);
    expect(pack.files["photos/01 Hall.jpg"]).toEqual(
      new Uint8Array(await (await env.PHOTOS.get(a.photo.originalKey))!.arrayBuffer()),
    );
    expect(pack.text("captions.csv")).not.toContain("Digitally Altered");
    // The single download, the page's publish and the first Download for MLS: 409 in the check's own words.
    for (const res of [
      await api(user.cookie, "GET", `${a.path}/labelled`),
      await api(user.cookie, "POST", `${a.path}/link`, {}),
    ])
      expect([res.status, res.body.error]).toEqual([409, KEPT_NOT_FOR_MLS]);
    const first = await post(user.cookie, `${a.path}/labelled`, { publish: "first" });
    expect([first.status, ((await first.json()) as { error: string }).error]).toEqual([409, KEPT_NOT_FOR_MLS]);
    const view = await api(user.cookie, "GET", `${a.path}/disclosure`);
    expect(view.body.disclosure).toMatchObject({ exportable: false, reason: KEPT_NOT_FOR_MLS });
    expect(await linkRows(user.id)).toEqual([]);
  });

  it("a result the structure check refused is never chosen for a listing: the pack takes the photo's passed result, or the original alone", async () => {
    const { user, folderId } = await listing("sdmls");
    const hall = await altered(user.id, folderId, "Hall.jpg", { verdict: "passed" });
    const newer = await addVersion(user.id, hall.photo, { verdict: "refused" });
    const den = await altered(user.id, folderId, "Den.jpg", { verdict: "refused" });
    const pack = await unzip(await post(user.cookie, `/api/folders/${folderId}/pack`, { publish: "new" }));
    expect(pack.manifest.leftOut).toEqual([]);
    // The captions give the original's address: only the passed result's page was published.
    expect((await linkRows(user.id)).map((l) => l.versionId)).toEqual([hall.versionId]);
    // Hall: its passed result, byte for byte (SDMLS puts nothing on the photo); Den: its original, as unaltered.
    expect(pack.files["photos/01 Hall - virtual staging.jpg"]).toEqual(hall.bytes);
    expect(pack.manifest.photos.map((p: { kind: string }) => p.kind)).toEqual(["stage", "unaltered"]);
    expect(pack.files["photos/02 Den.jpg"]).toEqual(
      new Uint8Array(await (await env.PHOTOS.get(den.photo.originalKey))!.arrayBuffer()),
    );
    for (const path of [newer.path, den.path]) {
      const res = await api(user.cookie, "GET", `${path}/labelled`);
      expect([res.status, res.body.error]).toEqual([409, REFUSED_NOT_DOWNLOADED]);
    }
  });

  it("the original page lists only the versions that may go out: not one the check refused, nor one kept anyway", async () => {
    const { user, folderId } = await listing("link-only");
    const a = await altered(user.id, folderId, "Hall.jpg", { kind: "sky", verdict: "passed" });
    const published = await api(user.cookie, "POST", `${a.path}/link`, {});
    expect(published.status).toBe(200);
    const token = (await linkRows(user.id))[0]!.token;
    const kept = await addVersion(user.id, a.photo, { verdict: "kept", shown: true });
    const refused = await addVersion(user.id, a.photo, { verdict: "refused" });
    const unchecked = await addVersion(user.id, a.photo, { kind: "removal", verdict: "unchecked" });
    const page = await resolveLink(db, token, Date.now());
    if (!page.ok) throw new Error(page.error);
    expect(page.page.versions.map((v) => v.id)).toEqual([a.versionId, unchecked.versionId]);
    for (const v of [kept, refused]) {
      const res = await get(user.cookie, `/api/o/${token}/versions/${v.versionId}`);
      expect(res.status).toBe(404);
    }
  });

  it("a version whose page its owner withdrew is not shown on the photo's other pages either", async () => {
    const { user, folderId } = await listing("link-only");
    const a = await altered(user.id, folderId, "Porch.jpg", { kind: "sky", verdict: "passed" });
    const b = await addVersion(user.id, a.photo, { kind: "sky", verdict: "passed" });
    for (const path of [a.path, b.path]) expect((await api(user.cookie, "POST", `${path}/link`, {})).status).toBe(200);
    const tokenOf = async (versionId: string) =>
      (await linkRows(user.id)).find((l) => l.versionId === versionId && l.revokedAt === null)!.token;
    const second = await tokenOf(b.versionId);
    const shown = async () => {
      const page = await resolveLink(db, second, Date.now());
      if (!page.ok) throw new Error(page.error);
      return page.page.versions.map((v) => v.id).sort();
    };
    expect(await shown()).toEqual([a.versionId, b.versionId].sort());
    expect((await api(user.cookie, "DELETE", `${a.path}/link`, { confirm: true })).status).toBe(200);
    expect(await shown()).toEqual([b.versionId]);
    expect((await get(user.cookie, `/api/o/${second}/versions/${a.versionId}`)).status).toBe(404);
    // Published again, it is back.
    expect((await api(user.cookie, "POST", `${a.path}/link`, {})).status).toBe(200);
    expect(await shown()).toEqual([a.versionId, b.versionId].sort());
  });

  it("Stellar: the remarks line is the captions' last row", async () => {
    const { user, folderId } = await listing("stellar");
    await altered(user.id, folderId, "Patio.jpg");
    const pack = await unzip(await get(user.cookie, `/api/folders/${folderId}/pack`));
    expect(pack.text("captions.csv").trim().split("\r\n").at(-1)).toBe(
      ",One or more photo(s) was virtually staged.,listing remarks,",
    );
    expect(JSON.parse(pack.text("captions.json")).remarks).toBe("One or more photo(s) was virtually staged.");
  });

  it("the public API's download follows the profile too; ?disclosure=none is the stored result", async () => {
    const { user, folderId } = await listing();
    const a = await altered(user.id, folderId, "Study.jpg");
    const key = await createApiKey({ db, env, clock: Date.now }, user.id, { name: "sync", scopes: ["stage", "read"] });
    if (!key.ok) throw new Error(key.error);
    const v1 = (path: string, init: RequestInit = {}) =>
      workerFetch(`/api/v1/photos/${a.photo.id}/versions/${a.versionId}${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${key.token}` },
      });
    expect((await v1("/download")).status).toBe(409);
    expect(await linkRows(user.id)).toEqual([]);
    const raw = await v1("/download?disclosure=none");
    expect(new Uint8Array(await raw.arrayBuffer())).toEqual(a.bytes);
    const published = await v1("/original-page", { method: "POST" });
    expect(published.status).toBe(200);
    const { url } = (await published.json()) as { url: string };
    const labelled = await v1("/download");
    expect(labelled.status).toBe(200);
    expect(qrOf(new Uint8Array(await labelled.arrayBuffer()))).toBe(url);
  });

  it("the public API: a kept result is 409 for the listing and the owner's own copy with ?disclosure=none; a refused one is 409 both ways", async () => {
    const { user, folderId } = await listing("sdmls");
    const kept = await altered(user.id, folderId, "Study.jpg", { verdict: "kept", shown: true });
    const refused = await altered(user.id, folderId, "Den.jpg", { verdict: "refused" });
    const key = await createApiKey({ db, env, clock: Date.now }, user.id, { name: "sync", scopes: ["stage", "read"] });
    if (!key.ok) throw new Error(key.error);
    const v1 = async (v: { photo: Photo; versionId: string }, path: string, method = "GET") => {
      const res = await workerFetch(`/api/v1/photos/${v.photo.id}/versions/${v.versionId}${path}`, {
        method,
        headers: { Authorization: `Bearer ${key.token}` },
      });
      return { status: res.status, res };
    };
    const failure = async (r: { status: number; res: Response }) => [
      r.status,
      ((await r.res.json()) as { error: string }).error,
    ];
    expect(await failure(await v1(kept, "/download"))).toEqual([409, KEPT_NOT_FOR_MLS]);
    expect(await failure(await v1(kept, "/original-page", "POST"))).toEqual([409, KEPT_NOT_FOR_MLS]);
    const own = await v1(kept, "/download?disclosure=none");
    expect(own.status).toBe(200);
    expect(new Uint8Array(await own.res.arrayBuffer())).toEqual(kept.bytes);
    expect(await failure(await v1(refused, "/download"))).toEqual([409, REFUSED_NOT_DOWNLOADED]);
    expect(await failure(await v1(refused, "/download?disclosure=none"))).toEqual([409, REFUSED_NOT_DOWNLOADED]);
    expect(await linkRows(user.id)).toEqual([]);
  });
});

describe("a listing's status keeps its originals up while it advertises", () => {
  it("once its pages have closed, before the daily cron marks them, no export gives their address; a trashed photo is not downloaded for MLS", async () => {
    const { user, folderId } = await listing();
    const a = await altered(user.id, folderId, "Den.jpg");
    const b = await altered(user.id, folderId, "Hall.jpg");
    for (const x of [a, b])
      expect((await post(user.cookie, `${x.path}/labelled`, { publish: "first" })).status).toBe(200);
    // Trashed (confirmed): its page answers 410, and so does its download for MLS, with what to do.
    const trashed = await runLibraryAction({ db, bucket: env.PHOTOS }, user.id, {
      intent: "trash",
      photoId: b.photo.id,
      confirm: "1",
    });
    expect(trashed.ok).toBe(true);
    const fromTrash = await post(user.cookie, `${b.path}/labelled`, { publish: "first" });
    expect([fromTrash.status, ((await fromTrash.json()) as { error: string }).error]).toEqual([
      409,
      TRASHED_NOT_EXPORTED,
    ]);
    // Sold with 0 days: the pages close now; the cron has not run, so the link rows are still unrevoked.
    const sold = await api(user.cookie, "PUT", `/api/folders/${folderId}/status`, {
      status: "sold",
      closeAfterDays: 0,
    });
    expect(sold.status).toBe(200);
    expect((await linkRows(user.id)).every((l) => l.revokedAt === null)).toBe(true);
    const label = await workerFetch(`${a.path}/labelled`, { headers: { Cookie: user.cookie } });
    expect(label.status).toBe(409);
    expect(((await label.json()) as { error: string }).error).toContain("after its listing was marked sold");
    const relink = await api(user.cookie, "POST", `${a.path}/link`);
    expect(relink.status).toBe(409);
    const pack = await workerFetch(`/api/folders/${folderId}/pack`, { headers: { Cookie: user.cookie } });
    if (pack.status === 200) {
      const files = unzipSync(new Uint8Array(await pack.arrayBuffer()));
      const text = Object.entries(files)
        .filter(([name]) => /\.(csv|txt|json)$/.test(name))
        .map(([, bytes]) => new TextDecoder().decode(bytes))
        .join("\n");
      for (const l of await linkRows(user.id)) expect(text).not.toContain(l.token);
    } else expect(pack.status).toBe(409);
    // The cron marks them later, as it does every closed listing's.
    await closeSoldListings(db, Date.now() + 1);
    expect((await linkRows(user.id)).every((l) => l.revokedAt !== null)).toBe(true);
  });

  it("marked sold, its pages close after the chosen days (the cron, with the clock moved), answering 410; they cannot be published again", async () => {
    const { user, folderId } = await listing();
    const a = await altered(user.id, folderId, "Bath.jpg");
    const made = await post(user.cookie, `${a.path}/labelled`, { publish: "first" });
    expect(made.status).toBe(200);
    const [link] = await linkRows(user.id);
    const sold = await api(user.cookie, "PUT", `/api/folders/${folderId}/status`, {
      status: "sold",
      closeAfterDays: 10,
    });
    expect(sold.status).toBe(200);
    expect(sold.body.message).toMatch(/close on \d{4}-\d{2}-\d{2}/);
    // Sold: withdrawing no longer asks.
    const now = Date.now();
    expect(await closeSoldListings(db, now + 9 * DAY)).toBe(0);
    expect((await workerFetch(`/api/o/${link!.token}/staged`)).status).toBe(200);
    // The page itself closes on time, even before the cron has run.
    expect(await resolveLink(db, link!.token, now + 10 * DAY + 1000)).toMatchObject({ ok: false, code: "gone" });
    expect(await closeSoldListings(db, now + 10 * DAY + 1000)).toBe(1);
    expect((await workerFetch(`/api/o/${link!.token}/original`)).status).toBe(410);
    expect((await linkRows(user.id))[0]).toMatchObject({ revokedReason: "listing_closed" });
    // Once its closing moment has passed (here: sold again with 0 days), no page of it is published again.
    await api(user.cookie, "PUT", `/api/folders/${folderId}/status`, { status: "sold", closeAfterDays: 0 });
    const republish = await api(user.cookie, "POST", `${a.path}/link`);
    expect(republish.status).toBe(409);
    expect(republish.body.error).toContain("marked sold");
  });

  it("trashing a photo whose page advertises an active listing asks first and names the law; confirmed, it is trashed", async () => {
    const { user, folderId } = await listing();
    const a = await altered(user.id, folderId, "Garden.jpg");
    expect((await post(user.cookie, `${a.path}/labelled`, { publish: "first" })).status).toBe(200);
    const deps = { db, bucket: env.PHOTOS };
    const asked = await runLibraryAction(deps, user.id, { intent: "trash", photoId: a.photo.id });
    expect(asked).toMatchObject({ ok: false, code: "conflict", ask: { intent: "trash", photoId: a.photo.id } });
    expect(!asked.ok && asked.error).toContain("10140.8");
    expect((await db.select().from(photos).where(eq(photos.id, a.photo.id)).get())?.trashedAt).toBeNull();
    const done = await runLibraryAction(deps, user.id, { intent: "trash", photoId: a.photo.id, confirm: "1" });
    expect(done).toMatchObject({ ok: true });
    expect((await db.select().from(photos).where(eq(photos.id, a.photo.id)).get())?.trashedAt).not.toBeNull();
    // In a sold listing nothing asks; the account's deletion warns of advertising pages only.
    const sold = await listing();
    const b = await altered(sold.user.id, sold.folderId, "Yard.jpg");
    expect((await post(sold.user.cookie, `${b.path}/labelled`, { publish: "first" })).status).toBe(200);
    expect(await advertisedPages(db, sold.user.id)).toBe(1);
    await api(sold.user.cookie, "PUT", `/api/folders/${sold.folderId}/status`, { status: "sold", closeAfterDays: 30 });
    expect(await advertisedPages(db, sold.user.id)).toBe(0);
    expect(await runLibraryAction(deps, sold.user.id, { intent: "trash", photoId: b.photo.id })).toMatchObject({
      ok: true,
    });
  });

  it("the listing forms refuse an unknown profile, a stranger's folder and a deleted one, changing nothing", async () => {
    const { user, folderId } = await listing();
    const other = await signedIn();
    const deps = { db, clock: Date.now };
    const form = (fields: Record<string, string>) => checkFields(listingActionInput, fields);
    const saved = form({ intent: "listing", folderId, address: "12 Oak Lane", mlsNumber: "", profile: "sdmls" });
    if (!saved.ok) throw new Error(saved.error);
    expect(await runListingAction(deps, user.id, saved.data)).toMatchObject({ ok: true });
    expect((await db.select().from(folders).where(eq(folders.id, folderId)).get())?.mlsProfile).toBe("sdmls");
    expect(form({ intent: "listing", folderId, profile: "nowhere-mls" })).toMatchObject({
      ok: false,
      code: "invalid",
      error: "Pick one of the MLS profiles offered.",
    });
    const sold = form({ intent: "listing-status", folderId, status: "sold", closeAfterDays: "1" });
    if (!sold.ok) throw new Error(sold.error);
    expect(await runListingAction(deps, other.id, sold.data)).toMatchObject({ ok: false, code: "not_found" });
    expect((await db.select().from(folders).where(eq(folders.id, folderId)).get())?.listingStatus).toBe("active");
    const unknown = await api(user.cookie, "PUT", `/api/folders/${folderId}/listing`, { profile: "nowhere-mls" });
    expect(unknown.status).toBe(400);
    await db.delete(folders).where(eq(folders.id, folderId));
    const gone = await api(user.cookie, "PUT", `/api/folders/${folderId}/status`, { status: "sold" });
    expect(gone.status).toBe(404);
  });
});
