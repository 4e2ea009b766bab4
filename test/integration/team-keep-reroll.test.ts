import { env } from "cloudflare:workers";
import { jobs, photos, photoVersions, teamLedger, teamMembers, teamReservations } from "@db/schema";
import { db } from "@test/support/factories";
import { api, balance, onPlan, settleJob } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { poolOf, stagedTeamJob } from "@test/support/team-jobs";
import { workerFetch } from "@test/support/worker";
import { teamObject } from "@workers/objects/client";
import { KEEP_REASON, ONLY_REFUSED } from "@workers/objects/user/jobs/keep";
import { createApiKey } from "@workers/services/api-keys";
import { and, eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { memberLimitMessage, TEAM_REROLL_MESSAGE } from "~/shared/teams";

// "Keep it anyway" and the re-roll on a team listing's photo (docs/decisions/0297-team-keep-and-re-roll.md): both are
// paid work on the team's photo, so both spend the team's pool under ADR 0270's rules (the member's limit, the
// frozen pool, the pool itself), whichever active member asks, and never the member's own credits. The re-roll is
// quoted as what it costs: one credit from the pool. Real jobs, through the queue, the check Worker and both objects.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const OWN_CREDITS = 2;
const POOL = 5;

/** A team with a pool, two agents with credits of their own, and a team job's result on the first one's photo. */
async function teamStaged(answer: "passed" | "refused") {
  const staged = await stagedTeamJob(provider, { pool: POOL, ownCredits: OWN_CREDITS, answer });
  // A refused result was not charged: the pool's credit is released once the team follows the member's object.
  await teamObject(env, staged.teamId).reconcile(staged.teamId);
  return staged;
}

async function reservationsOf(teamId: string) {
  return db.select().from(teamReservations).where(eq(teamReservations.teamId, teamId)).all();
}

describe("Keep it anyway on a team listing's photo", () => {
  it("a teammate keeps the refused result for one credit of the pool; nobody's own credits move; once only", async () => {
    const { teamId, member, mate, photo, versionId, base } = await teamStaged("refused");
    expect(await poolOf(teamId)).toBe(POOL);
    const kept = await api(mate.cookie, "POST", `${base}/keep`, {});
    expect(kept.status).toBe(200);
    expect(kept.body).toEqual({ versionId, credits: OWN_CREDITS });
    expect(await poolOf(teamId)).toBe(POOL - 1);
    expect([await balance(member.id), await balance(mate.id)]).toEqual([OWN_CREDITS, OWN_CREDITS]);
    const held = (await reservationsOf(teamId)).find((r) => r.jobId === `keep:${versionId}`);
    expect([held?.memberId, held?.amount, held?.status]).toEqual([mate.id, 1, "committed"]);
    const rows = await db
      .select()
      .from(teamLedger)
      .where(and(eq(teamLedger.teamId, teamId), eq(teamLedger.jobId, `keep:${versionId}`)))
      .all();
    expect(rows.map((r) => [r.kind, r.amount, r.memberId, r.reason]).sort()).toEqual([
      ["commit", 0, mate.id, KEEP_REASON],
      ["reserve", -1, mate.id, KEEP_REASON],
    ]);
    // The version is kept and shown on its photo, as for a personal keep.
    const version = await db.select().from(photoVersions).where(eq(photoVersions.id, versionId)).get();
    expect(version?.structureVerdict).toBe("kept");
    const shown = await db.select().from(photos).where(eq(photos.id, photo.id)).get();
    expect(shown?.processedKey).toBe(version?.key);
    // Sent again: it is no longer a refused result; nothing more is taken.
    const again = await api(member.cookie, "POST", `${base}/keep`, {});
    expect([again.status, again.body.error]).toEqual([409, ONLY_REFUSED]);
    expect(await poolOf(teamId)).toBe(POOL - 1);
  });

  it("a teammate keeps it through their own API key: 200 with the version, charged to the pool once", async () => {
    const { teamId, mate, photo, versionId } = await teamStaged("refused");
    const made = await createApiKey({ db, env, clock: () => Date.now() }, mate.id, { name: "feed", scopes: ["stage"] });
    if (!made.ok) throw new Error(made.error);
    const keep = () =>
      workerFetch(`/api/v1/photos/${photo.id}/versions/${versionId}/keep`, {
        method: "POST",
        headers: { Authorization: `Bearer ${made.token}`, "Idempotency-Key": "keep-1" },
      });
    const kept = await keep();
    expect(kept.status).toBe(200);
    const body = (await kept.json()) as { version: { id: string; structure: { verdict: string } }; credits: number };
    expect([body.version.id, body.credits]).toEqual([versionId, OWN_CREDITS]);
    expect(await poolOf(teamId)).toBe(POOL - 1);
    // The retry gets the first answer and is charged nothing more.
    const again = await keep();
    expect([again.status, again.headers.get("Idempotent-Replayed")]).toEqual([200, "true"]);
    expect(await poolOf(teamId)).toBe(POOL - 1);
  });

  it("over the member's limit, or with the pool frozen: refused in its words, nothing written", async () => {
    const { teamId, mate, versionId, base } = await teamStaged("refused");
    expect(await teamObject(env, teamId).setMemberLimit(teamId, mate.id, 0)).toBe(true);
    const limited = await api(mate.cookie, "POST", `${base}/keep`, {});
    expect([limited.status, limited.body.error]).toEqual([402, memberLimitMessage(0)]);
    await teamObject(env, teamId).setMemberLimit(teamId, mate.id, null);
    await teamObject(env, teamId).setFrozen(teamId, true);
    const frozen = await api(mate.cookie, "POST", `${base}/keep`, {});
    expect(frozen.status).toBe(409);
    expect(await poolOf(teamId)).toBe(POOL);
    expect((await reservationsOf(teamId)).filter((r) => r.jobId === `keep:${versionId}`)).toEqual([]);
    const version = await db.select().from(photoVersions).where(eq(photoVersions.id, versionId)).get();
    expect(version?.structureVerdict).toBe("refused");
  });

  it("a removed member and a stranger: 404, nothing written", async () => {
    const { teamId, mate, versionId, base } = await teamStaged("refused");
    const stranger = await onPlan("Starter plan", OWN_CREDITS);
    await db
      .update(teamMembers)
      .set({ removedAt: Date.now() })
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, mate.id)));
    for (const who of [mate, stranger]) {
      const res = await api(who.cookie, "POST", `${base}/keep`, {});
      expect(res.status).toBe(404);
      expect(await balance(who.id)).toBe(OWN_CREDITS);
    }
    expect(await poolOf(teamId)).toBe(POOL);
    const version = await db.select().from(photoVersions).where(eq(photoVersions.id, versionId)).get();
    expect(version?.structureVerdict).toBe("refused");
  });
});

describe("Re-roll on a team listing's photo", () => {
  it("is quoted as one credit of the team's pool, and asks for consent first", async () => {
    const { teamId, member, jobId } = await teamStaged("passed");
    const quote = await api(member.cookie, "GET", `/api/jobs/${jobId}/reroll`);
    expect(quote.status).toBe(200);
    expect(quote.body.quote).toEqual({ rootJobId: jobId, cost: 1, message: TEAM_REROLL_MESSAGE });
    const unasked = await api(member.cookie, "POST", `/api/jobs/${jobId}/reroll`, {});
    expect([unasked.status, unasked.body.error]).toEqual([409, TEAM_REROLL_MESSAGE]);
    expect([await poolOf(teamId), await balance(member.id)]).toEqual([POOL - 1, OWN_CREDITS]);
  });

  it("a teammate re-rolls the member's result: charged to the pool once under their name, sent again too", async () => {
    const { teamId, member, mate, jobId } = await teamStaged("passed");
    const mateQuote = await api(mate.cookie, "GET", `/api/jobs/${jobId}/reroll`);
    expect([mateQuote.status, mateQuote.body.quote?.cost]).toEqual([200, 1]);
    const headers = { "Idempotency-Key": "reroll-team-1" };
    const first = await api(mate.cookie, "POST", `/api/jobs/${jobId}/reroll`, { acceptCharge: true }, headers);
    expect(first.status).toBe(202);
    expect(first.body.cost).toBe(1);
    const again = await api(mate.cookie, "POST", `/api/jobs/${jobId}/reroll`, { acceptCharge: true }, headers);
    expect([again.status, again.body.job.id]).toEqual([202, first.body.job.id]);
    const done = await settleJob(mate.cookie, first.body.job.id);
    expect(done.status).toBe("succeeded");
    await teamObject(env, teamId).reconcile(teamId);
    expect(await poolOf(teamId)).toBe(POOL - 2);
    expect([await balance(member.id), await balance(mate.id)]).toEqual([OWN_CREDITS, OWN_CREDITS]);
    const row = await db.select().from(jobs).where(eq(jobs.id, first.body.job.id)).get();
    expect([row?.userId, row?.teamId, row?.rerollOf]).toEqual([mate.id, teamId, jobId]);
    const held = (await reservationsOf(teamId)).find((r) => r.jobId === first.body.job.id);
    expect([held?.memberId, held?.status]).toEqual([mate.id, "committed"]);
    // The result is the photo's version, made by the teammate, seen by the member who uploaded it.
    const versions = await api(member.cookie, "GET", `/api/photos/${row!.photoId}/versions`);
    expect(versions.body.versions.some((v: { createdBy: string }) => v.createdBy === mate.id)).toBe(true);
  });

  it("over the member's limit: refused with the limit's words before any provider call", async () => {
    const { teamId, mate, jobId } = await teamStaged("passed");
    await teamObject(env, teamId).setMemberLimit(teamId, mate.id, 0);
    const calls = provider.calls.length;
    const res = await api(mate.cookie, "POST", `/api/jobs/${jobId}/reroll`, { acceptCharge: true });
    expect([res.status, res.body.error]).toEqual([402, memberLimitMessage(0)]);
    expect(provider.calls.length).toBe(calls);
    expect(await poolOf(teamId)).toBe(POOL - 1);
  });

  it("a stranger and a removed member: 404 on the quote and the re-roll, nothing taken", async () => {
    const { teamId, member, jobId } = await teamStaged("passed");
    const stranger = await onPlan("Starter plan", OWN_CREDITS);
    await db
      .update(teamMembers)
      .set({ removedAt: Date.now() })
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, member.id)));
    for (const who of [stranger, member]) {
      expect((await api(who.cookie, "GET", `/api/jobs/${jobId}/reroll`)).status).toBe(404);
      const res = await api(who.cookie, "POST", `/api/jobs/${jobId}/reroll`, { acceptCharge: true });
      expect(res.status).toBe(404);
      expect(await balance(who.id)).toBe(OWN_CREDITS);
    }
    expect(await poolOf(teamId)).toBe(POOL - 1);
  });
});
