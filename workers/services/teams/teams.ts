import { type Team, type TeamMember, teamInvitations, teamMembers, teams, users } from "@db/schema";
import { randomToken } from "@workers/lib/crypto";
import { teamObject } from "@workers/objects/client";
import type { Deps } from "@workers/services/request-deps";
import { and, asc, count, eq, gt, isNull, ne, sql } from "drizzle-orm";
import { fail, NOT_FOUND, ok, type Result } from "~/shared/result";
import { managesTeam, TEAM_ROLE_LABELS, type TeamRoleName } from "~/shared/teams";

// Teams (issue 47): membership and role, checked on the server for every team route and action. A team that is not
// yours, or that you were removed from, looks exactly like one that does not exist (404); an agent asking for a
// team admin's action is told it is not theirs (403). docs/decisions/0271-team-membership-on-every-request.md

export const TEAM_ADMIN_ONLY = "Only the team's owner or a team admin can do that.";
export const TEAM_OWNER_ONLY = "Only the team's owner can do that.";

export interface Membership {
  team: Team;
  member: TeamMember;
}

/** The signed-in user's active membership of the team, read on every request (removal ends access at once). */
export async function membership(db: Deps["db"], teamId: string, userId: string): Promise<Membership | null> {
  const row = await db
    .select({ team: teams, member: teamMembers })
    .from(teamMembers)
    .innerJoin(teams, eq(teams.id, teamMembers.teamId))
    .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, userId), isNull(teamMembers.removedAt)))
    .get();
  return row ?? null;
}

/** Membership with the role a route needs: "member" (any), "manage" (owner or team admin), "owner". */
export async function requireTeamRole(
  db: Deps["db"],
  teamId: string,
  userId: string,
  need: "member" | "manage" | "owner",
): Promise<Result<Membership>> {
  const found = await membership(db, teamId, userId);
  if (!found) return NOT_FOUND;
  if (need === "manage" && !managesTeam(found.member.role)) return fail("forbidden", TEAM_ADMIN_ONLY);
  if (need === "owner" && found.member.role !== "owner") return fail("forbidden", TEAM_OWNER_ONLY);
  return ok(found);
}

/** A new team; its creator is its owner. Any verified user may make one. */
export async function createTeam(deps: Pick<Deps, "db" | "clock">, ownerId: string, name: string) {
  const id = randomToken();
  const now = deps.clock();
  await deps.db.batch([
    deps.db.insert(teams).values({ id, name, ownerId, seats: 1, periodStart: now, createdAt: now, updatedAt: now }),
    deps.db.insert(teamMembers).values({ teamId: id, userId: ownerId, role: "owner", joinedAt: now }),
  ]);
  return id;
}

/** The teams the user belongs to now, with their role. */
export async function myTeams(db: Deps["db"], userId: string) {
  return db
    .select({ id: teams.id, name: teams.name, role: teamMembers.role })
    .from(teamMembers)
    .innerJoin(teams, eq(teams.id, teamMembers.teamId))
    .where(and(eq(teamMembers.userId, userId), isNull(teamMembers.removedAt)))
    .orderBy(asc(teams.name))
    .all();
}

/** Seats taken (active members) and invitations pending (not used, revoked or expired). */
export async function seatUse(db: Deps["db"], teamId: string, now: number) {
  const [members, pending] = await db.batch([
    db
      .select({ n: count() })
      .from(teamMembers)
      .where(and(eq(teamMembers.teamId, teamId), isNull(teamMembers.removedAt))),
    db
      .select({ n: count() })
      .from(teamInvitations)
      .where(
        and(
          eq(teamInvitations.teamId, teamId),
          isNull(teamInvitations.acceptedAt),
          isNull(teamInvitations.revokedAt),
          gt(teamInvitations.expiresAt, now),
        ),
      ),
  ]);
  return { members: members[0]?.n ?? 0, pending: pending[0]?.n ?? 0 };
}

export interface TeamPageMember {
  userId: string;
  name: string;
  email: string;
  role: TeamRoleName;
  roleLabel: string;
  creditLimit: number | null;
}

/** What the team's page shows its member: managers also see invitations and every member's limit. */
export async function teamPage(deps: Pick<Deps, "db" | "clock">, teamId: string, userId: string) {
  const found = await requireTeamRole(deps.db, teamId, userId, "member");
  if (!found.ok) return found;
  const { team, member } = found;
  const now = deps.clock();
  const manager = managesTeam(member.role);
  const members = await deps.db
    .select({
      userId: teamMembers.userId,
      name: users.name,
      email: users.email,
      role: teamMembers.role,
      creditLimit: teamMembers.creditLimit,
    })
    .from(teamMembers)
    .innerJoin(users, eq(users.id, teamMembers.userId))
    .where(and(eq(teamMembers.teamId, teamId), isNull(teamMembers.removedAt)))
    .orderBy(asc(teamMembers.joinedAt))
    .all();
  const invitations = manager
    ? await deps.db
        .select({ id: teamInvitations.id, email: teamInvitations.email, role: teamInvitations.role })
        .from(teamInvitations)
        .where(
          and(
            eq(teamInvitations.teamId, teamId),
            isNull(teamInvitations.acceptedAt),
            isNull(teamInvitations.revokedAt),
            gt(teamInvitations.expiresAt, now),
          ),
        )
        .all()
    : [];
  return ok({
    team: {
      id: team.id,
      name: team.name,
      seats: team.seats,
      pool: team.credits,
      frozen: team.frozenAt !== null,
      subscribed: team.stripeSubscriptionId !== null,
      retentionDays: team.retentionDays,
    },
    me: { role: member.role, manager, owner: member.role === "owner" },
    members: members.map((m) => ({ ...m, roleLabel: TEAM_ROLE_LABELS[m.role] })),
    invitations,
    freeSeats: Math.max(0, team.seats - members.length - invitations.length),
  });
}

/** Removes a member (not the owner): their access to the team ends on their next request; their library stays. */
export async function removeMember(
  deps: Pick<Deps, "db" | "clock">,
  teamId: string,
  actorId: string,
  memberId: string,
) {
  const found = await requireTeamRole(deps.db, teamId, actorId, "manage");
  if (!found.ok) return found;
  const target = await membership(deps.db, teamId, memberId);
  if (!target) return fail("not_found", "That member was not found.");
  if (target.member.role === "owner") return fail("conflict", "The team's owner cannot be removed.");
  await deps.db
    .update(teamMembers)
    .set({ removedAt: deps.clock() })
    .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, memberId), isNull(teamMembers.removedAt)));
  return ok({ message: "Member removed. Their access to the team has ended." });
}

/**
 * Hands the team to another active member (docs/decisions/0311-team-ownership-handed-over.md): they become its owner
 * (billing, seats, the team plan), the previous owner a team admin, in one D1 batch. Each statement after the first
 * holds only while the team's owner is the new one, so two handovers sent at once leave exactly one owner.
 */
export async function transferOwnership(
  deps: Pick<Deps, "db" | "env" | "clock" | "stripe">,
  teamId: string,
  actorId: string,
  memberId: string,
): Promise<Result<{ message: string }>> {
  const found = await requireTeamRole(deps.db, teamId, actorId, "owner");
  if (!found.ok) return found;
  if (memberId === actorId) return fail("invalid", "You already own this team.");
  const target = await membership(deps.db, teamId, memberId);
  if (!target) return fail("not_found", "That member was not found.");
  const { db } = deps;
  const now = deps.clock();
  // The team's receipts go to its owner: Stripe's customer (the team's own, ensureTeamCustomer) gets the new owner's
  // address first, so a failure at Stripe leaves the team as it was.
  const person = await db
    .select({ name: users.name, email: users.email })
    .from(users)
    .where(eq(users.id, memberId))
    .get();
  const customer = found.team.stripeCustomerId;
  if (customer) {
    try {
      if (person) await deps.stripe.customers.update(customer, { email: person.email });
    } catch {
      return fail("unavailable", "We could not reach Stripe to move the team's billing. Nothing changed; try again.");
    }
  }
  // An owner has no limit but the pool (the page sets limits on everyone else): cleared before the roles change.
  if (target.member.creditLimit !== null) await teamObject(deps.env, teamId).setMemberLimit(teamId, memberId, null);
  const handedTo = sql`EXISTS (SELECT 1 FROM teams WHERE id = ${teamId} AND owner_id = ${memberId})`;
  const [moved] = await db.batch([
    db
      .update(teams)
      .set({ ownerId: memberId, updatedAt: now })
      .where(and(eq(teams.id, teamId), eq(teams.ownerId, actorId)))
      .returning({ id: teams.id }),
    db
      .update(teamMembers)
      .set({ role: "owner" })
      .where(
        and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, memberId), isNull(teamMembers.removedAt), handedTo),
      ),
    db
      .update(teamMembers)
      .set({ role: "team_admin" })
      .where(
        and(
          eq(teamMembers.teamId, teamId),
          eq(teamMembers.userId, actorId),
          ne(teamMembers.userId, memberId),
          isNull(teamMembers.removedAt),
          handedTo,
        ),
      ),
  ]);
  if (moved.length === 0) return fail("conflict", "The team's owner changed meanwhile. Reload the page.");
  return ok({ message: `${person?.name || "The member"} now owns the team. You are a team admin.` });
}

/**
 * The teams the user owns, each with whether another active member is in it and its plan at Stripe, in one read: an
 * account's deletion is refused while one has other members (handed over first, transferOwnership), and cancels the
 * plans of the others.
 */
export async function ownedTeams(db: Deps["db"], userId: string) {
  return db
    .select({
      id: teams.id,
      name: teams.name,
      subscription: teams.stripeSubscriptionId,
      others: sql<number>`EXISTS (SELECT 1 FROM team_members o WHERE o.team_id = ${teams.id} AND o.user_id <> ${userId} AND o.removed_at IS NULL)`,
    })
    .from(teams)
    .innerJoin(teamMembers, and(eq(teamMembers.teamId, teams.id), eq(teamMembers.userId, userId)))
    .where(and(eq(teams.ownerId, userId), eq(teamMembers.role, "owner"), isNull(teamMembers.removedAt)))
    .orderBy(asc(teams.name))
    .all();
}

/** What an owner is told when their account's deletion would leave a team's members without an owner. */
export function ownerMustHandOver(team: { name: string }): string {
  return `You own the team "${team.name}", which has other members. Make one of them its owner on the team's page before deleting your account. Nothing was deleted.`;
}

/** A member's limit of pool credits per billing period (null: none), set in the team's object (ADR 0270). */
export async function setMemberLimit(
  deps: Pick<Deps, "db" | "env">,
  teamId: string,
  actorId: string,
  memberId: string,
  limit: number | null,
) {
  const found = await requireTeamRole(deps.db, teamId, actorId, "manage");
  if (!found.ok) return found;
  if (!(await membership(deps.db, teamId, memberId))) return fail("not_found", "That member was not found.");
  await teamObject(deps.env, teamId).setMemberLimit(teamId, memberId, limit);
  return ok({ message: limit === null ? "Limit removed." : `Limit set to ${limit} credits this billing period.` });
}
