import type { Database } from "@db/client";
import { apiKeys, teamLedger, teamMembers, teamReservations, teams, users } from "@db/schema";
import { payerKey } from "@db/teams";
import { and, asc, count, desc, eq, isNull, sql } from "drizzle-orm";
import { TEAM_ROLE_LABELS } from "~/shared/teams";

// The operator's view of teams (issue 47 item 6; app/routes/admin/teams.tsx, app/routes/admin/team.tsx): every team
// with its seats and pool, and one team's members and its pool's ledger summed by member. Read only; the admin
// pages answer 404 to everyone but admins (requireAdmin), like the rest of /admin.

/** Teams, newest first, with their seats taken and pool: at most `limit`. */
export async function consoleTeams(db: Database, limit = 200) {
  const members = db
    .select({ teamId: teamMembers.teamId, n: count().as("n") })
    .from(teamMembers)
    .where(isNull(teamMembers.removedAt))
    .groupBy(teamMembers.teamId)
    .as("m");
  return db
    .select({
      id: teams.id,
      name: teams.name,
      owner: users.email,
      seats: teams.seats,
      members: sql<number>`coalesce(${members.n}, 0)`,
      pool: teams.credits,
      frozen: sql<boolean>`${teams.frozenAt} IS NOT NULL`,
      createdAt: teams.createdAt,
    })
    .from(teams)
    .leftJoin(users, eq(users.id, teams.ownerId))
    .leftJoin(members, eq(members.teamId, teams.id))
    .orderBy(desc(teams.createdAt))
    .limit(limit)
    .all();
}

export interface LedgerByMember {
  /** team_ledger.member_id: a user id, `key:<id>` for a team API key, null for grants and adjustments. */
  memberId: string | null;
  label: string;
  /** What the row is: a member's role (and whether they left), a team API key, or billing. */
  kind: string;
  /** SUM(amount) of the member's ledger rows: minus what they spent and still hold. */
  sum: number;
  /** Jobs whose credit was committed (delivered). */
  committed: number;
  /** Credits held now for jobs still running. */
  held: number;
}

/** One team for the operator: seats, members (with those removed), the pool and its ledger by member; null: none. */
export async function consoleTeam(db: Database, teamId: string) {
  const team = await db.select().from(teams).where(eq(teams.id, teamId)).get();
  if (!team) return null;
  const [members, sums, holds] = await db.batch([
    db
      .select({
        userId: teamMembers.userId,
        name: users.name,
        email: users.email,
        role: teamMembers.role,
        creditLimit: teamMembers.creditLimit,
        removedAt: teamMembers.removedAt,
      })
      .from(teamMembers)
      .leftJoin(users, eq(users.id, teamMembers.userId))
      .where(eq(teamMembers.teamId, teamId))
      .orderBy(asc(teamMembers.joinedAt)),
    db
      .select({
        memberId: teamLedger.memberId,
        sum: sql<number>`sum(${teamLedger.amount})`,
        committed: sql<number>`sum(CASE WHEN ${teamLedger.kind} = 'commit' THEN 1 ELSE 0 END)`,
      })
      .from(teamLedger)
      .where(eq(teamLedger.teamId, teamId))
      .groupBy(teamLedger.memberId),
    db
      .select({ memberId: teamReservations.memberId, held: sql<number>`sum(${teamReservations.amount})` })
      .from(teamReservations)
      .where(and(eq(teamReservations.teamId, teamId), eq(teamReservations.status, "held")))
      .groupBy(teamReservations.memberId),
  ]);
  const keys = await db
    .select({ id: apiKeys.id, name: apiKeys.name, revokedAt: apiKeys.revokedAt })
    .from(apiKeys)
    .where(eq(apiKeys.teamId, teamId))
    .all();
  const keyById = new Map(keys.map((k) => [k.id, k]));
  const memberById = new Map(members.map((m) => [m.userId, m]));
  const heldBy = new Map(holds.map((h) => [h.memberId, Number(h.held)]));
  const ledger: LedgerByMember[] = sums.map((s) => {
    const keyId = s.memberId === null ? null : payerKey(s.memberId);
    const key = keyId === null ? undefined : keyById.get(keyId);
    const member = s.memberId === null ? undefined : memberById.get(s.memberId);
    let label = "Grants and adjustments";
    let kind = "Billing";
    if (keyId !== null) {
      label = key?.name ?? keyId;
      kind = key?.revokedAt ? "Team API key (revoked)" : "Team API key";
    } else if (s.memberId !== null) {
      label = member?.email ?? s.memberId;
      kind = member
        ? `${TEAM_ROLE_LABELS[member.role]}${member.removedAt !== null ? " (removed)" : ""}`
        : "Former member";
    }
    return {
      memberId: s.memberId,
      label,
      kind,
      sum: Number(s.sum),
      committed: Number(s.committed),
      held: s.memberId === null ? 0 : (heldBy.get(s.memberId) ?? 0),
    };
  });
  return {
    team: {
      id: team.id,
      name: team.name,
      seats: team.seats,
      pool: team.credits,
      frozen: team.frozenAt !== null,
      periodStart: team.periodStart,
      createdAt: team.createdAt,
    },
    members: members.map((m) => ({ ...m, roleLabel: TEAM_ROLE_LABELS[m.role] })),
    seatsTaken: members.filter((m) => m.removedAt === null).length,
    ledger,
    /** SUM over the whole ledger: equals the pool (the invariant the team's object keeps). */
    ledgerTotal: ledger.reduce((n, l) => n + l.sum, 0),
    keys: keys.length,
  };
}
