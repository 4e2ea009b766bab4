import { env } from "cloudflare:workers";
import { teams } from "@db/schema";
import { db, signedIn } from "@test/support/factories";
import { allow, fakeStripe } from "@test/support/stripe";
import { addMember, makeTeam } from "@test/support/teams";
import { runTeamAction, teamActionInput } from "@workers/services/teams/actions";
import { NO_TEAM_BILLING_MESSAGE } from "@workers/services/teams/seats";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";

// The team plan's Billing Portal (docs/decisions/0314-team-billing-portal.md): the owner reaches Stripe's page for the
// team's own customer and comes back to the team's page; nobody else does, and a team with no customer is told so.

const billing = teamActionInput.parse({ intent: "billing" });

function open(teamId: string, userId: string, stripe = fakeStripe()) {
  const deps = {
    db,
    env,
    stripe: stripe.stripe,
    clock: Date.now,
    rateLimit: allow,
    mailer: null!,
    origin: "https://app.example",
  };
  return runTeamAction(deps, teamId, userId, billing);
}

describe("the team's billing portal", () => {
  it("sends the owner to Stripe's portal for the team's customer, returning to the team's page", async () => {
    const owner = await signedIn();
    const teamId = await makeTeam(owner.id);
    await db.update(teams).set({ stripeCustomerId: "cus_team7" }).where(eq(teams.id, teamId));
    const stripe = fakeStripe();
    const res = await open(teamId, owner.id, stripe);
    expect(res).toMatchObject({ ok: true, redirect: "http://stripe.test/p/session/bps_1?customer=cus_team7" });
    expect(stripe.calls).toEqual(["POST /v1/billing_portal/sessions"]);
  });

  it("answers a team admin 403, a stranger 404, and a team without a Stripe customer 409, calling Stripe for none", async () => {
    const owner = await signedIn();
    const admin = await signedIn();
    const stranger = await signedIn();
    const teamId = await makeTeam(owner.id);
    await addMember(teamId, admin.id, "team_admin");
    const stripe = fakeStripe();
    expect(await open(teamId, owner.id, stripe)).toEqual({
      ok: false,
      code: "conflict",
      error: NO_TEAM_BILLING_MESSAGE,
    });
    await db.update(teams).set({ stripeCustomerId: "cus_team8" }).where(eq(teams.id, teamId));
    expect(await open(teamId, admin.id, stripe)).toMatchObject({ ok: false, code: "forbidden" });
    expect(await open(teamId, stranger.id, stripe)).toMatchObject({ ok: false, code: "not_found" });
    expect(stripe.calls).toEqual([]);
  });
});
