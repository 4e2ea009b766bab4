import { env } from "cloudflare:workers";
import { teamMembers, teams, users } from "@db/schema";
import { db, signedIn } from "@test/support/factories";
import { allow, fakeStripe } from "@test/support/stripe";
import { addMember, makeTeam } from "@test/support/teams";
import { teamObject } from "@workers/objects/client";
import { deleteAccount } from "@workers/services/mls/account-data";
import { runTeamAction, teamActionInput } from "@workers/services/teams/actions";
import { requireTeamRole } from "@workers/services/teams/teams";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";

// A team's ownership handed over (docs/decisions/0311-team-ownership-handed-over.md): only the owner hands it, to an
// active member, with the box ticked; two handovers at once leave one owner; an owner whose team has other members
// cannot delete their account until they hand it over, and the refusal uses up nothing.

const PASSWORD = "correct horse 42";
const deps = { db, env, stripe: fakeStripe().stripe, clock: Date.now, rateLimit: allow, mailer: null!, origin: "" };

async function team() {
  const owner = await signedIn({ password: PASSWORD });
  const teamId = await makeTeam(owner.id, { name: "Harbor Realty" });
  const admin = await signedIn();
  const agent = await signedIn();
  await addMember(teamId, admin.id, "team_admin");
  await addMember(teamId, agent.id);
  return { owner, admin, agent, teamId };
}

function transfer(teamId: string, actorId: string, memberId: string, confirm = "on") {
  const input = teamActionInput.safeParse({ intent: "transfer", memberId, ...(confirm ? { confirm } : {}) });
  if (!input.success)
    return Promise.resolve({ ok: false as const, code: "invalid", error: input.error.issues[0]!.message });
  return runTeamAction(deps, teamId, actorId, input.data);
}

async function roles(teamId: string) {
  const rows = await db.select().from(teamMembers).where(eq(teamMembers.teamId, teamId)).all();
  const owner = (await db.select({ ownerId: teams.ownerId }).from(teams).where(eq(teams.id, teamId)).get())!.ownerId;
  return { owner, byUser: Object.fromEntries(rows.map((r) => [r.userId, r.role])) };
}

describe("team ownership", () => {
  it("hands the team to an agent: they own it, the old owner is a team admin, and owner-only actions follow", async () => {
    const { owner, admin, agent, teamId } = await team();
    await teamObject(env, teamId).setMemberLimit(teamId, agent.id, 2);
    const done = await transfer(teamId, owner.id, agent.id);
    expect(done).toMatchObject({ ok: true });
    expect(await roles(teamId)).toEqual({
      owner: agent.id,
      byUser: { [owner.id]: "team_admin", [admin.id]: "team_admin", [agent.id]: "owner" },
    });
    // An owner has no limit but the pool.
    const row = await db.select().from(teamMembers).where(eq(teamMembers.userId, agent.id)).get();
    expect(row!.creditLimit).toBeNull();
    expect(await requireTeamRole(db, teamId, agent.id, "owner")).toMatchObject({ ok: true });
    // The old owner can no longer hand it on.
    expect(await transfer(teamId, owner.id, admin.id)).toMatchObject({ ok: false, code: "forbidden" });
  });

  it("moves the team's receipts to the new owner at Stripe first; when Stripe cannot be reached nothing changes", async () => {
    const { owner, agent, teamId } = await team();
    await db.update(teams).set({ stripeCustomerId: "cus_missing" }).where(eq(teams.id, teamId));
    const before = await roles(teamId);
    expect(await transfer(teamId, owner.id, agent.id)).toMatchObject({ ok: false, code: "unavailable" });
    expect(await roles(teamId)).toEqual(before);

    await db.update(teams).set({ stripeCustomerId: "cus_team1" }).where(eq(teams.id, teamId));
    const stripe = fakeStripe();
    const input = teamActionInput.parse({ intent: "transfer", memberId: agent.id, confirm: "on" });
    expect(await runTeamAction({ ...deps, stripe: stripe.stripe }, teamId, owner.id, input)).toMatchObject({
      ok: true,
    });
    expect(stripe.calls).toEqual(["POST /v1/customers/cus_team1"]);
    expect((await roles(teamId)).owner).toBe(agent.id);
  });

  it("refuses anyone but the owner, a stranger's team, a removed member, oneself and an unticked box, changing nothing", async () => {
    const { owner, admin, agent, teamId } = await team();
    const stranger = await signedIn();
    const removed = await signedIn();
    await db.insert(teamMembers).values({ teamId, userId: removed.id, role: "agent", joinedAt: 1, removedAt: 2 });
    const before = await roles(teamId);
    expect(await transfer(teamId, admin.id, agent.id)).toMatchObject({ ok: false, code: "forbidden" });
    expect(await transfer(teamId, agent.id, agent.id)).toMatchObject({ ok: false, code: "forbidden" });
    expect(await transfer(teamId, stranger.id, stranger.id)).toMatchObject({ ok: false, code: "not_found" });
    expect(await transfer(teamId, owner.id, stranger.id)).toMatchObject({ ok: false, code: "not_found" });
    expect(await transfer(teamId, owner.id, removed.id)).toMatchObject({ ok: false, code: "not_found" });
    expect(await transfer(teamId, owner.id, owner.id)).toMatchObject({ ok: false, code: "invalid" });
    expect(await transfer(teamId, owner.id, agent.id, "")).toMatchObject({
      ok: false,
      error: "Tick the box to confirm you hand the team over.",
    });
    expect(await roles(teamId)).toEqual(before);
  });

  it("two handovers sent at once leave exactly one owner, who is the team's owner", async () => {
    const { owner, admin, agent, teamId } = await team();
    const results = await Promise.all([transfer(teamId, owner.id, admin.id), transfer(teamId, owner.id, agent.id)]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    const after = await roles(teamId);
    const owners = Object.entries(after.byUser).filter(([, role]) => role === "owner");
    expect(owners).toHaveLength(1);
    expect(owners[0]![0]).toBe(after.owner);
    expect([admin.id, agent.id]).toContain(after.owner);
    expect(after.byUser[owner.id]).toBe("team_admin");
  });

  it("an owner whose team has members cannot delete their account until they hand it over; the refusal uses nothing", async () => {
    const { owner, agent, teamId } = await team();
    const refused = await deleteAccount(deps, owner.id, { password: PASSWORD });
    expect(refused).toMatchObject({ ok: false, code: "conflict" });
    expect(!refused.ok && refused.error).toContain('You own the team "Harbor Realty"');
    expect((await db.select().from(users).where(eq(users.id, owner.id)).get())!.deletedAt).toBeNull();
    expect((await roles(teamId)).byUser[owner.id]).toBe("owner");

    expect(await transfer(teamId, owner.id, agent.id)).toMatchObject({ ok: true });
    expect(await deleteAccount(deps, owner.id, { password: PASSWORD })).toEqual({ ok: true });
    expect((await db.select().from(users).where(eq(users.id, owner.id)).get())!.deletedAt).not.toBeNull();
    expect((await roles(teamId)).owner).toBe(agent.id);
  });

  it("an owner alone in their team can delete their account, and the team's plan is cancelled at Stripe with it", async () => {
    const alone = await signedIn({ password: PASSWORD });
    await makeTeam(alone.id, { name: "Solo" });
    expect(await deleteAccount(deps, alone.id, { password: PASSWORD })).toEqual({ ok: true });

    const billed = await signedIn({ password: PASSWORD });
    const teamId = await makeTeam(billed.id, { name: "Billed" });
    await db.update(teams).set({ stripeSubscriptionId: "sub_team_123" }).where(eq(teams.id, teamId));
    const stripe = fakeStripe();
    expect(await deleteAccount({ ...deps, stripe: stripe.stripe }, billed.id, { password: PASSWORD })).toEqual({
      ok: true,
    });
    expect(stripe.calls).toContain("DELETE /v1/subscriptions/sub_team_123");
  });
});
