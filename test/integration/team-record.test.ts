import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { apiKeys, folders, photoVersions, teamExports, teams, users } from "@db/schema";
import { makeJpeg } from "@test/fixtures/images";
import { db, signedIn } from "@test/support/factories";
import { makePhoto } from "@test/support/photos";
import { allow, fakeStripe } from "@test/support/stripe";
import { addMember, makeTeam, teamFolder } from "@test/support/teams";
import { workerFetch } from "@test/support/worker";
import { STATUS } from "@workers/http/result";
import { randomToken } from "@workers/lib/crypto";
import { userObject } from "@workers/objects/client";
import { deleteAccount } from "@workers/services/mls/account-data";
import { saveLabelDefaults } from "@workers/services/mls/labels";
import { runTeamAction, teamActionInput } from "@workers/services/teams/actions";
import { readTeamRecord, recordCsv, sha256Of } from "@workers/services/teams/record";
import { removeMember } from "@workers/services/teams/teams";
import { asc, eq } from "drizzle-orm";
import { unzipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { DEFAULT_LABEL } from "~/shared/label-options";

// The broker's record (issue 47 item 5, docs/decisions/0285-the-brokers-record.md): every photo that leaves a team
// listing is a row with its member, profile and disclosure, and a kept copy of its bytes; team admins read it and
// export it as CSV; a member's removal or account deletion changes nothing in it; a personal folder adds nothing.

const PASSWORD = "correct horse 42";
const NAME = '=Smith, "Oak" Lane';
const today = () => new Date().toISOString().slice(0, 10);

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

/** A staged result of the photo with real JPEG bytes (so it can be labelled). */
async function staged(userId: string, photoId: string) {
  const id = randomToken();
  const key = `photos/${userId}/${photoId}/versions/${id}`;
  const bytes = makeJpeg(320, 240, 85, 24, 1);
  await env.PHOTOS.put(key, bytes, { httpMetadata: { contentType: "image/jpeg" } });
  await db.insert(photoVersions).values({
    id,
    photoId,
    userId,
    jobId: randomToken(),
    kind: "stage",
    params: { roomType: "livingroom", designStyle: "modern" },
    key,
    thumbKey: key,
    contentType: "image/jpeg",
    bytes: bytes.byteLength,
    width: 320,
    height: 240,
    createdAt: Date.now(),
    storedVerdict: null,
  });
  return { versionId: id, path: `/api/photos/${photoId}/versions/${id}` };
}

async function named(name: string, password?: string) {
  const user = await signedIn(password ? { password } : {});
  await db.update(users).set({ name }).where(eq(users.id, user.id));
  return user;
}

/** An owner, an agent A who made the team listing (California's profile) with a staged photo and a plain one. */
async function listing() {
  const owner = await named("Olivia Owner");
  const teamId = await makeTeam(owner.id);
  const agent = await named("Andy Agent", PASSWORD);
  await addMember(teamId, agent.id);
  const folderId = await teamFolder(teamId, agent.id);
  await db.update(folders).set({ name: NAME, mlsProfile: "california" }).where(eq(folders.id, folderId));
  const photo = await makePhoto(agent.id, { folderId, name: "Living room.jpg", createdAt: Date.now() });
  await makePhoto(agent.id, { folderId, name: "Kitchen.jpg", createdAt: Date.now() + 1 });
  const version = await staged(agent.id, photo.id);
  return { owner, teamId, agent, folderId, photo, ...version };
}

const rowsOf = (teamId: string) =>
  db.select().from(teamExports).where(eq(teamExports.teamId, teamId)).orderBy(asc(teamExports.at)).all();

// The workerd suite has no React Router build: the page and record.csv are their service, called as their loaders
// call it (the route adds only the headers).
async function csvOf(userId: string, teamId: string, query = `from=${today()}&to=${today()}`) {
  const res = await readTeamRecord(db, teamId, userId, new URLSearchParams(query), { csv: true, now: Date.now() });
  return res.ok ? { status: 200, text: recordCsv(res.rows) } : { status: STATUS[res.code], text: res.error };
}

async function act(userId: string, teamId: string, fields: Record<string, string>) {
  const input = teamActionInput.safeParse(fields);
  if (!input.success) return { status: 400 };
  const deps = {
    db,
    env,
    origin: "http://localhost",
    clock: Date.now,
    stripe: fakeStripe().stripe,
    mailer: { async send() {} },
  };
  const res = await runTeamAction(deps, teamId, userId, input.data);
  return { status: res.ok ? 200 : STATUS[res.code], token: res.ok ? res.token : undefined };
}

describe("the broker's record", { timeout: 120_000 }, () => {
  it("records a member's MLS download and listing pack with member, profile and disclosure; the CSV lists them, unchanged after the member's removal and account deletion", async () => {
    const { owner, teamId, agent, folderId, photo, versionId, path } = await listing();

    // The first Download for MLS publishes the page its label's QR code needs: the page and the download are rows.
    const download = await post(agent.cookie, `${path}/labelled`, { publish: "first" });
    expect(download.status).toBe(200);
    const downloaded = new Uint8Array(await download.arrayBuffer());
    const pack = await get(agent.cookie, `/api/folders/${folderId}/pack`);
    expect(pack.status).toBe(200);
    const files = unzipSync(new Uint8Array(await pack.arrayBuffer()));

    const rows = await rowsOf(teamId);
    expect(rows.map((r) => [r.via, r.photoName, r.versionId])).toEqual([
      ["page_published", "Living room.jpg", versionId],
      ["mls_download", "Living room.jpg", versionId],
      ["listing_pack", "Living room.jpg", versionId],
      ["listing_pack", "Kitchen.jpg", null],
    ]);
    for (const r of rows)
      expect(r).toMatchObject({
        folderId,
        folderName: NAME,
        memberId: agent.id,
        memberName: "Andy Agent",
        keyId: null,
        mlsProfile: "california",
      });
    const [, mls, packed, plain] = rows;
    expect(mls!.labelText).toContain("Virtually staged");
    expect(mls!.caption).toBeTruthy();
    expect(packed!.labelText).toBe(mls!.labelText);
    expect(packed!.packId).toBe(plain!.packId);
    expect(packed!.packId).toBeTruthy();

    // What left is kept: the download's bytes by their hash, the pack's as they went into the zip, the original.
    expect(mls!.contentSha256).toBe(await sha256Of(downloaded));
    const keptDownload = await env.PHOTOS.get(mls!.recordKey!);
    expect(await sha256Of(await keptDownload!.arrayBuffer())).toBe(mls!.contentSha256);
    const inZip = Object.entries(files).find(
      ([n]) => n.startsWith("photos/") && n.includes("Living room - ") && !n.includes("original"),
    );
    const keptPack = await env.PHOTOS.get(packed!.recordKey!);
    expect(await sha256Of(await keptPack!.arrayBuffer())).toBe(await sha256Of(inZip![1]));
    expect(await env.PHOTOS.head(`teams/${teamId}/record/originals/${photo.id}`)).not.toBeNull();
    expect(plain!.recordKey).toBeNull();

    // The owner's CSV for today lists the four rows, the listing's name quoted and made formula-safe.
    const csv = await csvOf(owner.id, teamId);
    expect(csv.status).toBe(200);
    const lines = csv.text.trimEnd().split("\r\n");
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(/^at,listing,listing_id,photo,/);
    for (const line of lines.slice(1)) {
      expect(line).toContain(`,"'=Smith, ""Oak"" Lane",${folderId},`);
      expect(line).toContain(",Andy Agent,");
      expect(line).toContain(",california,");
    }
    expect(lines.filter((l) => l.includes(",MLS download,"))).toHaveLength(1);
    expect(lines.filter((l) => l.includes(",listing pack,"))).toHaveLength(2);
    // The page's listing filter: this listing's rows; another listing's none.
    const one = (folder: string) =>
      readTeamRecord(db, teamId, owner.id, new URLSearchParams({ folder }), { csv: false, now: Date.now() });
    // The same rows; rows written in one batch share their time, so their order among themselves is not compared.
    const ids = async (folder: string) => {
      const res = await one(folder);
      return res.ok ? res.rows.map((r) => r.id).sort() : res;
    };
    expect(await ids(folderId)).toEqual(rows.map((r) => r.id).sort());
    expect(await one("someotherlisting")).toMatchObject({ ok: true, rows: [] });

    // Removed, then their account deleted: the rows, their copies and the CSV stay exactly as they were.
    expect((await removeMember({ db, clock: Date.now }, teamId, owner.id, agent.id)).ok).toBe(true);
    expect((await csvOf(owner.id, teamId)).text).toBe(csv.text);
    const deleted = await deleteAccount(
      { db, env, stripe: fakeStripe().stripe, clock: Date.now, rateLimit: allow },
      agent.id,
      { password: PASSWORD },
    );
    expect(deleted).toEqual({ ok: true });
    const stub = userObject(env, agent.id);
    for (let i = 0; i < 50 && (await runDurableObjectAlarm(stub)); i++);
    expect(await rowsOf(teamId)).toEqual(rows);
    expect((await csvOf(owner.id, teamId)).text).toBe(csv.text);
    expect(await env.PHOTOS.head(mls!.recordKey!)).not.toBeNull();
    expect(await env.PHOTOS.head(packed!.recordKey!)).not.toBeNull();
    expect(await env.PHOTOS.head(`teams/${teamId}/record/originals/${photo.id}`)).not.toBeNull();
  });

  it("a teammate downloads another member's photo for MLS and packs the listing: recorded under the teammate", async () => {
    // The listing was made by Andy (its folder, his photos); Bea uploads one of her own into it and downloads his.
    const { teamId, agent, folderId, photo, versionId, path } = await listing();
    const mate = await named("Bea Broker");
    await addMember(teamId, mate.id);
    const hers = await makePhoto(mate.id, { folderId, name: "Porch.jpg", createdAt: Date.now() + 2 });
    const disclosure = await get(mate.cookie, `${path}/disclosure`);
    expect(disclosure.status).toBe(200);
    const download = await post(mate.cookie, `${path}/labelled`, { publish: "first" });
    expect(download.status).toBe(200);
    const again = await get(mate.cookie, `${path}/labelled`);
    expect(again.status).toBe(200);
    const pack = await get(mate.cookie, `/api/folders/${folderId}/pack`);
    expect(pack.status).toBe(200);
    const names = Object.keys(unzipSync(new Uint8Array(await pack.arrayBuffer())));
    // Every member's photos are in the team listing's pack, whoever asks for it.
    for (const n of ["Living room", "Kitchen", "Porch"]) expect(names.some((f) => f.includes(n))).toBe(true);

    const rows = await rowsOf(teamId);
    expect(rows.map((r) => [r.via, r.photoName, r.versionId]).sort()).toEqual(
      [
        ["page_published", "Living room.jpg", versionId],
        ["mls_download", "Living room.jpg", versionId],
        ["mls_download", "Living room.jpg", versionId],
        ["listing_pack", "Living room.jpg", versionId],
        ["listing_pack", "Kitchen.jpg", null],
        ["listing_pack", "Porch.jpg", null],
      ].sort(),
    );
    for (const r of rows) expect(r).toMatchObject({ memberId: mate.id, memberName: "Bea Broker", keyId: null });
    expect(rows.find((r) => r.photoName === "Porch.jpg")?.photoId).toBe(hers.id);
    expect(await env.PHOTOS.head(`teams/${teamId}/record/originals/${photo.id}`)).not.toBeNull();
    // The page Bea published is the photo's own (its uploader's row): Andy sees it live too.
    const andys = await get(agent.cookie, `${path}/disclosure`);
    expect(((await andys.json()) as { disclosure: { page: { state: string } } }).disclosure.page.state).toBe("live");
  });

  it("a team listing without a profile of its own has one disclosure on every path: the team's default, else its maker's account", async () => {
    // Andy made the listing (no account settings: California); Bea's account follows Bright MLS, whose rules differ.
    const { teamId, agent, folderId } = await listing();
    await db.update(folders).set({ mlsProfile: null }).where(eq(folders.id, folderId));
    const mate = await named("Bea Broker");
    await addMember(teamId, mate.id);
    await saveLabelDefaults(db, mate.id, { ...DEFAULT_LABEL, profile: "bright" });
    const hers = await makePhoto(mate.id, { folderId, name: "Porch.jpg", createdAt: Date.now() + 2 });
    const { path } = await staged(mate.id, hers.id);
    const profileSeen = async (cookie: string) => {
      const res = await get(cookie, `${path}/disclosure`);
      expect(res.status).toBe(200);
      return ((await res.json()) as { disclosure: { profile: { id: string } } }).disclosure.profile.id;
    };
    const exported = async (expected: string) => {
      expect([await profileSeen(mate.cookie), await profileSeen(agent.cookie)]).toEqual([expected, expected]);
      const mark = (await rowsOf(teamId)).length;
      const download = await post(mate.cookie, `${path}/labelled`, { publish: "first" });
      expect(download.status).toBe(200);
      await download.arrayBuffer();
      const pack = await get(agent.cookie, `/api/folders/${folderId}/pack`);
      expect(pack.status).toBe(200);
      await pack.arrayBuffer();
      const rows = (await rowsOf(teamId))
        .slice(mark)
        .filter((r) => r.photoName === "Porch.jpg" && r.via !== "page_published");
      expect(rows.map((r) => [r.via, r.mlsProfile]).sort()).toEqual(
        [
          ["listing_pack", expected],
          ["mls_download", expected],
        ].sort(),
      );
    };
    // The uploader's own account (Bright) decides nothing: the maker's does, whoever asks.
    await exported("california");
    // The team's default, once the team has one, for every member.
    await db.update(teams).set({ defaultMlsProfile: "crmls" }).where(eq(teams.id, teamId));
    await exported("crmls");
  });

  it("a stranger and a removed member cannot download a team listing's photo or pack it: 404, no row", async () => {
    const { teamId, owner, folderId, path } = await listing();
    const mate = await named("Bea Broker");
    await addMember(teamId, mate.id);
    expect((await removeMember({ db, clock: Date.now }, teamId, owner.id, mate.id)).ok).toBe(true);
    const stranger = await named("Sam Stranger");
    for (const who of [mate, stranger]) {
      expect((await post(who.cookie, `${path}/labelled`, { publish: "first" })).status).toBe(404);
      expect((await get(who.cookie, `${path}/labelled`)).status).toBe(404);
      expect((await get(who.cookie, `${path}/disclosure`)).status).toBe(404);
      expect((await get(who.cookie, `/api/folders/${folderId}/pack`)).status).toBe(404);
    }
    expect(await rowsOf(teamId)).toEqual([]);
  });

  it("answers an agent 403 and a stranger 404 on the record and its CSV; a bad range 400", async () => {
    const { owner, teamId, agent } = await listing();
    const stranger = await signedIn();
    expect((await csvOf(agent.id, teamId)).status).toBe(403);
    const page = (userId: string) =>
      readTeamRecord(db, teamId, userId, new URLSearchParams(), { csv: false, now: Date.now() });
    expect(await page(agent.id)).toMatchObject({ ok: false, code: "forbidden" });
    expect(await page(owner.id)).toMatchObject({ ok: true, rows: [] });
    expect((await csvOf(stranger.id, teamId)).status).toBe(404);
    expect(await page(stranger.id)).toMatchObject({ ok: false, code: "not_found" });
    expect((await csvOf(owner.id, teamId, "from=2026-13-01&to=2026-13-02")).status).toBe(400);
    expect((await csvOf(owner.id, teamId, "from=2026-11-02")).status).toBe(400);
    expect((await csvOf(owner.id, teamId, "from=2026-11-02&to=2026-11-01")).status).toBe(400);
  });

  it("a personal folder's download and pack add no rows", async () => {
    const { teamId, agent } = await listing();
    const personal = randomToken();
    await db
      .insert(folders)
      .values({ id: personal, userId: agent.id, name: "Mine", createdAt: Date.now(), mlsProfile: "california" });
    const photo = await makePhoto(agent.id, { folderId: personal, name: "Den.jpg" });
    const { path } = await staged(agent.id, photo.id);
    expect((await post(agent.cookie, `${path}/labelled`, { publish: "first" })).status).toBe(200);
    const pack = await get(agent.cookie, `/api/folders/${personal}/pack`);
    expect(pack.status).toBe(200);
    await pack.arrayBuffer();
    expect(await db.select().from(teamExports).where(eq(teamExports.memberId, agent.id)).all()).toEqual([]);
    expect(await rowsOf(teamId)).toEqual([]);
    expect((await env.PHOTOS.list({ prefix: `teams/${teamId}/` })).objects).toEqual([]);
  });

  it("a team admin sets the retention; an agent cannot, and less than a year is refused", async () => {
    const { owner, teamId, agent } = await listing();
    const days = async () =>
      (await db.select({ d: teams.retentionDays }).from(teams).where(eq(teams.id, teamId)).get())!.d;
    expect(await days()).toBe(1095);
    expect((await act(agent.id, teamId, { intent: "retention", days: "400" })).status).toBe(403);
    expect(await days()).toBe(1095);
    const short = await act(owner.id, teamId, { intent: "retention", days: "10" });
    expect(short.status).toBe(400);
    expect(await days()).toBe(1095);
    const set = await act(owner.id, teamId, { intent: "retention", days: "400" });
    expect(set.status).toBe(200);
    expect(await days()).toBe(400);
  });

  it("a team key's original page and API download are recorded under the key, run as the team's runner", async () => {
    const { owner, teamId } = await listing();
    const made = await act(owner.id, teamId, { intent: "create-key", name: "CRM sync", limit: "" });
    expect(made.status).toBe(200);
    const key = await db.select().from(apiKeys).where(eq(apiKeys.teamId, teamId)).get();
    const token = made.token!;
    const call = (path: string, method = "GET") =>
      workerFetch(`/api/v1${path}`, { method, headers: { Authorization: `Bearer ${token}` } });
    const form = new FormData();
    form.append("file", new Blob([makeJpeg(64, 48, 80, 24, 7)], { type: "image/jpeg" }), "Porch.jpg");
    const uploaded = await workerFetch("/api/v1/photos", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}` },
      body: form,
    });
    expect(uploaded.status).toBe(201);
    const photoId = ((await uploaded.json()) as { photo: { id: string } }).photo.id;
    const { versionId } = await staged(key!.userId, photoId);
    const page = await call(`/photos/${photoId}/versions/${versionId}/original-page`, "POST");
    expect(page.status).toBe(200);
    const download = await call(`/photos/${photoId}/versions/${versionId}/download`);
    expect(download.status).toBe(200);
    const served = await download.arrayBuffer();

    const rows = await rowsOf(teamId);
    expect(rows.map((r) => [r.via, r.folderId, r.memberId, r.keyId, r.memberName])).toEqual([
      ["page_published", key!.folderId, key!.userId, key!.id, "API key CRM sync"],
      ["api_download", key!.folderId, key!.userId, key!.id, "API key CRM sync"],
    ]);
    expect(rows[1]!.contentSha256).toBe(await sha256Of(served));
    const csv = await csvOf(owner.id, teamId);
    expect(csv.text).toContain(`,API key CRM sync,${key!.userId},${key!.id},`);
  });
});
