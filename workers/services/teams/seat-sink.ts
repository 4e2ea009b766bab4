import type { Database } from "@db/client";
import { invoicePayments, teamSeatFacts, teams } from "@db/schema";
import { log } from "@workers/lib/log";
import { teamObject } from "@workers/objects/client";
import type { SeatFactSink } from "@workers/services/stripe-webhook";
import { eq } from "drizzle-orm";

// The webhook's way to a team (docs/decisions/0291-seat-facts-applied-by-the-team-object.md): a verified seat fact
// names its team by the metadata our team checkout put on the subscription (teamMetadata in team-billing.ts), else
// by the subscription or customer the team's row already holds. The team's Durable Object applies it in its turn.
// A fact naming no team of ours, or a team whose Stripe customer is another, is answered "ignored" (the webhook then
// records the event as ignored and nothing moves).

type Fact = Parameters<SeatFactSink>[0];
type Reversal = Extract<Fact, { kind: "seat_reversal" | "seat_reversal_undone" }>;

/**
 * The team whose seats a refunded or disputed payment paid, or null (a person's plan, or no payment of ours): the
 * invoices the PaymentIntent paid (invoice_payment.paid's record, ADR 0340) that the team applied as seat facts.
 */
export async function teamOfPayment(db: Database, paymentIntentId: string): Promise<string | null> {
  const row = await db
    .select({ teamId: teamSeatFacts.teamId })
    .from(teamSeatFacts)
    .innerJoin(invoicePayments, eq(invoicePayments.invoiceId, teamSeatFacts.key))
    .where(eq(invoicePayments.paymentIntentId, paymentIntentId))
    .get();
  return row?.teamId ?? null;
}

const isReversal = (fact: Fact): fact is Reversal =>
  fact.kind === "seat_reversal" || fact.kind === "seat_reversal_undone";

/** The team a seat fact is about, or null. */
export async function teamOfSeatFact(db: Database, fact: Exclude<Fact, Reversal>): Promise<string | null> {
  const columns = { id: teams.id, customer: teams.stripeCustomerId };
  const named = fact.teamId ? await db.select(columns).from(teams).where(eq(teams.id, fact.teamId)).get() : undefined;
  const found =
    named ??
    (await db.select(columns).from(teams).where(eq(teams.stripeSubscriptionId, fact.subscription)).get()) ??
    (await db.select(columns).from(teams).where(eq(teams.stripeCustomerId, fact.customerId)).get());
  if (!found) return null;
  if (found.customer !== null && found.customer !== fact.customerId) {
    log.warn("seat fact for a team with another Stripe customer", { teamId: found.id, kind: fact.kind });
    return null;
  }
  return found.id;
}

export function teamSeatSink(env: Pick<Env, "TEAM_OBJECT">, db: Database): SeatFactSink {
  return async (fact, event) => {
    const teamId = isReversal(fact) ? await teamOfPayment(db, fact.paymentIntentId) : await teamOfSeatFact(db, fact);
    if (!teamId) return { outcome: "ignored", duplicate: false };
    return teamObject(env, teamId).applySeatFact(teamId, fact, event);
  };
}
