import { teamInvitations, teamMembers, teams, users } from "@db/schema";
import { escapeHtml } from "@workers/adapters/mail";
import { randomToken, sha256Hex } from "@workers/lib/crypto";
import { log } from "@workers/lib/log";
import type { Deps } from "@workers/services/request-deps";
import { and, eq, gt, isNull, sql } from "drizzle-orm";
import { fail, ok, type Result } from "~/shared/result";
import { INVITATION_DAYS, INVITATION_GONE, INVITATION_TTL_MS } from "~/shared/teams";

export { INVITATION_GONE };

import { membership, requireTeamRole, seatUse } from "./teams";

// Invitations to a team by e-mail (issue 47): a link with a random token (only its SHA-256 is kept), valid 7 days,
// used once, and only by a signed-in account with the invited address. No more may be pending than seats are free.

export const NO_FREE_SEAT = "Every seat is taken or promised to a pending invitation. Add a seat or revoke one.";
export const ALREADY_MEMBER = "That person is already a member of the team.";
export const INVITATION_OTHER_ADDRESS =
  "This invitation was sent to another e-mail address. Sign in with that address to accept it.";

const normal = (email: string) => email.trim().toLowerCase();

/** Invites `email` as an agent or team admin, e-mailing the link; nothing is kept if the e-mail cannot be sent. */
export async function invite(
  deps: Pick<Deps, "db" | "mailer" | "origin" | "clock">,
  teamId: string,
  actorId: string,
  input: { email: string; role: "agent" | "team_admin" },
): Promise<Result<{ message: string }>> {
  const found = await requireTeamRole(deps.db, teamId, actorId, "manage");
  if (!found.ok) return found;
  const { team } = found;
  const now = deps.clock();
  const email = normal(input.email);
  const already = await deps.db
    .select({ userId: teamMembers.userId })
    .from(teamMembers)
    .innerJoin(users, eq(users.id, teamMembers.userId))
    .where(and(eq(teamMembers.teamId, teamId), isNull(teamMembers.removedAt), sql`lower(${users.email}) = ${email}`))
    .get();
  if (already) return fail("conflict", ALREADY_MEMBER);
  const use = await seatUse(deps.db, teamId, now);
  if (use.members + use.pending >= team.seats) return fail("conflict", NO_FREE_SEAT);
  const token = randomToken(24);
  const id = randomToken();
  await deps.db.insert(teamInvitations).values({
    id,
    teamId,
    email,
    role: input.role,
    tokenHash: sha256Hex(token),
    invitedBy: actorId,
    createdAt: now,
    expiresAt: now + INVITATION_TTL_MS,
  });
  const link = `${deps.origin}/teams/join/${token}`;
  try {
    await deps.mailer.send({
      to: email,
      subject: `You're invited to join ${team.name} on Stagewise`,
      text: `You have been invited to join ${team.name} on Stagewise.\n\nAccept within ${INVITATION_DAYS} days, signed in with this address: ${link}\n`,
      html: `<p>You have been invited to join <strong>${escapeHtml(team.name)}</strong> on Stagewise.</p><p><a href="${escapeHtml(link)}">Accept the invitation</a> within ${INVITATION_DAYS} days, signed in with this address.</p>`,
    });
  } catch (err) {
    log.warn("team invitation not sent", { err: String(err), teamId });
    await deps.db.delete(teamInvitations).where(eq(teamInvitations.id, id));
    return fail("unavailable", "The invitation could not be e-mailed. Please try again.");
  }
  return ok({ message: `Invitation sent to ${email}.` });
}

/** Revokes a pending invitation of this team; its link then answers as an invalid one. */
export async function revoke(
  deps: Pick<Deps, "db" | "clock">,
  teamId: string,
  actorId: string,
  invitationId: string,
): Promise<Result<{ message: string }>> {
  const found = await requireTeamRole(deps.db, teamId, actorId, "manage");
  if (!found.ok) return found;
  const done = await deps.db
    .update(teamInvitations)
    .set({ revokedAt: deps.clock() })
    .where(
      and(
        eq(teamInvitations.id, invitationId),
        eq(teamInvitations.teamId, teamId),
        isNull(teamInvitations.acceptedAt),
        isNull(teamInvitations.revokedAt),
      ),
    )
    .returning({ id: teamInvitations.id });
  if (done.length === 0) return fail("not_found", "That invitation was not found.");
  return ok({ message: "Invitation revoked." });
}

/** The pending invitation a link names (by its token's hash), with its team's name; null: no valid invitation. */
export async function pendingInvitation(db: Deps["db"], token: string, now: number) {
  if (!/^[a-z0-9]{16,64}$/.test(token)) return null;
  const row = await db
    .select({ invitation: teamInvitations, teamName: teams.name, seats: teams.seats })
    .from(teamInvitations)
    .innerJoin(teams, eq(teams.id, teamInvitations.teamId))
    .where(
      and(
        eq(teamInvitations.tokenHash, sha256Hex(token)),
        isNull(teamInvitations.acceptedAt),
        isNull(teamInvitations.revokedAt),
        gt(teamInvitations.expiresAt, now),
      ),
    )
    .get();
  return row ?? null;
}

/**
 * Accepts an invitation as the signed-in user: only with the invited address, once, before it expires, while a seat
 * is free. The invitation's use and the membership are one batch: a second use (even at the same moment) finds it
 * used and writes nothing.
 */
export async function accept(
  deps: Pick<Deps, "db" | "clock">,
  user: { id: string; email: string },
  token: string,
): Promise<Result<{ teamId: string }>> {
  const now = deps.clock();
  const found = await pendingInvitation(deps.db, token, now);
  if (!found) return fail("gone", INVITATION_GONE);
  const { invitation } = found;
  if (normal(user.email) !== invitation.email) return fail("forbidden", INVITATION_OTHER_ADDRESS);
  const teamId = invitation.teamId;
  if (await membership(deps.db, teamId, user.id)) return fail("conflict", ALREADY_MEMBER);
  const use = await seatUse(deps.db, teamId, now);
  // This invitation holds one of the seats it counts as pending.
  if (use.members >= found.seats) return fail("conflict", NO_FREE_SEAT);
  const [used] = await deps.db.batch([
    deps.db
      .update(teamInvitations)
      .set({ acceptedAt: now, acceptedBy: user.id })
      .where(
        and(
          eq(teamInvitations.id, invitation.id),
          isNull(teamInvitations.acceptedAt),
          isNull(teamInvitations.revokedAt),
          gt(teamInvitations.expiresAt, now),
        ),
      )
      .returning({ id: teamInvitations.id }),
    // Only when the update above used it (accepted_by and accepted_at are this acceptance's).
    deps.db
      .insert(teamMembers)
      .select(
        deps.db
          .select({
            teamId: teamInvitations.teamId,
            userId: sql<string>`${user.id}`.as("user_id"),
            role: teamInvitations.role,
            creditLimit: sql<null>`NULL`.as("credit_limit"),
            joinedAt: sql<number>`${now}`.as("joined_at"),
            removedAt: sql<null>`NULL`.as("removed_at"),
          })
          .from(teamInvitations)
          .where(
            and(
              eq(teamInvitations.id, invitation.id),
              eq(teamInvitations.acceptedBy, user.id),
              eq(teamInvitations.acceptedAt, now),
            ),
          ),
      )
      .onConflictDoUpdate({
        target: [teamMembers.teamId, teamMembers.userId],
        set: { removedAt: null, role: sql`excluded.role`, joinedAt: now, creditLimit: null },
      }),
  ]);
  if (used.length === 0) return fail("gone", INVITATION_GONE);
  return ok({ teamId });
}
