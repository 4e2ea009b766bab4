import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { creditLedger, teamLedger, teamMembers, teamReservations, teams } from "@db/schema";
import { db } from "@test/support/factories";
import { api, balance, onPlan, photosOf, settleJob } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { takeConsoleErrors } from "@test/support/setup";
import { addMember, makeTeam, teamFolder } from "@test/support/teams";
import { teamObject } from "@workers/objects/client";
import { TEAM_ORPHAN_MS } from "@workers/objects/team/pool";
import { and, eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { memberLimitMessage, TEAM_POOL_EMPTY, TEAM_POOL_FROZEN } from "~/shared/teams";

// A team's one credit pool (issue 47, item 2): a job in a team listing spends the pool, exactly, whichever member
// starts it; the member's limit and the pool refuse before any provider call, each with its own words; the
// protocol between the member's object and the team's survives a crash between them, a removal and an eviction.
// docs/decisions/0270-team-credit-pool.md

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const STAGE = { kind: "stage", roomType: "Bedroom", designStyle: "Modern" };
const stage = (cookie: string, photoId: string, headers: Record<string, string> = {}) =>
  api(cookie, "POST", `/api/photos/${photoId}/jobs`, STAGE, headers);

async function pool(teamId: string) {
  const team = await db.select().from(teams).where(eq(teams.id, teamId)).get();
  const rows = await db.select().from(teamReservations).where(eq(teamReservations.teamId, teamId)).all();
  const count = (s: string) => rows.filter((r) => r.status === s).length;
  return { credits: team!.credits, held: count("held"), committed: count("committed"), released: count("released") };
}

/** A team of `n` agents (and its owner), each with `photos` photos in the team's listing. */
async function teamOf(n: number, credits: number, photos: number) {
  const owner = await onPlan(null, 0);
  const teamId = await makeTeam(owner.id, { credits });
  const folderId = await teamFolder(teamId, owner.id);
  const members = [];
  for (let i = 0; i < n; i++) {
    const m = await onPlan(null, 0);
    await addMember(teamId, m.id);
    members.push({ ...m, photos: await photosOf(m.id, photos, folderId) });
  }
  return { owner, teamId, folderId, members };
}

async function settleAll(cookie: string, jobIds: string[]) {
  for (const id of jobIds) await settleJob(cookie, id);
}

describe("a team's credit pool", () => {
  it("200 parallel requests from 20 members against 150 credits: 150 charged, 50 refused naming the pool", async () => {
    const { teamId, members } = await teamOf(20, 150, 10);
    const sent = members.flatMap((m) => m.photos.map((p) => ({ m, photoId: p.id })));
    expect(sent).toHaveLength(200);
    const answers = await Promise.all(sent.map(({ m, photoId }) => stage(m.cookie, photoId)));
    const started = answers.filter((a) => a.status === 202);
    const refused = answers.filter((a) => a.status !== 202);
    expect(started).toHaveLength(150);
    expect(refused).toHaveLength(50);
    for (const r of refused) {
      expect(r.status).toBe(402);
      expect(r.body.error).toBe(TEAM_POOL_EMPTY);
    }
    for (const [i, a] of answers.entries()) {
      if (a.status === 202) await settleJob(sent[i]!.m.cookie, a.body.job.id);
    }
    await teamObject(env, teamId).reconcile(teamId);
    // One provider call per started job, none for the refused ones.
    expect(provider.calls).toHaveLength(150);
    expect(await pool(teamId)).toEqual({ credits: 0, held: 0, committed: 150, released: 0 });
    // The members' own credits were never touched: each of their reservations is 0 credits, committed.
    const own = await db.select().from(creditLedger).where(eq(creditLedger.userId, members[0]!.id)).all();
    expect(own.every((r) => r.amount === 0)).toBe(true);
    // Every pool ledger row of a job names its member.
    const rows = await db.select().from(teamLedger).where(eq(teamLedger.teamId, teamId)).all();
    expect(rows.filter((r) => r.kind !== "grant").every((r) => members.some((m) => m.id === r.memberId))).toBe(true);
    // 150 results judged at once on a loaded 2-core machine: some checks can outlast their 20 s wait, and those results
    // are delivered unchecked (charged as passed, ADR 0215) and reported once the hour's share passes 5 % (issue 43
    // item 9). That report is the product doing its job, not this test's subject (the pool's exactness); any other
    // error still fails it.
    await Promise.all(
      members.map((m) => env.USER_OBJECT.get(env.USER_OBJECT.idFromName(m.id)).settledForTesting(5_000)),
    );
    const errors = takeConsoleErrors().map((e) => e.map(String).join(" "));
    expect(errors.filter((e) => !/results this hour were delivered unchecked/.test(e))).toEqual([]);
  }, 300_000);

  it("a member's limit refuses with its own words before any provider call; the pool's words are apart", async () => {
    const { teamId, members } = await teamOf(2, 3, 3);
    const [a, b] = members;
    expect(await teamObject(env, teamId).setMemberLimit(teamId, a!.id, 2)).toBe(true);
    const first = await stage(a!.cookie, a!.photos[0]!.id);
    const second = await stage(a!.cookie, a!.photos[1]!.id);
    await settleAll(a!.cookie, [first.body.job.id, second.body.job.id]);
    const calls = provider.calls.length;
    const third = await stage(a!.cookie, a!.photos[2]!.id);
    expect(third.status).toBe(402);
    expect(third.body.error).toBe(memberLimitMessage(2));
    expect(provider.calls.length).toBe(calls);
    // The other agent has no limit: one credit left in the pool, then the pool is what is short.
    const ok = await stage(b!.cookie, b!.photos[0]!.id);
    expect(ok.status).toBe(202);
    await settleJob(b!.cookie, ok.body.job.id);
    const empty = await stage(b!.cookie, b!.photos[1]!.id);
    expect(empty.status).toBe(402);
    expect(empty.body.error).toBe(TEAM_POOL_EMPTY);
    await teamObject(env, teamId).reconcile(teamId);
    expect(await pool(teamId)).toEqual({ credits: 0, held: 0, committed: 3, released: 0 });
  });

  it("a frozen pool starts nothing and takes nothing away", async () => {
    const { teamId, members } = await teamOf(1, 5, 1);
    await teamObject(env, teamId).setFrozen(teamId, true);
    const r = await stage(members[0]!.cookie, members[0]!.photos[0]!.id);
    expect(r.status).toBe(409);
    expect(r.body.error).toBe(TEAM_POOL_FROZEN);
    expect(provider.calls).toHaveLength(0);
    expect(await pool(teamId)).toEqual({ credits: 5, held: 0, committed: 0, released: 0 });
  });

  it("a job whose provider call fails gives the pool its credit back", async () => {
    const { teamId, members } = await teamOf(1, 2, 1);
    provider.failEvery = 1;
    const r = await stage(members[0]!.cookie, members[0]!.photos[0]!.id);
    expect(r.status).toBe(202);
    const job = await settleJob(members[0]!.cookie, r.body.job.id);
    expect(job.status).toBe("failed");
    await teamObject(env, teamId).reconcile(teamId);
    expect(await pool(teamId)).toEqual({ credits: 2, held: 0, committed: 0, released: 1 });
  });

  it("a crash between the two objects: the held credit is released once its job is never recorded", async () => {
    const { teamId, members } = await teamOf(1, 2, 0);
    const team = teamObject(env, teamId);
    // The team's object took the credit; the request died before the member's object recorded the job.
    const held = await team.reserve(teamId, {
      memberId: members[0]!.id,
      jobs: [{ jobId: "job-never-recorded", amount: 1, reason: "AI stage" }],
    });
    expect(held.ok && held.status).toBe("held");
    expect((await team.reconcile(teamId)).held).toBe(1);
    expect(await pool(teamId)).toMatchObject({ credits: 1, held: 1 });
    // Evicted meanwhile: the state is in D1, and the alarm reconciles once the orphan's time has passed.
    await evictDurableObject(team);
    await team.advanceClockForTesting(TEAM_ORPHAN_MS + 1);
    expect(await runDurableObjectAlarm(team)).toBe(true);
    expect(await pool(teamId)).toEqual({ credits: 2, held: 0, committed: 0, released: 1 });
    // The same request sent again is told it was cancelled, and takes nothing.
    const again = await team.reserve(teamId, {
      memberId: members[0]!.id,
      jobs: [{ jobId: "job-never-recorded", amount: 1, reason: "AI stage" }],
    });
    expect(again.ok && again.status).toBe("released");
    expect(await pool(teamId)).toMatchObject({ credits: 2 });
  });

  it("a member removed while a job runs: the job still settles on the pool; their next request is 404", async () => {
    const { teamId, members } = await teamOf(1, 3, 2);
    const m = members[0]!;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    provider.hold = () => gate;
    const r = await stage(m.cookie, m.photos[0]!.id);
    expect(r.status).toBe(202);
    // Removed once its provider call is under way (a job still waiting in the queue is refunded instead: its run
    // asks first whether the member still reaches the photo).
    await expect.poll(() => provider.calls.length).toBe(1);
    await db
      .update(teamMembers)
      .set({ removedAt: Date.now() })
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, m.id)));
    release();
    await settleJob(m.cookie, r.body.job.id);
    await teamObject(env, teamId).reconcile(teamId);
    expect(await pool(teamId)).toEqual({ credits: 2, held: 0, committed: 1, released: 0 });
    const after = await stage(m.cookie, m.photos[1]!.id);
    expect(after.status).toBe(404);
    expect(await pool(teamId)).toMatchObject({ credits: 2, held: 0 });
  });

  it("a request sent again with its key is charged to the pool once", async () => {
    const { teamId, members } = await teamOf(1, 5, 1);
    const m = members[0]!;
    const [a, b] = await Promise.all([
      stage(m.cookie, m.photos[0]!.id, { "Idempotency-Key": "k1" }),
      stage(m.cookie, m.photos[0]!.id, { "Idempotency-Key": "k1" }),
    ]);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(b.body.job.id).toBe(a.body.job.id);
    await settleJob(m.cookie, a.body.job.id);
    await teamObject(env, teamId).reconcile(teamId);
    expect(await pool(teamId)).toEqual({ credits: 4, held: 0, committed: 1, released: 0 });
    expect(provider.calls).toHaveLength(1);
  });

  it("a batch on a team listing is never charged to the member's own credits: the pool pays (ADR 0310)", async () => {
    const { teamId, members } = await teamOf(1, 5, 0);
    const m = await onPlan("Small plan", 5);
    await addMember(teamId, m.id);
    // The member's own listing of the team.
    const folderId = await teamFolder(teamId, m.id);
    const [photo] = await photosOf(m.id, 1, folderId);
    const r = await api(m.cookie, "POST", "/api/batches", {
      designStyle: "Modern",
      folderId,
      items: [{ photoId: photo!.id, roomType: "Bedroom" }],
    });
    expect(r.status).toBe(202);
    await settleJob(m.cookie, r.body.batch.items[0].jobId);
    await teamObject(env, teamId).reconcile(teamId);
    expect(await balance(m.id)).toBe(5);
    expect(provider.calls).toHaveLength(1);
    expect(await pool(teamId)).toEqual({ credits: 4, held: 0, committed: 1, released: 0 });
    expect(members).toHaveLength(1);
  });
});
