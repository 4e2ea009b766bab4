import { env } from "cloudflare:workers";
import { folders, teamInvitations, teamMembers } from "@db/schema";
import { db, signedIn } from "@test/support/factories";
import { fakeStripe } from "@test/support/stripe";
import type { MailMessage } from "@workers/adapters/mail";
import { stateDigest } from "@workers/services/fixtures";
import { runTeamAction, teamActionInput } from "@workers/services/teams/actions";
import {
  ALREADY_MEMBER,
  accept,
  INVITATION_GONE,
  INVITATION_OTHER_ADDRESS,
  NO_FREE_SEAT,
} from "@workers/services/teams/invitations";
import { createTeam, TEAM_ADMIN_ONLY, teamPage } from "@workers/services/teams/teams";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { INVITATION_TTL_MS } from "~/shared/teams";

// A team with seats (issue 47, items 1 and 7): invitations by e-mail (7 days, single use, bound to the address,
// no more pending than seats are free), revocation, removal ending access on the next request, and membership and
// role checked on the server for every action: another team's ids, a removed member, a stale or reused invitation
// and an agent asking for a team admin's action are refused 404/403 with D1 and R2 unchanged.

let clock = Date.now();
function teamDeps() {
  const sent: MailMessage[] = [];
  const deps = {
    db,
    env,
    origin: "http://localhost",
    clock: () => clock,
    stripe: fakeStripe().stripe,
    mailer: {
      async send(m: MailMessage) {
        sent.push(m);
      },
    },
  };
  return { deps, sent };
}

const tokenOf = (m: MailMessage | undefined) => /\/teams\/join\/([a-z0-9]+)/.exec(m?.text ?? "")?.[1] ?? "";
const digest = () => stateDigest({ env, bucket: env.PHOTOS });

async function act(teamId: string, userId: string, fields: Record<string, string>) {
  const { deps, sent } = teamDeps();
  const input = teamActionInput.safeParse(fields);
  if (!input.success) throw new Error(input.error.message);
  return { res: await runTeamAction(deps, teamId, userId, input.data), sent };
}

async function setSeats(teamId: string, seats: number) {
  await env.DB.prepare("UPDATE teams SET seats = ? WHERE id = ?").bind(seats, teamId).run();
}

async function teamWithSeats(seats: number) {
  const owner = await signedIn();
  const teamId = await createTeam(teamDeps().deps, owner.id, "Harbor Realty");
  await setSeats(teamId, seats);
  return { owner, teamId };
}

async function invited(teamId: string, by: string, email: string, role = "agent") {
  const { res, sent } = await act(teamId, by, { intent: "invite", email, role });
  expect(res.ok, JSON.stringify(res)).toBe(true);
  return tokenOf(sent[0]);
}

describe("a team with seats", () => {
  it("invites by e-mail, and the invited address accepts once; the link then answers as gone", async () => {
    const { owner, teamId } = await teamWithSeats(3);
    const agent = await signedIn();
    const { res, sent } = await act(teamId, owner.id, { intent: "invite", email: agent.email.toUpperCase() });
    expect(res.ok).toBe(true);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.to).toBe(agent.email.toLowerCase());
    const token = tokenOf(sent[0]);
    // Only the token's hash is kept.
    const row = await db.select().from(teamInvitations).where(eq(teamInvitations.teamId, teamId)).get();
    expect(row!.tokenHash).not.toContain(token);
    const { deps } = teamDeps();
    expect(await accept(deps, agent, token)).toEqual({ ok: true, teamId });
    const page = await teamPage(deps, teamId, agent.id);
    expect(page.ok && page.members.map((m) => m.userId).sort()).toEqual([owner.id, agent.id].sort());
    const before = await digest();
    expect(await accept(deps, agent, token)).toMatchObject({ ok: false, code: "gone", error: INVITATION_GONE });
    expect(await digest()).toEqual(before);
  });

  it("refuses another address, an expired link and a revoked one, writing nothing", async () => {
    const { owner, teamId } = await teamWithSeats(5);
    const invitee = await signedIn();
    const stranger = await signedIn();
    const token = await invited(teamId, owner.id, invitee.email);
    const { deps } = teamDeps();
    let before = await digest();
    expect(await accept(deps, stranger, token)).toMatchObject({ code: "forbidden", error: INVITATION_OTHER_ADDRESS });
    expect(await digest()).toEqual(before);
    clock += INVITATION_TTL_MS + 1;
    expect(await accept(teamDeps().deps, invitee, token)).toMatchObject({ code: "gone" });
    expect(await digest()).toEqual(before);
    clock -= INVITATION_TTL_MS + 1;
    const second = await invited(teamId, owner.id, stranger.email);
    const pending = await db
      .select()
      .from(teamInvitations)
      .where(and(eq(teamInvitations.teamId, teamId), eq(teamInvitations.email, stranger.email.toLowerCase())))
      .get();
    expect((await act(teamId, owner.id, { intent: "revoke", invitationId: pending!.id })).res.ok).toBe(true);
    before = await digest();
    expect(await accept(teamDeps().deps, stranger, second)).toMatchObject({ code: "gone" });
    expect(await digest()).toEqual(before);
  });

  it("no more invitations pending than seats are free; revoking one frees its seat", async () => {
    const { owner, teamId } = await teamWithSeats(2);
    await invited(teamId, owner.id, "one@example.test");
    const before = await digest();
    const { res } = await act(teamId, owner.id, { intent: "invite", email: "two@example.test" });
    expect(res).toMatchObject({ ok: false, code: "conflict", error: NO_FREE_SEAT });
    expect(await digest()).toEqual(before);
    const pending = await db.select().from(teamInvitations).where(eq(teamInvitations.teamId, teamId)).get();
    await act(teamId, owner.id, { intent: "revoke", invitationId: pending!.id });
    expect((await act(teamId, owner.id, { intent: "invite", email: "two@example.test" })).res.ok).toBe(true);
    expect((await act(teamId, owner.id, { intent: "invite", email: owner.email })).res).toMatchObject({
      code: "conflict",
      error: ALREADY_MEMBER,
    });
  });

  it("an agent asking for a team admin's action is answered 403; another team's ids 404; nothing written", async () => {
    const { owner, teamId } = await teamWithSeats(4);
    const agent = await signedIn();
    await accept(teamDeps().deps, agent, await invited(teamId, owner.id, agent.email));
    const other = await teamWithSeats(3);
    const otherInvite = await invited(other.teamId, other.owner.id, "someone@example.test");
    expect(otherInvite).not.toBe("");
    const otherPending = await db.select().from(teamInvitations).where(eq(teamInvitations.teamId, other.teamId)).get();
    const before = await digest();
    const agentAsks: Record<string, string>[] = [
      { intent: "invite", email: "x@example.test" },
      { intent: "remove", memberId: owner.id },
      { intent: "limit", memberId: agent.id, limit: "5" },
      { intent: "revoke", invitationId: otherPending!.id },
    ];
    for (const fields of agentAsks) {
      const { res, sent } = await act(teamId, agent.id, fields);
      expect(res, fields.intent).toMatchObject({ ok: false, code: "forbidden", error: TEAM_ADMIN_ONLY });
      expect(sent).toHaveLength(0);
    }
    // The owner of this team reaching into the other team: its id, its invitation, its owner.
    const strangerAsks: Record<string, string>[] = [
      { intent: "revoke", invitationId: otherPending!.id },
      { intent: "remove", memberId: other.owner.id },
      { intent: "create-listing", name: "Not ours" },
      { intent: "invite", email: "y@example.test" },
    ];
    for (const fields of strangerAsks) {
      expect((await act(other.teamId, owner.id, fields)).res, fields.intent).toMatchObject({ code: "not_found" });
    }
    expect((await act(teamId, owner.id, { intent: "revoke", invitationId: otherPending!.id })).res).toMatchObject({
      code: "not_found",
    });
    expect(await teamPage(teamDeps().deps, other.teamId, owner.id)).toMatchObject({ code: "not_found" });
    expect(await digest()).toEqual(before);
  });

  it("removal ends access on the next request; the removed member's own folders stay theirs", async () => {
    const { owner, teamId } = await teamWithSeats(3);
    const agent = await signedIn();
    await accept(teamDeps().deps, agent, await invited(teamId, owner.id, agent.email));
    await db
      .insert(folders)
      .values({ id: `own${agent.id.slice(0, 20)}`, userId: agent.id, name: "Mine", createdAt: 1 });
    expect((await teamPage(teamDeps().deps, teamId, agent.id)).ok).toBe(true);
    expect((await act(teamId, owner.id, { intent: "remove", memberId: agent.id })).res.ok).toBe(true);
    const before = await digest();
    expect(await teamPage(teamDeps().deps, teamId, agent.id)).toMatchObject({ code: "not_found" });
    expect((await act(teamId, agent.id, { intent: "create-listing", name: "Sneaky" })).res).toMatchObject({
      code: "not_found",
    });
    expect(await digest()).toEqual(before);
    const own = await db.select().from(folders).where(eq(folders.userId, agent.id)).all();
    expect(own.map((f) => f.name)).toEqual(["Mine"]);
    // The owner cannot be removed.
    expect((await act(teamId, owner.id, { intent: "remove", memberId: owner.id })).res).toMatchObject({
      code: "conflict",
    });
    const row = await db
      .select()
      .from(teamMembers)
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, agent.id)))
      .get();
    expect(row!.removedAt).not.toBeNull();
  });
});
