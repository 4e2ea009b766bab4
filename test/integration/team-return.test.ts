import { env } from "cloudflare:workers";
import {
  creditLedger,
  photoVersions,
  structureRecourses,
  teamLedger,
  teamMembers,
  teamPaymentReversals,
  teamReservations,
} from "@db/schema";
import { db } from "@test/support/factories";
import { api, balance, onPlan, photosOf, settleJob } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { roomAnswer, useRoomAsOriginal } from "@test/support/structure-room";
import { poolOf, stagedTeamJob } from "@test/support/team-jobs";
import { teamObject } from "@workers/objects/client";
import { ALREADY_RETURNED } from "@workers/objects/user/credits/returns";
import { monthSpent, ONLY_CHECKED, RETURN_REASON } from "@workers/objects/user/jobs/recourse";
import { and, eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import {
  RETURNED,
  RETURNED_HELD_BACK,
  RETURNED_TO_TEAM,
  RETURNS_PER_MONTH,
  returnedMessage,
} from "~/shared/version-view";

// "This result changed the room" on a team job (docs/decisions/0261-this-result-changed-the-room.md, 0270): the job's
// credit was the team's pool's (the member's own reservation is 0 credits), so the return gives it back to the pool,
// once, through the team's object, in one batch with the member's recourse row and the version's mark. The member's
// own credits do not move; the month's limit and the 7 days are the user's as before. Real jobs, through the queue,
// the check Worker and both objects.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

const OWN_CREDITS = 2;
const POOL = 3;

/** A member (with credits of their own) of a team with a pool of 3, and a result of a team job on their photo. */
function teamStaged(answer: "passed" | "flagged" | "refused" = "passed") {
  return stagedTeamJob(provider, { pool: POOL, ownCredits: OWN_CREDITS, answer });
}

async function refunds(teamId: string) {
  return db
    .select()
    .from(teamLedger)
    .where(and(eq(teamLedger.teamId, teamId), eq(teamLedger.kind, "refund")))
    .all();
}

async function ownReturns(userId: string) {
  return db
    .select()
    .from(creditLedger)
    .where(and(eq(creditLedger.userId, userId), eq(creditLedger.reason, RETURN_REASON)))
    .all();
}

async function recourseOf(versionId: string) {
  return db.select().from(structureRecourses).where(eq(structureRecourses.versionId, versionId)).all();
}

async function returnedAt(versionId: string) {
  const row = await db.select().from(photoVersions).where(eq(photoVersions.id, versionId)).get();
  return row!.structureReturnedAt;
}

describe("This result changed the room, on a team job", () => {
  it("gives the credit back to the team's pool once, naming the member; the member's own credits do not move", async () => {
    const { teamId, member, jobId, versionId, base } = await teamStaged("flagged");
    expect([await poolOf(teamId), await balance(member.id)]).toEqual([POOL - 1, OWN_CREDITS]);
    const first = await api(member.cookie, "POST", `${base}/changed-room`, {});
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ versionId, credits: OWN_CREDITS, kept: false, returnedTo: "team", pool: POOL });
    expect(await poolOf(teamId)).toBe(POOL);
    expect(await balance(member.id)).toBe(OWN_CREDITS);
    expect(await ownReturns(member.id)).toEqual([]);
    const rows = await refunds(teamId);
    expect(rows.map((r) => [r.amount, r.memberId, r.actorId, r.jobId, r.idempotencyKey, r.reason])).toEqual([
      [1, member.id, member.id, null, `return:${versionId}`, RETURN_REASON],
    ]);
    // The reservation stays committed (the job was delivered); the refund after it is the pool's own row.
    const reservation = await db.select().from(teamReservations).where(eq(teamReservations.jobId, jobId)).get();
    expect(reservation?.status).toBe("committed");
    // The user's side as for a personal job: the recourse row (counted for the month) and the version's mark.
    expect((await recourseOf(versionId)).map((r) => [r.userId, r.verdict])).toEqual([[member.id, "flagged"]]);
    expect(await returnedAt(versionId)).not.toBeNull();

    const second = await api(member.cookie, "POST", `${base}/changed-room`, { keepPair: true });
    expect([second.status, second.body.error]).toEqual([409, ALREADY_RETURNED]);
    expect(await poolOf(teamId)).toBe(POOL);
    expect(await refunds(teamId)).toHaveLength(1);
    // What the photo view's form then says (pages are not in the workerd build; the route maps returnedTo).
    expect(returnedMessage(first.body.returnedTo)).toBe(RETURNED_TO_TEAM);
  });

  it("after a seat refund that found the job's credit out, the return keeps it back and says so (ADR 0349)", async () => {
    const { teamId, member, jobId, versionId, base } = await teamStaged("flagged");
    const reservation = await db.select().from(teamReservations).where(eq(teamReservations.jobId, jobId)).get();
    // A refund after the job was reserved, which could not take one credit the job held (as reversals.ts records it).
    await db.insert(teamPaymentReversals).values({
      id: `re_${jobId}`,
      teamId,
      paymentIntentId: `pi_${jobId}`,
      cause: "refund",
      granted: POOL,
      due: POOL,
      taken: POOL - 1,
      owed: 1,
      heldBack: 0,
      restoredAt: null,
      createdAt: reservation!.createdAt + 1,
    });
    const answer = await api(member.cookie, "POST", `${base}/changed-room`, {});
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ versionId, returnedTo: "held-back", pool: POOL - 1 });
    expect(returnedMessage(answer.body.returnedTo)).toBe(RETURNED_HELD_BACK);
    expect(await poolOf(teamId)).toBe(POOL - 1);
    const row = await db
      .select()
      .from(teamPaymentReversals)
      .where(eq(teamPaymentReversals.id, `re_${jobId}`))
      .get();
    expect(row?.heldBack).toBe(1);
    // Returned all the same: the recourse row and the mark are written, once.
    expect(await recourseOf(versionId)).toHaveLength(1);
    expect(await returnedAt(versionId)).not.toBeNull();
  });

  it("two returns sent at once: one gives the credit back, the other is refused, the pool +1 exactly", async () => {
    const { teamId, member, versionId, base } = await teamStaged("passed");
    const answers = await Promise.all([
      api(member.cookie, "POST", `${base}/changed-room`, {}),
      api(member.cookie, "POST", `${base}/changed-room`, { keepPair: true }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(answers.find((a) => a.status === 409)!.body.error).toBe(ALREADY_RETURNED);
    expect(await poolOf(teamId)).toBe(POOL);
    expect(await refunds(teamId)).toHaveLength(1);
    expect(await recourseOf(versionId)).toHaveLength(1);
    expect(await balance(member.id)).toBe(OWN_CREDITS);
  });

  it("the team's object returns a job's credit once by its key, even when asked twice at once", async () => {
    const { teamId, member, photo, jobId, versionId } = await teamStaged("passed");
    const team = teamObject(env, teamId);
    const ask = () =>
      team.returnCredit(teamId, {
        jobId,
        actorId: member.id,
        reason: RETURN_REASON,
        key: `return:${versionId}`,
        recourse: {
          versionId,
          userId: member.id,
          photoId: photo.id,
          kind: "stage",
          verdict: "passed",
          score: null,
          candidatePrefix: null,
          createdAt: Date.now(),
        },
      });
    const answers = await Promise.all([ask(), ask()]);
    expect(answers.map((a) => a.ok).sort()).toEqual([false, true]);
    const refused = answers.find((a) => !a.ok);
    expect(refused && !refused.ok && refused.error).toBe(ALREADY_RETURNED);
    expect(await poolOf(teamId)).toBe(POOL);
    expect(await refunds(teamId)).toHaveLength(1);
    expect(await recourseOf(versionId)).toHaveLength(1);
    expect(await returnedAt(versionId)).not.toBeNull();
  });

  it("a batch that cannot be written writes nothing: no refund without the recourse row, nor the reverse", async () => {
    const { teamId, member, photo, jobId, versionId } = await teamStaged("passed");
    // The version's recourse row exists already (its primary key): the pool's batch with it must fail whole.
    await db.insert(structureRecourses).values({
      versionId,
      userId: member.id,
      photoId: photo.id,
      kind: "stage",
      verdict: "passed",
      createdAt: Date.now(),
    });
    // Settled here (an RPC promise handed to expect().rejects is reported as unhandled).
    const failed = await teamObject(env, teamId)
      .returnCredit(teamId, {
        jobId,
        actorId: member.id,
        reason: RETURN_REASON,
        key: `return:${versionId}`,
        recourse: {
          versionId,
          userId: member.id,
          photoId: photo.id,
          kind: "stage",
          verdict: "passed",
          score: null,
          candidatePrefix: null,
          createdAt: Date.now(),
        },
      })
      .then(
        () => null,
        (err: unknown) => String(err),
      );
    expect(failed).toMatch(/UNIQUE constraint failed: structure_recourses/);
    expect(await poolOf(teamId)).toBe(POOL - 1);
    expect(await refunds(teamId)).toEqual([]);
    expect(await returnedAt(versionId)).toBeNull();
  });

  it("a member removed from the team cannot return their team job's result: 404, nothing written", async () => {
    const { teamId, member, photo, jobId, versionId, base } = await teamStaged("passed");
    await db
      .update(teamMembers)
      .set({ removedAt: Date.now() })
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, member.id)));
    // The route's access rule (ADR 0280) answers first; the team's object checks again in its own turn, for a
    // removal that lands between the route and the pool: both refuse as not found and write nothing.
    const res = await api(member.cookie, "POST", `${base}/changed-room`, { keepPair: true });
    expect(res.status).toBe(404);
    const direct = await teamObject(env, teamId).returnCredit(teamId, {
      jobId,
      actorId: member.id,
      reason: RETURN_REASON,
      key: `return:${versionId}`,
      recourse: {
        versionId,
        userId: member.id,
        photoId: photo.id,
        kind: "stage",
        verdict: "passed",
        score: null,
        candidatePrefix: null,
        createdAt: Date.now(),
      },
    });
    expect(direct.ok ? "returned" : direct.code).toBe("not_found");
    expect(await poolOf(teamId)).toBe(POOL - 1);
    expect(await refunds(teamId)).toEqual([]);
    expect(await recourseOf(versionId)).toEqual([]);
    expect(await returnedAt(versionId)).toBeNull();
    expect(await balance(member.id)).toBe(OWN_CREDITS);
  });

  it("a teammate returns a team job's result on another member's photo to the pool; a result the member paid from their own credits stays theirs", async () => {
    const { teamId, member, mate, photo, versionId, base } = await teamStaged("passed");
    const res = await api(mate.cookie, "POST", `${base}/changed-room`, {});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ versionId, returnedTo: "team", pool: POOL });
    // The pool's row names the member whose job it was; the recourse row the teammate who returned it.
    expect((await refunds(teamId)).map((r) => [r.memberId, r.actorId, r.amount])).toEqual([[member.id, mate.id, 1]]);
    expect((await recourseOf(versionId)).map((r) => r.userId)).toEqual([mate.id]);
    expect(await balance(mate.id)).toBe(OWN_CREDITS);

    // A result made from the member's own credits before the photo was in a team listing: 404 to the teammate.
    const own = await db.select().from(photoVersions).where(eq(photoVersions.id, versionId)).get();
    const earlier = `${versionId.slice(0, 20)}personalera1`;
    await db
      .insert(photoVersions)
      .values({ ...own!, id: earlier, jobId: "no-such-team-job", structureReturnedAt: null });
    const mine = await api(mate.cookie, "POST", `/api/photos/${photo.id}/versions/${earlier}/changed-room`, {});
    expect(mine.status).toBe(404);
    expect(await recourseOf(earlier)).toEqual([]);
    expect(await poolOf(teamId)).toBe(POOL);
  });

  it(`the member's ${RETURNS_PER_MONTH} returns a month count team jobs too: past them, 429 and the pool unchanged`, async () => {
    const { teamId, member, photo, base } = await teamStaged("passed");
    const now = Date.now();
    for (let i = 0; i < RETURNS_PER_MONTH; i++) {
      await db.insert(structureRecourses).values({
        versionId: `earlier-${member.id}-${i}`,
        userId: member.id,
        photoId: photo.id,
        kind: "stage",
        verdict: "passed",
        createdAt: now - i * 1000,
      });
    }
    const res = await api(member.cookie, "POST", `${base}/changed-room`, {});
    expect([res.status, res.body.error]).toEqual([429, monthSpent()]);
    expect(await poolOf(teamId)).toBe(POOL - 1);
    expect(await refunds(teamId)).toEqual([]);
  });

  it("a refused team result: the pool gets its credit back, and a return moves none", async () => {
    const { teamId, member, jobId, base } = await teamStaged("refused");
    // A refused result was not charged: the member's 0-credit reservation was refunded, the pool's released.
    await teamObject(env, teamId).reconcile(teamId);
    expect(await poolOf(teamId)).toBe(POOL);
    const reservation = await db.select().from(teamReservations).where(eq(teamReservations.jobId, jobId)).get();
    expect(reservation?.status).toBe("released");
    const back = await api(member.cookie, "POST", `${base}/changed-room`, {});
    expect([back.status, back.body.error]).toEqual([409, ONLY_CHECKED]);
    expect([await poolOf(teamId), await balance(member.id)]).toEqual([POOL, OWN_CREDITS]);
    expect(await refunds(teamId)).toEqual([]);
    // Keep it anyway and the re-roll on a team listing's photo: test/integration/team-keep-reroll.test.ts (ADR 0297).
  });
});

describe("This result changed the room, on a personal job (unchanged)", () => {
  it("gives the credit back to the user's own credits and says so; no team is touched", async () => {
    const user = await onPlan("Starter plan", 3);
    const [photo] = await photosOf(user.id, 1);
    await useRoomAsOriginal(photo!);
    provider.answer = () => [roomAnswer("stage")];
    const started = await api(user.cookie, "POST", `/api/photos/${photo!.id}/jobs`, {
      kind: "stage",
      roomType: "Living Room",
      designStyle: "Modern",
    });
    const job = await settleJob(user.cookie, started.body.job.id);
    const res = await api(user.cookie, "POST", `/api/photos/${photo!.id}/versions/${job.versionId}/changed-room`, {});
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ versionId: job.versionId, credits: 3, kept: false, returnedTo: "own", pool: null });
    expect(await balance(user.id)).toBe(3);
    expect((await ownReturns(user.id)).map((r) => [r.kind, r.amount])).toEqual([["refund", 1]]);
    expect(
      await db
        .select()
        .from(teamLedger)
        .where(eq(teamLedger.idempotencyKey, `return:${job.versionId}`))
        .all(),
    ).toEqual([]);
    expect(returnedMessage("own")).toBe(RETURNED);
  });
});
