import { env } from "cloudflare:workers";
import { folders, teamMembers, users } from "@db/schema";
import { db, signedIn } from "@test/support/factories";
import { api, settleJob } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { roomAnswer } from "@test/support/structure-room";
import { poolOf, stagedTeamJob } from "@test/support/team-jobs";
import { STATUS } from "@workers/http/result";
import { teamObject } from "@workers/objects/client";
import { readTeamSpend, spendCsv } from "@workers/services/teams/spend";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";

// The team's spend export (docs/decisions/0312-team-spend-export.md): per member and per listing, what the pool paid
// and what came back, read from the pool's ledger; for owner and team admins only.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const today = () => new Date().toISOString().slice(0, 10);

async function spendOf(userId: string, teamId: string, query = `from=${today()}&to=${today()}`) {
  const res = await readTeamSpend(db, teamId, userId, new URLSearchParams(query));
  return res.ok ? { status: 200, lines: res.lines, csv: spendCsv(res.lines) } : { status: STATUS[res.code] };
}

describe("the team's spend export", { timeout: 120_000 }, () => {
  it("lists each member's credits per listing: a refused result given back, a kept one charged, a teammate's job", async () => {
    const { owner, teamId, member, mate, photo, base } = await stagedTeamJob(provider, {
      pool: 10,
      ownCredits: 3,
      answer: "refused",
    });
    // The refused result was not charged (reserved, then released); keeping it costs one credit of the pool.
    expect((await api(member.cookie, "POST", `${base}/keep`, {})).status).toBe(200);
    // The teammate stages the same photo: one credit under their name.
    provider.answer = () => [roomAnswer("stage")];
    const started = await api(mate.cookie, "POST", `/api/photos/${photo.id}/jobs`, {
      kind: "stage",
      roomType: "Living Room",
      designStyle: "Modern",
    });
    expect(started.status).toBe(202);
    const mateJob = await settleJob(mate.cookie, started.body.job.id);
    expect(mateJob.status).toBe("succeeded");
    await teamObject(env, teamId).reconcile(teamId);
    // The teammate says their result changed the room: its credit comes back (a `refund` row naming the version).
    const returned = await api(
      mate.cookie,
      "POST",
      `/api/photos/${photo.id}/versions/${mateJob.versionId}/changed-room`,
      {},
    );
    expect(returned.status).toBe(200);
    expect(await poolOf(teamId)).toBe(9);

    // A listing whose name a spreadsheet would run as a formula.
    await db.update(folders).set({ name: '=Smith, "Oak" Lane' }).where(eq(folders.id, photo.folderId!));
    const spend = await spendOf(owner.id, teamId);
    expect(spend.status).toBe(200);
    const person = async (id: string) => (await db.select().from(users).where(eq(users.id, id)).get())!;
    const [m, t] = [await person(member.id), await person(mate.id)];
    expect(spend.lines).toEqual(
      [
        { member: m.name, email: m.email, listing: '=Smith, "Oak" Lane', charged: 2, returned: 1 },
        { member: t.name, email: t.email, listing: '=Smith, "Oak" Lane', charged: 1, returned: 1 },
      ].sort((a, b) => a.member.localeCompare(b.member) || a.email.localeCompare(b.email)),
    );
    // What the pool paid in all, net, is what it lost (10 granted, 9 left): the grant itself is no spend.
    expect(spend.lines!.reduce((n, l) => n + l.charged - l.returned, 0)).toBe(1);
    expect(spend.csv!.split("\r\n")[0]).toBe("member,email,listing,credits charged,credits returned,net");
    expect(spend.csv).toContain(`,"'=Smith, ""Oak"" Lane",2,1,1\r\n`);

    // Another day's range has nothing; a removed member's lines stay.
    expect((await spendOf(owner.id, teamId, "from=2020-01-01&to=2020-01-31")).lines).toEqual([]);
    await db.update(teamMembers).set({ removedAt: Date.now() }).where(eq(teamMembers.userId, mate.id));
    expect((await spendOf(owner.id, teamId)).lines).toEqual(spend.lines);
  });

  it("answers an agent 403, a stranger and another team's owner 404, and a range that is not one 400", async () => {
    const { owner, teamId, member } = await stagedTeamJob(provider, { pool: 3, ownCredits: 0, answer: "passed" });
    const stranger = await signedIn();
    const other = await stagedTeamJob(provider, { pool: 3, ownCredits: 0, answer: "passed" });
    expect((await spendOf(member.id, teamId)).status).toBe(403);
    expect((await spendOf(stranger.id, teamId)).status).toBe(404);
    expect((await spendOf(other.owner.id, teamId)).status).toBe(404);
    for (const query of ["", "from=2026-01-01", "from=2026-02-30&to=2026-03-01", "from=2026-03-02&to=2026-03-01"]) {
      expect((await spendOf(owner.id, teamId, query)).status).toBe(400);
    }
  });
});
