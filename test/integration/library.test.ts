import { env, exports } from "cloudflare:workers";
import { folders, photos, uploadSessions } from "@db/schema";
import { makeJpeg } from "@test/fixtures/images";
import { db, makeUser, signedIn } from "@test/support/factories";
import { intercept } from "@test/support/intercept";
import { makePhoto, makePhotoRows, photoRows, storedKeys } from "@test/support/photos";
import { workerFetch } from "@test/support/worker";
import {
  createFolder,
  deleteFolder,
  deletePhotoForever,
  emptyTrash,
  listFolders,
  listPhotos,
  movePhoto,
  purgeTrash,
  restorePhoto,
  STALE_PURGE_MS,
  TRASH_RETENTION_MS,
  trashPhoto,
} from "@workers/services/library";
import { LIBRARY_NOT_FOUND, runLibraryAction } from "@workers/services/library-actions";
import { MAX_FOLDERS, TOO_MANY_FOLDERS } from "@workers/services/teams/listings";
import { createUpload, expireStaleUploads, putChunk, STALE_UPLOAD_MS } from "@workers/services/uploads";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";

// These move megabytes through workerd; on a busy 2-core machine that can pass the 5 s default.
vi.setConfig({ testTimeout: 20_000 });

const ids = (page: { photos: { id: string }[] }) => page.photos.map((p) => p.id);

describe("folders", () => {
  it("a person keeps at most MAX_FOLDERS folders, however many are made at once", async () => {
    const { id } = await makeUser();
    const rows = Array.from({ length: MAX_FOLDERS - 2 }, (_, i) => ({
      id: `f${i}-${id}`.slice(0, 32),
      userId: id,
      name: `Folder ${i}`,
      createdAt: i,
    }));
    // Seven rows a statement: D1 binds at most 100 parameters.
    for (let i = 0; i < rows.length; i += 7) await db.insert(folders).values(rows.slice(i, i + 7));
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        runLibraryAction({ db, bucket: env.PHOTOS }, id, { intent: "create-folder", name: "One more" }),
      ),
    );
    const made = answers.filter((a) => a.ok).length;
    expect(made).toBeGreaterThan(0);
    expect(made).toBeLessThanOrEqual(2);
    for (const a of answers) if (!a.ok) expect(a).toMatchObject({ code: "conflict", error: TOO_MANY_FOLDERS });
    const kept = await db.select({ id: folders.id }).from(folders).where(eq(folders.userId, id)).all();
    expect(kept.length).toBeLessThanOrEqual(MAX_FOLDERS);
  });
  it("adds a new folder at the top and cleans its name", async () => {
    const { id } = await makeUser();
    await createFolder(db, id, "Kitchen", 1000);
    await createFolder(db, id, "  Bedroom\u0007  upstairs ", 2000);
    await createFolder(db, id, "   ", 3000);
    expect((await listFolders(db, id)).map((f) => f.name)).toEqual(["New Folder", "Bedroom upstairs", "Kitchen"]);
  });

  it("drops right-to-left overrides and other bidi controls from folder and photo names", async () => {
    const { id } = await makeUser();
    await createFolder(db, id, "Main\u202E St\u2066 listing\u2069", 1000);
    expect((await listFolders(db, id)).map((f) => f.name)).toEqual(["Main St listing"]);
    const upload = await createUpload({ db, bucket: env.PHOTOS }, id, {
      name: "invoice\u202Egpj.exe.jpg",
      size: 1000,
      type: "image/jpeg",
    });
    expect(upload.ok).toBe(true);
    const session = await db.select().from(uploadSessions).where(eq(uploadSessions.userId, id)).get();
    expect(session?.name).toBe("invoicegpj.exe");
  });

  it("moves photos in and out; deleting the folder keeps its photos, now unassigned", async () => {
    const { id } = await makeUser();
    const folder = await createFolder(db, id, "Listing 12 Elm St");
    const a = await makePhoto(id, { createdAt: 1 });
    const b = await makePhoto(id, { createdAt: 2 });
    expect(await movePhoto(db, id, a.id, folder.id)).toBe("moved");
    expect(await movePhoto(db, id, b.id, folder.id)).toBe("moved");
    expect(ids(await listPhotos(db, id, { kind: "folder", folderId: folder.id }))).toEqual([b.id, a.id]);
    expect(ids(await listPhotos(db, id, { kind: "unassigned" }))).toEqual([]);

    expect(await movePhoto(db, id, b.id, null)).toBe("moved");
    expect(ids(await listPhotos(db, id, { kind: "unassigned" }))).toEqual([b.id]);

    expect(await deleteFolder(db, id, folder.id)).toBe("deleted");
    expect(await listFolders(db, id)).toEqual([]);
    expect(ids(await listPhotos(db, id, { kind: "unassigned" }))).toEqual([b.id, a.id]);
    expect(ids(await listPhotos(db, id, { kind: "all" }))).toEqual([b.id, a.id]);
    expect(await storedKeys(id)).toHaveLength(4);
  });

  it("never touches another user's folder or photo", async () => {
    const owner = await makeUser();
    const stranger = await makeUser();
    const folder = await createFolder(db, owner.id, "Mine");
    const photo = await makePhoto(owner.id);
    const theirs = await makePhoto(stranger.id);

    expect(await movePhoto(db, stranger.id, photo.id, null)).toBe("not-found");
    // Into someone else's folder, even one's own photo: refused.
    expect(await movePhoto(db, stranger.id, theirs.id, folder.id)).toBe("not-found");
    expect(await deleteFolder(db, stranger.id, folder.id)).toBe("not-found");
    expect(await trashPhoto(db, stranger.id, photo.id)).toBe(false);
    await trashPhoto(db, owner.id, photo.id);
    expect(await restorePhoto(db, stranger.id, photo.id)).toBe(false);
    expect(await deletePhotoForever(db, env.PHOTOS, stranger.id, photo.id)).toBe(false);
    expect(await emptyTrash(db, env.PHOTOS, stranger.id)).toBe(0);

    expect(await listFolders(db, owner.id)).toHaveLength(1);
    expect(await photoRows(owner.id)).toBe(1);
    expect(await storedKeys(owner.id)).toHaveLength(2);
    expect(ids(await listPhotos(db, stranger.id, { kind: "folder", folderId: folder.id }))).toEqual([]);
  });
});

describe("the dashboard's library actions", () => {
  const deps = { db, bucket: env.PHOTOS };

  it("answers each intent with the message the page shows, and another user's photo as not found", async () => {
    const owner = await makeUser();
    const stranger = await makeUser();
    const photo = await makePhoto(owner.id);
    const made = await runLibraryAction(deps, owner.id, { intent: "create-folder", name: "Elm St" });
    expect(made).toEqual({ ok: true, message: 'Folder "Elm St" created.' });
    const [folder] = await listFolders(db, owner.id);
    expect(await runLibraryAction(deps, owner.id, { intent: "move", photoId: photo.id, folderId: folder!.id })).toEqual(
      { ok: true, message: "Photo moved." },
    );
    expect(await runLibraryAction(deps, stranger.id, { intent: "trash", photoId: photo.id })).toEqual({
      ok: false,
      code: "not_found",
      error: LIBRARY_NOT_FOUND,
    });
    expect(await runLibraryAction(deps, owner.id, { intent: "trash", photoId: photo.id })).toMatchObject({ ok: true });
    expect(await runLibraryAction(deps, owner.id, { intent: "empty-trash" })).toEqual({
      ok: true,
      message: "1 photo deleted for good.",
    });
    expect(await storedKeys(owner.id)).toEqual([]);
    expect(await runLibraryAction(deps, owner.id, { intent: "delete-folder", folderId: folder!.id })).toEqual({
      ok: true,
      message: "Folder deleted. Its photos are now under Unassigned Photos.",
      deletedFolderId: folder!.id,
    });
  });
});

describe("trash", () => {
  it("moves a photo to the trash, restores it into its folder, and empties the trash for good", async () => {
    const { id } = await makeUser();
    const folder = await createFolder(db, id, "Listing");
    const keep = await makePhoto(id, { folderId: folder.id, createdAt: 10 });
    const gone = await makePhoto(id, { createdAt: 20 });
    expect(await trashPhoto(db, id, keep.id)).toBe(true);
    expect(await trashPhoto(db, id, keep.id)).toBe(false);
    expect(ids(await listPhotos(db, id, { kind: "all" }))).toEqual([gone.id]);
    expect(ids(await listPhotos(db, id, { kind: "trash" }))).toEqual([keep.id]);
    // A photo in the trash cannot be moved.
    expect(await movePhoto(db, id, keep.id, null)).toBe("not-found");

    expect(await restorePhoto(db, id, keep.id)).toBe(true);
    expect(ids(await listPhotos(db, id, { kind: "folder", folderId: folder.id }))).toEqual([keep.id]);

    await trashPhoto(db, id, gone.id);
    await trashPhoto(db, id, keep.id);
    expect(await emptyTrash(db, env.PHOTOS, id)).toBe(2);
    expect(await photoRows(id)).toBe(0);
    expect(await storedKeys(id)).toEqual([]);
  });

  it("deletes one trashed photo forever, but never a live one", async () => {
    const { id } = await makeUser();
    const live = await makePhoto(id);
    const trashed = await makePhoto(id, { trashedAt: Date.now() });
    expect(await deletePhotoForever(db, env.PHOTOS, id, live.id)).toBe(false);
    expect(await deletePhotoForever(db, env.PHOTOS, id, trashed.id)).toBe(true);
    expect(await photoRows(id)).toBe(1);
    expect((await storedKeys(id)).every((k) => k.includes(live.id))).toBe(true);
  });

  it("purges photos trashed 30 days ago, bytes and rows, and keeps younger ones", async () => {
    const { id } = await makeUser();
    const now = Date.now();
    const old = await makePhoto(id, { trashedAt: now - TRASH_RETENTION_MS - 1 });
    const young = await makePhoto(id, { trashedAt: now - TRASH_RETENTION_MS + 60_000 });
    const live = await makePhoto(id);
    expect(await purgeTrash(db, env.PHOTOS, now)).toBeGreaterThanOrEqual(1);
    const left = await db.select({ id: photos.id }).from(photos).where(eq(photos.userId, id)).all();
    expect(left.map((r) => r.id).sort()).toEqual([young.id, live.id].sort());
    expect((await storedKeys(id)).some((k) => k.includes(old.id))).toBe(false);
    expect(await storedKeys(id)).toHaveLength(4);
  });
});

describe("deleting for good while a restore lands (ADR 0346)", () => {
  /** The photo bucket, calling `during` before its first deletion goes through. */
  function bucketThatWaits(during: () => Promise<void>): R2Bucket {
    let first = true;
    return intercept(env.PHOTOS, "delete", async (keys: string | string[]) => {
      if (first) {
        first = false;
        await during();
      }
      return env.PHOTOS.delete(keys);
    });
  }

  it("refuses a restore that lands once the photo's bytes are going, and the photo is gone whole", async () => {
    const { id } = await makeUser();
    const photo = await makePhoto(id, { trashedAt: Date.now() });
    let restored: boolean | undefined;
    const bucket = bucketThatWaits(async () => {
      restored = await restorePhoto(db, id, photo.id);
    });
    expect(await deletePhotoForever(db, bucket, id, photo.id)).toBe(true);
    expect(restored).toBe(false);
    expect(await photoRows(id)).toBe(0);
    expect(await storedKeys(id)).toEqual([]);
  });

  it("keeps whole a photo restored after the trash was read but before its turn came", async () => {
    const { id } = await makeUser();
    const first = await makePhoto(id, { trashedAt: Date.now(), createdAt: 10 });
    const second = await makePhoto(id, { trashedAt: Date.now(), createdAt: 20 });
    const keysBefore = (await storedKeys(id)).filter((k) => k.includes(second.id));
    expect(keysBefore.length).toBeGreaterThan(0);
    // Whichever goes first, the other is restored while the first one's bytes are deleted.
    let restored: string | undefined;
    const bucket = bucketThatWaits(async () => {
      for (const p of [first, second]) if (await restorePhoto(db, id, p.id)) restored = p.id;
    });
    expect(await emptyTrash(db, bucket, id)).toBe(1);
    expect(restored).toBeDefined();
    const left = await db
      .select({ id: photos.id, trashedAt: photos.trashedAt })
      .from(photos)
      .where(eq(photos.userId, id))
      .all();
    expect(left).toEqual([{ id: restored, trashedAt: null }]);
    const kept = (await storedKeys(id)).filter((k) => k.includes(restored!));
    expect(kept.length).toBe(keysBefore.length);
    expect(await storedKeys(id)).toEqual(kept);
  });

  it("leaves a deletion cut short out of the trash and finishes it in the daily purge", async () => {
    const { id } = await makeUser();
    const photo = await makePhoto(id, { trashedAt: Date.now() });
    const failing = intercept(env.PHOTOS, "delete", () => Promise.reject(new Error("R2 unavailable")));
    await expect(deletePhotoForever(db, failing, id, photo.id)).rejects.toThrow("R2 unavailable");
    // Claimed: not offered back, not restorable, its row and bytes still there to finish.
    expect(ids(await listPhotos(db, id, { kind: "trash" }))).toEqual([]);
    expect(await restorePhoto(db, id, photo.id)).toBe(false);
    expect(await photoRows(id)).toBe(1);
    // Within the hour the daily purge leaves it to whoever cut it short; after it, the purge finishes it.
    const now = Date.now();
    await purgeTrash(db, env.PHOTOS, now);
    expect(await photoRows(id)).toBe(1);
    expect(await purgeTrash(db, env.PHOTOS, now + STALE_PURGE_MS + 1)).toBeGreaterThanOrEqual(1);
    expect(await photoRows(id)).toBe(0);
    expect(await storedKeys(id)).toEqual([]);
  });
});

describe("the grid's pages", () => {
  it("pages 130 photos newest first with no gap and no repeat, equal times included", async () => {
    const { id } = await makeUser();
    const made = await makePhotoRows(id, 130, (i) => 1_000 + Math.floor(i / 3));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await listPhotos(db, id, { kind: "all" }, { cursor, limit: 60 });
      seen.push(...ids(page));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(130);
    const expected = [...made].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1)).map((p) => p.id);
    expect(seen).toEqual(expected);
  });

  it("gives each card a versioned thumbnail address and its size, never a storage key", async () => {
    const { id } = await makeUser();
    const p = await makePhoto(id, { thumbWidth: 400, thumbHeight: 267 });
    const [card] = (await listPhotos(db, id, { kind: "all" })).photos;
    expect(card).toEqual({
      id: p.id,
      name: "Room",
      createdAt: p.createdAt,
      trashedAt: null,
      folderId: null,
      processed: false,
      thumbUrl: `/api/photos/${p.id}/thumb?v=0`,
      thumbWidth: 400,
      thumbHeight: 267,
    });
  });

  it("serves the same pages as JSON to their owner only", async () => {
    const owner = await signedIn();
    const stranger = await signedIn();
    const p = await makePhoto(owner.id);
    const mine = await workerFetch("/api/photos", { headers: { Cookie: owner.cookie } });
    expect(ids((await mine.json()) as { photos: { id: string }[] })).toEqual([p.id]);
    const theirs = await workerFetch("/api/photos", { headers: { Cookie: stranger.cookie } });
    expect(await theirs.json()).toEqual({ photos: [], nextCursor: null });
  });

  it("shows the processed thumbnail when there is one", async () => {
    const user = await signedIn();
    const processedThumb = makeJpeg(30, 20, 60);
    const key = `photos/${user.id}/processed-thumb-test`;
    await env.PHOTOS.put(key, processedThumb, { httpMetadata: { contentType: "image/jpeg" } });
    const p = await makePhoto(user.id, { processedThumbKey: key, processedKey: key, processedAt: 42 });
    const [card] = (await listPhotos(db, user.id, { kind: "all" })).photos;
    expect(card?.processed).toBe(true);
    const res = await workerFetch(card!.thumbUrl, { headers: { Cookie: user.cookie } });
    expect(card!.thumbUrl).toBe(`/api/photos/${p.id}/thumb?v=42`);
    expect((await res.arrayBuffer()).byteLength).toBe(processedThumb.byteLength);
    // An old address (another version) is not cached for good.
    const stale = await workerFetch(`/api/photos/${p.id}/thumb?v=0`, { headers: { Cookie: user.cookie } });
    expect(stale.headers.get("Cache-Control")).toBe("private, no-cache");
  });
});

describe("the daily cron", () => {
  it("deletes the bytes of uploads abandoned for a day and keeps fresh ones", async () => {
    const { id } = await makeUser();
    const bucket = env.PHOTOS;
    const jpeg = makeJpeg(50, 50);
    const old = await createUpload({ db, bucket, now: Date.now() - STALE_UPLOAD_MS - 1000 }, id, {
      name: "a.jpg",
      size: jpeg.byteLength,
      type: "image/jpeg",
    });
    const fresh = await createUpload({ db, bucket }, id, { name: "b.jpg", size: jpeg.byteLength, type: "image/jpeg" });
    if (!old.ok || !fresh.ok) throw new Error("create failed");
    // The old one's chunk arrived long ago (its session's clock says so).
    await putChunk({ db, bucket, now: Date.now() - STALE_UPLOAD_MS - 1000 }, id, old.id, 0, new Blob([jpeg]).stream());
    await putChunk({ db, bucket }, id, fresh.id, 0, new Blob([jpeg]).stream());
    expect(await storedKeys(id)).toHaveLength(2);

    expect(await expireStaleUploads({ db, bucket })).toBeGreaterThanOrEqual(1);
    expect(await storedKeys(id)).toHaveLength(1);
    const rows = await db.select().from(uploadSessions).where(eq(uploadSessions.userId, id)).all();
    expect(Object.fromEntries(rows.map((r) => [r.id, r.status]))).toEqual({ [old.id]: "expired", [fresh.id]: "open" });
  });

  it("is wired to the Worker's scheduled handler", async () => {
    const { id } = await makeUser();
    const old = await makePhoto(id, { trashedAt: Date.now() - TRASH_RETENTION_MS - 1 });
    const worker = (
      exports as unknown as { default: { scheduled(c: { scheduledTime: Date; cron: string }): Promise<unknown> } }
    ).default;
    await worker.scheduled({ scheduledTime: new Date(), cron: "17 3 * * *" });
    expect(await photoRows(id)).toBe(0);
    expect((await storedKeys(id)).some((k) => k.includes(old.id))).toBe(false);
  });
});
