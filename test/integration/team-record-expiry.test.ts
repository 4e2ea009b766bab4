import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { cronRuns, folders, teamExports, teams } from "@db/schema";
import { db, makeUser } from "@test/support/factories";
import { makeTeam, teamFolder } from "@test/support/teams";
import worker from "@workers/app";
import { randomToken } from "@workers/lib/crypto";
import { expireTeamRecords } from "@workers/services/teams/record-expiry";
import { desc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";

// The broker's record expires (docs/decisions/0316-the-brokers-record-expires.md): a row past the team's retention,
// counted from the later of its own time and its listing's end, is deleted with the kept copies no other row
// names; a row inside it, a listing still advertising and bytes a newer row shares are kept.

const DAY = 86_400_000;
const NOW = Date.UTC(2030, 0, 15);

async function put(key: string) {
  await env.PHOTOS.put(key, new Uint8Array([1, 2, 3]), { httpMetadata: { contentType: "image/jpeg" } });
  return key;
}
const exists = async (key: string) => (await env.PHOTOS.head(key)) !== null;

/** A team (retention 365 days) and its listing, sold with its pages closed `closedDaysAgo` before NOW. */
async function team(opts: { closedDaysAgo?: number | null } = {}) {
  const owner = await makeUser({});
  const teamId = await makeTeam(owner.id);
  await db.update(teams).set({ retentionDays: 365 }).where(eq(teams.id, teamId));
  const folderId = await teamFolder(teamId, owner.id);
  const closed = opts.closedDaysAgo === undefined ? 800 : opts.closedDaysAgo;
  if (closed !== null)
    await db
      .update(folders)
      .set({ listingStatus: "sold", soldAt: NOW - closed * DAY, originalsCloseAt: NOW - closed * DAY })
      .where(eq(folders.id, folderId));
  return { teamId, folderId, owner };
}

/** A row of the record `daysAgo` before NOW, naming the copies given. */
async function row(
  t: { teamId: string; folderId: string; owner: { id: string } },
  daysAgo: number,
  keys: { recordKey?: string | null; originalKey?: string | null; photoId?: string } = {},
) {
  const id = randomToken();
  await db.insert(teamExports).values({
    id,
    teamId: t.teamId,
    folderId: t.folderId,
    folderName: "14 Harbor View",
    photoId: keys.photoId ?? randomToken(),
    photoName: "Kitchen.jpg",
    versionId: null,
    versionKind: null,
    via: "mls_download",
    memberId: t.owner.id,
    memberName: "Olivia Owner",
    keyId: null,
    mlsProfile: "california",
    labelText: "Virtually staged",
    caption: null,
    contentSha256: null,
    recordKey: keys.recordKey ?? null,
    originalKey: keys.originalKey ?? null,
    packId: null,
    at: NOW - daysAgo * DAY,
  });
  return id;
}

const idsOf = async (teamId: string) =>
  (await db.select({ id: teamExports.id }).from(teamExports).where(eq(teamExports.teamId, teamId)).all())
    .map((r) => r.id)
    .sort();

describe("the broker's record expires", () => {
  it("deletes an entry older than the retention with its copies, keeps one inside it, and a re-run changes nothing", async () => {
    const t = await team();
    const photoOld = randomToken();
    const photoNew = randomToken();
    const oldBytes = await put(`teams/${t.teamId}/record/${randomToken()}.jpg`);
    const oldOriginal = await put(`teams/${t.teamId}/record/originals/${photoOld}`);
    const newBytes = await put(`teams/${t.teamId}/record/${randomToken()}.jpg`);
    const newOriginal = await put(`teams/${t.teamId}/record/originals/${photoNew}`);
    await row(t, 400, { recordKey: oldBytes, originalKey: oldOriginal, photoId: photoOld });
    // A page event names its address, not a copy: nothing is deleted for it but the row.
    await row(t, 500, { recordKey: "/o/sometoken" });
    const inside = await row(t, 300, { recordKey: newBytes, originalKey: newOriginal, photoId: photoNew });

    expect(await expireTeamRecords(db, env.PHOTOS, NOW)).toBeGreaterThanOrEqual(2);
    expect(await idsOf(t.teamId)).toEqual([inside]);
    expect(await exists(oldBytes)).toBe(false);
    expect(await exists(oldOriginal)).toBe(false);
    expect(await exists(newBytes)).toBe(true);
    expect(await exists(newOriginal)).toBe(true);

    // Run again (the cron fires twice, or a run is retried): nothing more goes.
    await expireTeamRecords(db, env.PHOTOS, NOW);
    expect(await idsOf(t.teamId)).toEqual([inside]);
    expect(await exists(newBytes)).toBe(true);
  });

  it("keeps bytes and the original a newer entry still names", async () => {
    const t = await team();
    const photoId = randomToken();
    const shared = await put(`teams/${t.teamId}/record/${randomToken()}.jpg`);
    const original = await put(`teams/${t.teamId}/record/originals/${photoId}`);
    await row(t, 700, { recordKey: shared, originalKey: original, photoId });
    await row(t, 500, { recordKey: shared, originalKey: original, photoId });
    const newer = await row(t, 10, { recordKey: shared, originalKey: original, photoId });

    await expireTeamRecords(db, env.PHOTOS, NOW);
    expect(await idsOf(t.teamId)).toEqual([newer]);
    expect(await exists(shared)).toBe(true);
    expect(await exists(original)).toBe(true);

    // When the newer one expires in its turn, the copies go with it.
    await expireTeamRecords(db, env.PHOTOS, NOW + 400 * DAY);
    expect(await idsOf(t.teamId)).toEqual([]);
    expect(await exists(shared)).toBe(false);
    expect(await exists(original)).toBe(false);
  });

  it("never before the listing's active period ends: an active listing's old entries stay, a sold one's count from its pages closing", async () => {
    const active = await team({ closedDaysAgo: null });
    const activeKey = await put(`teams/${active.teamId}/record/${randomToken()}.jpg`);
    const activeRow = await row(active, 2000, { recordKey: activeKey });
    // Sold 100 days ago: an entry from 2,000 days ago is kept until 365 days after the pages closed.
    const sold = await team({ closedDaysAgo: 100 });
    const soldKey = await put(`teams/${sold.teamId}/record/${randomToken()}.jpg`);
    const soldRow = await row(sold, 2000, { recordKey: soldKey });
    // Pending still advertises.
    const pending = await team({ closedDaysAgo: null });
    await db.update(folders).set({ listingStatus: "pending" }).where(eq(folders.id, pending.folderId));
    const pendingRow = await row(pending, 2000);

    await expireTeamRecords(db, env.PHOTOS, NOW);
    expect(await idsOf(active.teamId)).toEqual([activeRow]);
    expect(await idsOf(sold.teamId)).toEqual([soldRow]);
    expect(await idsOf(pending.teamId)).toEqual([pendingRow]);
    expect(await exists(activeKey)).toBe(true);
    expect(await exists(soldKey)).toBe(true);

    await expireTeamRecords(db, env.PHOTOS, NOW + 266 * DAY);
    expect(await idsOf(sold.teamId)).toEqual([]);
    expect(await exists(soldKey)).toBe(false);
    expect(await idsOf(active.teamId)).toEqual([activeRow]);
  });

  it("counts the team's own retention, and never less than the least a team may set", async () => {
    const long = await team({ closedDaysAgo: 1200 });
    await db.update(teams).set({ retentionDays: 1095 }).where(eq(teams.id, long.teamId));
    const kept = await row(long, 1000);
    const gone = await row(long, 1100);
    // A value under the product's least (written around the form) still keeps a year.
    const short = await team();
    await db.update(teams).set({ retentionDays: 30 }).where(eq(teams.id, short.teamId));
    const year = await row(short, 200);

    await expireTeamRecords(db, env.PHOTOS, NOW);
    expect(await idsOf(long.teamId)).toEqual([kept]);
    expect(await idsOf(short.teamId)).toEqual([year]);
    expect(await idsOf(long.teamId)).not.toContain(gone);
  });

  it("works a backlog off in batches, a copy shared across batches deleted only with its last row", async () => {
    const t = await team();
    const shared = await put(`teams/${t.teamId}/record/${randomToken()}.jpg`);
    for (let i = 0; i < 7; i++) await row(t, 400 + i, { recordKey: shared });
    // Two batches of 3 in this run: 6 rows go, the copy stays for the seventh.
    expect(await expireTeamRecords(db, env.PHOTOS, NOW, { batch: 3, batches: 2 })).toBe(6);
    expect(await idsOf(t.teamId)).toHaveLength(1);
    expect(await exists(shared)).toBe(true);
    await expireTeamRecords(db, env.PHOTOS, NOW, { batch: 3, batches: 2 });
    expect(await idsOf(t.teamId)).toEqual([]);
    expect(await exists(shared)).toBe(false);
  });

  it("runs in the daily cron", async () => {
    const t = await team();
    const now = Date.now();
    await db
      .update(folders)
      .set({ listingStatus: "sold", soldAt: now - 900 * DAY, originalsCloseAt: now - 900 * DAY })
      .where(eq(folders.id, t.folderId));
    const key = await put(`teams/${t.teamId}/record/${randomToken()}.jpg`);
    await db.insert(teamExports).values({
      id: randomToken(),
      teamId: t.teamId,
      folderId: t.folderId,
      folderName: "14 Harbor View",
      photoId: randomToken(),
      photoName: "Kitchen.jpg",
      via: "listing_pack",
      memberId: t.owner.id,
      memberName: "Olivia Owner",
      mlsProfile: "california",
      recordKey: key,
      at: now - 800 * DAY,
    });
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: now, cron: "17 3 * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect(await idsOf(t.teamId)).toEqual([]);
    expect(await exists(key)).toBe(false);
    const run = await db.select().from(cronRuns).orderBy(desc(cronRuns.id)).limit(1).get();
    expect(run).toMatchObject({ ok: true, failed: null });
  });
});
