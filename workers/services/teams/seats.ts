import { type Team, teams, users } from "@db/schema";
import type { Deps } from "@workers/services/request-deps";
import { setSeats, startTeamCheckout } from "@workers/services/team-billing";
import { and, eq, isNull } from "drizzle-orm";
import { TEAM_PLAN } from "~/shared/catalog";
import { fail, ok, type Result } from "~/shared/result";
import { requireTeamRole } from "./teams";

// The owner's seats (issue 47 item 3), from the team's page: the first purchase is a Stripe Checkout for the team
// plan with that many seats; later changes set the subscription's quantity, prorated and charged at once. Only the
// owner (a team admin or agent is answered 403, anyone else 404, and Stripe is not called). Nothing here changes
// the team's seats or pool: the signed webhook does, in the team's object, once Stripe has been paid.
// docs/decisions/0291-seat-facts-applied-by-the-team-object.md

export type SeatsDeps = Pick<Deps, "db" | "stripe" | "origin" | "clock">;

const plural = (n: number) => `${n} ${n === 1 ? "seat" : "seats"}`;

/**
 * The team's own Stripe customer, made once: named after the team (its invoices carry the team's name), with the
 * owner's e-mail for receipts, never the owner's personal customer (a team's events then never touch their credits).
 */
export async function ensureTeamCustomer(deps: SeatsDeps, team: Team): Promise<string> {
  if (team.stripeCustomerId) return team.stripeCustomerId;
  const owner = await deps.db.select({ email: users.email }).from(users).where(eq(users.id, team.ownerId)).get();
  const customer = await deps.stripe.customers.create(
    { name: team.name, ...(owner ? { email: owner.email } : {}), metadata: { teamId: team.id } },
    { idempotencyKey: `team-customer:${team.id}` },
  );
  await deps.db
    .update(teams)
    .set({ stripeCustomerId: customer.id })
    .where(and(eq(teams.id, team.id), isNull(teams.stripeCustomerId)));
  const stored = await deps.db.select({ id: teams.stripeCustomerId }).from(teams).where(eq(teams.id, team.id)).get();
  return stored?.id ?? customer.id;
}

/**
 * Buys (a checkout to go to) or changes the team's seats. Answers what the owner reads; `redirect` is Stripe's
 * checkout page for a first purchase.
 */
export async function changeTeamSeats(
  deps: SeatsDeps,
  teamId: string,
  actorId: string,
  quantity: number,
): Promise<Result<{ message: string; redirect?: string }>> {
  const found = await requireTeamRole(deps.db, teamId, actorId, "owner");
  if (!found.ok) return found;
  const { team } = found;
  const billing = { stripe: deps.stripe, origin: deps.origin, now: deps.clock };
  if (team.stripeSubscriptionId) {
    const changed = await setSeats(billing, team.stripeSubscriptionId, quantity);
    if (!changed.ok) return changed;
    return ok({
      message: `Stripe is charging the change to ${plural(quantity)}. The team's seats follow as soon as the payment is confirmed.`,
    });
  }
  const customerId = await ensureTeamCustomer(deps, team);
  const checkout = await startTeamCheckout(billing, { id: team.id, customerId }, quantity);
  if (!checkout.ok) return checkout;
  return ok({
    message: `Pay for ${plural(quantity)} at $${TEAM_PLAN.pricePerSeat} a seat a month on Stripe.`,
    redirect: checkout.url,
  });
}

export const NO_TEAM_BILLING_MESSAGE = "The team has no plan at Stripe yet: buy seats first.";

/**
 * The owner's way to the team plan's payment details, invoices and cancellation: Stripe's Billing Portal for the
 * team's own customer (docs/decisions/0314-team-billing-portal.md), coming back to the team's page. What it changes
 * reaches the team only through Stripe's signed events, as every seat fact does.
 */
export async function openTeamBillingPortal(
  deps: SeatsDeps,
  teamId: string,
  actorId: string,
): Promise<Result<{ message: string; redirect?: string }>> {
  const found = await requireTeamRole(deps.db, teamId, actorId, "owner");
  if (!found.ok) return found;
  const customer = found.team.stripeCustomerId;
  if (!customer) return fail("conflict", NO_TEAM_BILLING_MESSAGE);
  const session = await deps.stripe.billingPortal.sessions.create(
    { customer, return_url: `${deps.origin}/teams/${encodeURIComponent(teamId)}` },
    // A portal session is single use: a fresh key per request still makes the SDK's own retries safe.
    { idempotencyKey: `team-portal:${teamId}:${crypto.randomUUID()}` },
  );
  return ok({ message: "Opening Stripe's billing page.", redirect: session.url });
}
