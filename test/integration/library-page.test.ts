import { batches } from "@db/schema";
import { db, makeUser } from "@test/support/factories";
import { makePhotoRows } from "@test/support/photos";
import { liveCreditsOf } from "@workers/services/account";
import { recentBatches } from "@workers/services/jobs/batch-pages";
import {
  createFolder,
  encodeCursor,
  getFolder,
  listFolders,
  listPhotos,
  movePhoto,
  trashPhoto,
} from "@workers/services/library";
import { type LibraryQuery, libraryPage, libraryReads } from "@workers/services/library-page";
import { createSession, SESSION_TTL_MS, validateSessionToken } from "@workers/services/sessions";
import { describe, expect, it } from "vitest";

// /dashboard's reads in the session's statement (docs/decisions/0144-dashboard-reads-with-the-session.md):
// scoped to the session's user, nothing for an expired session, and the same page as the library's own
// functions give (the JSON columns are mapped back to the schema's rows).

const DAY = 24 * 60 * 60 * 1000;

async function userWithLibrary(name: string) {
  const user = await makeUser();
  const folder = await createFolder(db, user.id, `${name} folder`, 1000);
  await createFolder(db, user.id, `${name} second`, 2000);
  // Two photos at the same time: the id breaks the tie, as in the grid's own order.
  const rows = await makePhotoRows(user.id, 4, (i) => 10_000 + Math.min(i, 2));
  await movePhoto(db, user.id, rows[0]!.id, folder.id);
  await trashPhoto(db, user.id, rows[1]!.id);
  await db.insert(batches).values([
    { id: `b1${user.id}`.slice(0, 32), userId: user.id, folderId: null, designStyle: "modern", createdAt: Date.now() },
    { id: `b0${user.id}`.slice(0, 32), userId: user.id, folderId: null, designStyle: "modern", createdAt: 5 },
  ]);
  return { ...user, folder, rows };
}

async function withSession(userId: string, q: LibraryQuery) {
  const { token } = await createSession(db, userId, "vitest");
  const found = await validateSessionToken(db, token, Date.now(), libraryReads(q));
  return { token, found, page: await libraryPage(db, userId, q, found && { query: q, values: found.reads! }) };
}

const all: LibraryQuery = { view: { kind: "all" }, cursor: null };

describe("the dashboard's reads with the session's", () => {
  it("reads the session's user's library in the same statement: the same lists as the library's functions", async () => {
    const a = await userWithLibrary("A");
    await userWithLibrary("B");
    const { token, found, page } = await withSession(a.id, all);
    expect(found?.user.id).toBe(a.id);
    // The same user row and session as the session's read alone.
    const alone = await validateSessionToken(db, token);
    expect(found?.user).toEqual(alone?.user);
    expect(found?.session).toEqual(alone?.session);
    expect(alone?.reads).toBeNull();

    expect(page.folders).toEqual(await listFolders(db, a.id));
    expect(page.folders.map((f) => f.name)).toEqual(["A second", "A folder"]);
    expect(page.page).toEqual(await listPhotos(db, a.id, { kind: "all" }));
    expect(page.page.photos).toHaveLength(3);
    expect(page.batches).toEqual(await recentBatches(db, a.id, 3, Date.now() - DAY));
    expect(page.batches).toHaveLength(1);
    expect(page.folder).toBeNull();
    // And the loader's own read (no preload) gives the same page.
    expect(await libraryPage(db, a.id, all)).toEqual(page);
  });

  it("reads a folder view with its folder and a later page by its cursor; a stranger's folder is not found", async () => {
    const a = await userWithLibrary("A");
    const b = await userWithLibrary("B");
    const own: LibraryQuery = { view: { kind: "folder", folderId: a.folder.id }, cursor: null };
    const { page } = await withSession(a.id, own);
    expect(page.folder).toEqual(await getFolder(db, a.id, a.folder.id));
    expect(page.page.photos.map((p) => p.id)).toEqual([a.rows[0]!.id]);

    const first = await listPhotos(db, a.id, { kind: "all" }, { limit: 2 });
    const later: LibraryQuery = { view: { kind: "all" }, cursor: encodeCursor(first.photos[0]!) };
    expect((await withSession(a.id, later)).page.page).toEqual(
      await listPhotos(db, a.id, { kind: "all" }, { cursor: later.cursor }),
    );

    const strangers: LibraryQuery = { view: { kind: "folder", folderId: b.folder.id }, cursor: null };
    const refused = (await withSession(a.id, strangers)).page;
    expect(refused.folder).toBeUndefined();
    expect(refused.page.photos).toEqual([]);
    // The folder view's statement is built once and bound after: B's own folder, read through the statement A's
    // reads built, is B's, with B's photo.
    const bOwn = (await withSession(b.id, strangers)).page;
    expect(bOwn.folder).toEqual(await getFolder(db, b.id, b.folder.id));
    expect(bOwn.page.photos.map((p) => p.id)).toEqual([b.rows[0]!.id]);
  });

  it("refuses an expired session, and a preload made for another view is not used", async () => {
    const a = await userWithLibrary("A");
    const old = await createSession(db, a.id, "vitest", Date.now() - SESSION_TTL_MS - 1000);
    expect(await validateSessionToken(db, old.token, Date.now(), libraryReads(all))).toBeNull();

    const trash: LibraryQuery = { view: { kind: "trash" }, cursor: null };
    const stale = { query: all, values: { libFolders: "[]", libPhotos: "[]", libBatches: "[]" } };
    const page = await libraryPage(db, a.id, trash, stale);
    expect(page.page.photos.map((p) => p.id)).toEqual([a.rows[1]!.id]);
  });

  it("takes the status card's balance and plan from the session's user row", async () => {
    const a = await makeUser({ credits: 7 });
    const { token } = await createSession(db, a.id, "vitest");
    const found = await validateSessionToken(db, token);
    expect(liveCreditsOf(found!.user)).toEqual({ credits: 7, plan: null });
    expect(
      liveCreditsOf({ ...found!.user, plan: "Popular plan", planCredits: 100, planInterval: "month" }).plan,
    ).toEqual({ name: "Popular plan", credits: 100 });
    // A plan name the catalogue does not know shows no plan (as accountSummary).
    expect(liveCreditsOf({ ...found!.user, plan: "Nope", planCredits: 5, planInterval: "month" }).plan).toBeNull();
  });
});
