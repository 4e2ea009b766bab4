import type { Database } from "@db/client";
import { inList } from "@db/lists";
import {
  apiKeys,
  creditReservations,
  photos,
  photoVersions,
  teamLedger,
  teamMembers,
  teamReservations,
  teams,
} from "@db/schema";
import { payerKey } from "@db/teams";
import { run, type Stmt } from "@workers/objects/user/batch";
import { type Refusal, refusal } from "@workers/objects/user/credits/ledger-rows";
import { ALREADY_RETURNED, NOT_CHARGED } from "@workers/objects/user/credits/returns";
import { chosenVersionValues } from "@workers/objects/user/jobs/job-rows";
import { type RecourseRow, recourseWrites } from "@workers/objects/user/jobs/recourse-rows";
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import { memberLimitMessage, TEAM_POOL_EMPTY, TEAM_POOL_FROZEN } from "~/shared/teams";
import { holdBack } from "./held-back";
import { ledger } from "./ledger-row";

// A team's credit pool: the same ledger rules as a user's (docs/decisions/0020-credit-ledger.md), with the job's
// id as the reservation's key. Every function here runs inside the team's Durable Object, one at a time, and
// writes one atomic D1 batch; `teams.credits >= 0` is a CHECK, so a wrong computation fails the batch instead of
// going negative. The protocol with the member's object is docs/decisions/0270-team-credit-pool.md.

/** A held team credit whose job never appeared (its request died before the member's object recorded it). */
export const TEAM_ORPHAN_MS = 10 * 60 * 1000;
export const TEAM_NOT_FOUND = "Team not found";

export type PoolAnswer<T = object> = ({ ok: true; pool: number } & T) | Refusal;

function poolDelta(db: Database, teamId: string, delta: number, now: number): Stmt {
  return db
    .update(teams)
    .set({ credits: sql`${teams.credits} + ${delta}`, updatedAt: now })
    .where(eq(teams.id, teamId));
}

/**
 * Who may spend the pool, read inside the team's turn: an active member, or an active key of this team (a key is
 * not bound to any membership). Its limit per period; null when it may not spend at all.
 */
async function spender(db: Database, teamId: string, memberId: string): Promise<{ limit: number | null } | null> {
  const keyId = payerKey(memberId);
  if (keyId !== null) {
    const key = await db
      .select({ limit: apiKeys.creditLimit })
      .from(apiKeys)
      .where(and(eq(apiKeys.id, keyId), eq(apiKeys.teamId, teamId), isNull(apiKeys.revokedAt)))
      .get();
    return key ? { limit: key.limit } : null;
  }
  const member = await db
    .select({ limit: teamMembers.creditLimit })
    .from(teamMembers)
    .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, memberId), isNull(teamMembers.removedAt)))
    .get();
  return member ? { limit: member.limit } : null;
}

type TeamRow = typeof teams.$inferSelect;

/**
 * Why `amount` credits may not be taken for this spender now, or null when they may: a frozen pool (409), the
 * spender's limit for the period, then the pool itself (402). The one rule for a job's reserve and a kept version.
 */
async function spendRefusal(
  db: Database,
  team: TeamRow,
  memberId: string,
  limit: number | null,
  amount: number,
): Promise<Refusal | null> {
  if (team.frozenAt !== null) return refusal("conflict", TEAM_POOL_FROZEN, team.credits);
  if (limit !== null && (await memberSpent(db, team.id, memberId, team.periodStart)) + amount > limit) {
    return refusal("insufficient_credits", memberLimitMessage(limit), team.credits);
  }
  if (team.credits < amount) return refusal("insufficient_credits", TEAM_POOL_EMPTY, team.credits);
  return null;
}

export interface TeamReserve {
  memberId: string;
  /** Every job of one request (variations): all taken, or none. */
  jobs: { jobId: string; amount: number; reason: string }[];
}

export type ReserveAnswer = PoolAnswer<{
  /** "held" for credits taken now; a request sent again is answered with its jobs' status, nothing taken. */
  status: "held" | "committed" | "released";
  /** Whether this call took them (false: a request sent again). */
  created: boolean;
}>;

/**
 * Takes a request's credits from the pool, all or none, or refuses naming what is short: the pool frozen, the
 * member's limit for the period, or the pool. Idempotent by job id: a request already known is answered with the
 * status of its first job, nothing taken.
 */
export async function reserve(db: Database, teamId: string, r: TeamReserve, now: number): Promise<ReserveAnswer> {
  if (r.jobs.length === 0 || r.jobs.some((j) => !Number.isInteger(j.amount) || j.amount < 0)) {
    throw new Error("team reserve amounts must be whole numbers");
  }
  const ids = r.jobs.map((j) => j.jobId);
  const [teamRows, existing] = await db.batch([
    db.select().from(teams).where(eq(teams.id, teamId)),
    db.select().from(teamReservations).where(inList(teamReservations.jobId, ids)),
  ]);
  const team = teamRows[0];
  if (!team) return refusal("not_found", TEAM_NOT_FOUND, 0);
  const first = existing[0];
  if (first) {
    const same =
      existing.length === ids.length && existing.every((e) => e.teamId === teamId && e.memberId === r.memberId);
    if (!same) return refusal("not_found", "Not found", 0);
    return { ok: true, status: first.status, created: false, pool: team.credits };
  }
  const member = await spender(db, teamId, r.memberId);
  if (!member) return refusal("not_found", "Not found", team.credits);
  const total = r.jobs.reduce((n, j) => n + j.amount, 0);
  const refused = await spendRefusal(db, team, r.memberId, member.limit, total);
  if (refused) return refused;
  await run(db, [
    db.insert(teamReservations).values(
      r.jobs.map((j) => ({
        jobId: j.jobId,
        teamId,
        memberId: r.memberId,
        amount: j.amount,
        status: "held" as const,
        periodStart: team.periodStart,
        createdAt: now,
      })),
    ),
    db.insert(teamLedger).values(
      r.jobs.map((j) =>
        ledger(teamId, "reserve", -j.amount, j.reason, `reserve:${j.jobId}`, now, {
          memberId: r.memberId,
          jobId: j.jobId,
        }),
      ),
    ),
    poolDelta(db, teamId, -total, now),
  ]);
  return { ok: true, status: "held", created: true, pool: team.credits - total };
}

/** What the member has taken of the pool in the period: held and committed, not released. */
export async function memberSpent(db: Database, teamId: string, memberId: string, periodStart: number) {
  const row = await db
    .select({ spent: sql<number>`coalesce(sum(${teamReservations.amount}), 0)` })
    .from(teamReservations)
    .where(
      and(
        eq(teamReservations.teamId, teamId),
        eq(teamReservations.memberId, memberId),
        eq(teamReservations.periodStart, periodStart),
        inArray(teamReservations.status, ["held", "committed"]),
      ),
    )
    .get();
  return Number(row?.spent ?? 0);
}

/** Settles a held team credit as spent (commit) or gives it back (release); a settled one is answered as it is. */
export async function settle(
  db: Database,
  teamId: string,
  jobId: string,
  as: "committed" | "released",
  reason: string,
  now: number,
): Promise<{ ok: true; status: string } | Refusal> {
  const held = await db
    .select()
    .from(teamReservations)
    .where(and(eq(teamReservations.jobId, jobId), eq(teamReservations.teamId, teamId)))
    .get();
  if (!held) return refusal("not_found", "Reservation not found", 0);
  if (held.status !== "held") {
    return held.status === as
      ? { ok: true, status: held.status }
      : refusal("conflict", `The team's credit was already ${held.status}.`, 0);
  }
  const still = and(eq(teamReservations.jobId, jobId), eq(teamReservations.status, "held"));
  const mark = db.update(teamReservations).set({ status: as, settledAt: now }).where(still);
  const who = { memberId: held.memberId, jobId };
  // A failed job's credit is kept first against a reversed seat payment it was out at (ADR 0349).
  const back =
    as === "released"
      ? await holdBack(
          db,
          teamId,
          { madeAt: held.createdAt, amount: held.amount, key: `release:${jobId}`, memberId: held.memberId },
          now,
        )
      : { held: 0, writes: [] };
  const writes: Stmt[] =
    as === "committed"
      ? [mark, db.insert(teamLedger).values(ledger(teamId, "commit", 0, reason, `commit:${jobId}`, now, who))]
      : [
          mark,
          db.insert(teamLedger).values(ledger(teamId, "release", held.amount, reason, `release:${jobId}`, now, who)),
          ...back.writes,
          poolDelta(db, teamId, held.amount - back.held, now),
        ];
  await run(db, writes);
  return { ok: true, status: as };
}

/** Adds credits to the pool (a seat's paid credits, an operator's adjustment): once per idempotency key. */
export async function grant(
  db: Database,
  teamId: string,
  input: { amount: number; key: string; reason: string; actorId: string | null; kind?: "grant" | "adjust" },
  now: number,
): Promise<PoolAnswer<{ duplicate: boolean }>> {
  if (!Number.isInteger(input.amount) || input.amount <= 0) throw new Error("grant amount must be a positive integer");
  const [teamRows, seen] = await db.batch([
    db.select({ credits: teams.credits }).from(teams).where(eq(teams.id, teamId)),
    db.select({ id: teamLedger.id }).from(teamLedger).where(eq(teamLedger.idempotencyKey, input.key)),
  ]);
  const team = teamRows[0];
  if (!team) return refusal("not_found", TEAM_NOT_FOUND, 0);
  if (seen[0]) return { ok: true, duplicate: true, pool: team.credits };
  await run(db, grantStatements(db, teamId, input, now));
  return { ok: true, duplicate: false, pool: team.credits + input.amount };
}

/** A grant's ledger row and the pool's cache, for a batch that also writes what the grant came with. */
export function grantStatements(
  db: Database,
  teamId: string,
  input: { amount: number; key: string; reason: string; actorId: string | null; kind?: "grant" | "adjust" },
  now: number,
): Stmt[] {
  return [
    db
      .insert(teamLedger)
      .values(
        ledger(teamId, input.kind ?? "grant", input.amount, input.reason, input.key, now, { actorId: input.actorId }),
      ),
    poolDelta(db, teamId, input.amount, now),
  ];
}

/**
 * Follows every held team credit to its job's own reservation in the member's object (the job's outcome, written
 * there with its version rows in one batch): committed there is committed here, refunded there is released here,
 * and a job never recorded past TEAM_ORPHAN_MS is released. Safe to run at any time and any number of times.
 * Answers how many are still held.
 */
export async function reconcile(db: Database, teamId: string, now: number): Promise<{ settled: number; held: number }> {
  const rows = await db
    .select({
      jobId: teamReservations.jobId,
      createdAt: teamReservations.createdAt,
      outcome: creditReservations.status,
    })
    .from(teamReservations)
    .leftJoin(creditReservations, eq(creditReservations.key, teamReservations.jobId))
    .where(and(eq(teamReservations.teamId, teamId), eq(teamReservations.status, "held")))
    .all();
  let settled = 0;
  for (const r of rows) {
    let as: "committed" | "released" | null = null;
    if (r.outcome === "committed") as = "committed";
    else if (r.outcome === "refunded") as = "released";
    else if (r.outcome === null && r.createdAt <= now - TEAM_ORPHAN_MS) as = "released";
    if (!as) continue;
    const reason = as === "committed" ? "Image delivered" : r.outcome ? "Job refunded" : "Job was never started";
    await settle(db, teamId, r.jobId, as, reason, now);
    settled++;
  }
  return { settled, held: rows.length - settled };
}

export interface TeamReturn {
  /** The team job whose result is returned (its credit was committed here, keyed by the job's id). */
  jobId: string;
  /** The member who returns it: must be an active member of this team, read in this turn. */
  actorId: string;
  reason: string;
  /** `return:<version id>`: once per version, so once per job (a job makes one version). */
  key: string;
  /** The user's side, decided in the user's object's turn (which waits for this answer): written in this batch. */
  recourse: RecourseRow;
}

/**
 * "This result changed the room" on a team job (docs/decisions/0261, 0270): the committed credit of the job goes
 * back to the pool, as a ledger row of kind `refund` naming the member whose job it was (member_id) and the member
 * who returned it (actor_id), in ONE batch with the user's recourse row and the version marked returned. Refused,
 * writing nothing: the returning user not an active member (404), the key seen (409, already returned), the job not
 * charged to this team's pool (409). A job still held here whose member's reservation is committed (the runner's
 * word not yet arrived) is settled as committed first, as reconcile would.
 */
export async function returnCredit(
  db: Database,
  teamId: string,
  r: TeamReturn,
  now: number,
): Promise<PoolAnswer<{ returned: number; memberId: string }>> {
  const [teamRows, reservations, seen, actors, own] = await db.batch([
    db.select().from(teams).where(eq(teams.id, teamId)),
    db
      .select()
      .from(teamReservations)
      .where(and(eq(teamReservations.jobId, r.jobId), eq(teamReservations.teamId, teamId))),
    db.select({ id: teamLedger.id }).from(teamLedger).where(eq(teamLedger.idempotencyKey, r.key)),
    db
      .select({ userId: teamMembers.userId })
      .from(teamMembers)
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, r.actorId), isNull(teamMembers.removedAt))),
    db
      .select({ status: creditReservations.status })
      .from(creditReservations)
      .where(eq(creditReservations.key, r.jobId)),
  ]);
  const team = teamRows[0];
  if (!team) return refusal("not_found", TEAM_NOT_FOUND, 0);
  if (!actors[0]) return refusal("not_found", "Not found", team.credits);
  if (seen[0]) return refusal("conflict", ALREADY_RETURNED, team.credits);
  const held = reservations[0];
  if (!held || held.amount <= 0) return refusal("conflict", NOT_CHARGED, team.credits);
  let status = held.status;
  if (status === "held" && own[0]?.status === "committed") {
    const settled = await settle(db, teamId, r.jobId, "committed", "Image delivered", now);
    if (settled.ok) status = "committed";
  }
  if (status !== "committed") return refusal("conflict", NOT_CHARGED, team.credits);
  const back = await holdBack(
    db,
    teamId,
    { madeAt: held.createdAt, amount: held.amount, key: r.key, memberId: held.memberId },
    now,
  );
  const returned = held.amount - back.held;
  await run(db, [
    db.insert(teamLedger).values(
      // No job_id: the reservation's own rows stay reserve + commit (what its status says); the key names the version.
      ledger(teamId, "refund", held.amount, r.reason, r.key, now, { memberId: held.memberId, actorId: r.actorId }),
    ),
    ...back.writes,
    poolDelta(db, teamId, returned, now),
    ...recourseWrites(db, r.recourse),
  ]);
  return { ok: true, returned, memberId: held.memberId, pool: team.credits + returned };
}

export interface TeamKeep {
  /** The member who keeps it: an active member of this team (or a key of it), read in this turn. */
  memberId: string;
  versionId: string;
  photoId: string;
  reason: string;
  /** What the photo shows once kept: the version's own bytes. */
  shown: { key: string; contentType: string };
}

/**
 * "Keep it anyway" on a team listing's refused result (docs/decisions/0297-team-keep-and-re-roll.md): one credit of
 * the pool, taken and committed at once under the key `keep:<version>` (a reservation of its own, with its reserve
 * and commit rows, counted toward the member's limit for the period like a job), in ONE batch with the version marked
 * kept and shown on its photo. Refused as `reserve` refuses (not a member 404, frozen 409, the limit or the pool 402),
 * writing nothing. Kept already: answered with the pool, nothing taken.
 */
export async function keepVersion(
  db: Database,
  teamId: string,
  k: TeamKeep,
  now: number,
): Promise<PoolAnswer<{ charged: boolean }>> {
  const key = `keep:${k.versionId}`;
  const [teamRows, existing] = await db.batch([
    db.select().from(teams).where(eq(teams.id, teamId)),
    db.select().from(teamReservations).where(eq(teamReservations.jobId, key)),
  ]);
  const team = teamRows[0];
  if (!team) return refusal("not_found", TEAM_NOT_FOUND, 0);
  const member = await spender(db, teamId, k.memberId);
  if (!member) return refusal("not_found", "Not found", team.credits);
  if (existing[0]) return { ok: true, charged: false, pool: team.credits };
  const refused = await spendRefusal(db, team, k.memberId, member.limit, 1);
  if (refused) return refused;
  const who = { memberId: k.memberId, jobId: key };
  await run(db, [
    db.insert(teamReservations).values({
      jobId: key,
      teamId,
      memberId: k.memberId,
      amount: 1,
      status: "committed",
      periodStart: team.periodStart,
      createdAt: now,
      settledAt: now,
    }),
    db
      .insert(teamLedger)
      .values([
        ledger(teamId, "reserve", -1, k.reason, `reserve:${key}`, now, who),
        ledger(teamId, "commit", 0, k.reason, `commit:${key}`, now, who),
      ]),
    poolDelta(db, teamId, -1, now),
    db.update(photoVersions).set({ storedVerdict: "kept" }).where(eq(photoVersions.id, k.versionId)),
    db
      .update(photos)
      .set(chosenVersionValues({ id: k.versionId, ...k.shown }, now))
      .where(eq(photos.id, k.photoId)),
  ]);
  return { ok: true, charged: true, pool: team.credits - 1 };
}
