import { db, makeUser } from "@test/support/factories";
import { makePhotoRows } from "@test/support/photos";
import { sha256Hex } from "@workers/lib/crypto";
import { liveCreditsOf } from "@workers/services/account";
import { createFolder, movePhoto, trashPhoto } from "@workers/services/library";
import { libraryPage, libraryReads } from "@workers/services/library-page";
import { createSession, SESSION_TTL_MS, sessionUserRef, validateSessionToken } from "@workers/services/sessions";
import { describe, expect, it } from "vitest";

// /dashboard's reads in the session's D1 batch (docs/decisions/0144-dashboard-reads-in-one-batch.md):
// scoped to the session's user, nothing for a stranger's or an expired session, and the same page as the
// loader's own batch.

async function userWithLibrary(name: string) {
  const user = await makeUser();
  const folder = await createFolder(db, user.id, `${name} folder`, 1000);
  const rows = await makePhotoRows(user.id, 3, (i) => 10_000 + i);
  await movePhoto(db, user.id, rows[0]!.id, folder.id);
  await trashPhoto(db, user.id, rows[1]!.id);
  return { ...user, folder, rows };
}

const all = { view: { kind: "all" as const }, cursor: null };

describe("the dashboard's reads with the session's", () => {
  it("reads the session's user's library in the same batch, and the page equals the loader's own read", async () => {
    const a = await userWithLibrary("A");
    await userWithLibrary("B");
    const { token } = await createSession(db, a.id, "vitest");

    const found = await validateSessionToken(db, token, Date.now(), (user) => libraryReads(db, user, all));
    expect(found?.user.id).toBe(a.id);
    // The same user row and expiry as the session's read alone (a batch maps rows by column name).
    const alone = await validateSessionToken(db, token);
    expect(found?.user).toEqual(alone?.user);
    expect(found?.session).toEqual(alone?.session);
    expect(found?.reads).toHaveLength(3);

    const preloaded = await libraryPage(db, a.id, all, { query: all, results: found!.reads! });
    const own = await libraryPage(db, a.id, all);
    expect(preloaded).toEqual(own);
    expect(preloaded.folders.map((f) => f.name)).toEqual(["A folder"]);
    // Newest first, the trashed one left out.
    expect(preloaded.page.photos.map((p) => p.id)).toEqual([a.rows[2]!.id, a.rows[0]!.id]);
    expect(preloaded.batches).toEqual([]);
  });

  it("reads a folder view with its folder, and a stranger's folder is not found", async () => {
    const a = await userWithLibrary("A");
    const b = await userWithLibrary("B");
    const { token } = await createSession(db, a.id, "vitest");
    const own = { view: { kind: "folder" as const, folderId: a.folder.id }, cursor: null };
    const found = await validateSessionToken(db, token, Date.now(), (user) => libraryReads(db, user, own));
    const page = await libraryPage(db, a.id, own, { query: own, results: found!.reads! });
    expect(page.folder?.name).toBe("A folder");
    expect(page.page.photos.map((p) => p.id)).toEqual([a.rows[0]!.id]);

    const strangers = { view: { kind: "folder" as const, folderId: b.folder.id }, cursor: null };
    const again = await validateSessionToken(db, token, Date.now(), (user) => libraryReads(db, user, strangers));
    const refused = await libraryPage(db, a.id, strangers, { query: strangers, results: again!.reads! });
    expect(refused.folder).toBeUndefined();
    expect(refused.page.photos).toEqual([]);
  });

  it("finds nothing for an expired or unknown session, and ignores a preload made for another view", async () => {
    const a = await userWithLibrary("A");
    const old = await createSession(db, a.id, "vitest", Date.now() - SESSION_TTL_MS - 1000);
    expect(await validateSessionToken(db, old.token, Date.now(), (user) => libraryReads(db, user, all))).toBeNull();
    for (const id of [sha256Hex(old.token), "0".repeat(64)]) {
      const [folders, photos, batches] = (await db.batch(libraryReads(db, sessionUserRef(id, Date.now()), all))) as [
        unknown[],
        unknown[],
        unknown[],
      ];
      expect([folders, photos, batches]).toEqual([[], [], []]);
    }

    const trash = { view: { kind: "trash" as const }, cursor: null };
    const stale = { query: all, results: [[], [], []] };
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
