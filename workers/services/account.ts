import type { Database } from "@db/client";
import { subscriptions, type User, users } from "@db/schema";
import { currentSubscription } from "@workers/objects/billing-client";
import { userObject } from "@workers/objects/client";
import { eq } from "drizzle-orm";
import { type BillingInterval, findPlan } from "~/shared/catalog";
import type { LiveCredits } from "~/shared/live-credits";

// What the signed-in user sees of their account: e-mail, plan and credits
// (GET /api/me, /billing, the plan status card).

export interface AccountPlan {
  id: string;
  name: string;
  credits: number;
  interval: BillingInterval;
  /** What one billing interval costs, in cents (a year for yearly plans). */
  priceCents: number;
  features: string[];
  /** ISO date of the next charge; null when none is due (e.g. cancelled at period end). */
  nextPaymentDate: string | null;
  /** ISO date the plan ends when it was cancelled at the end of its period. */
  endsAt: string | null;
}

export interface AccountSummary {
  email: string;
  name: string;
  credits: number;
  plan: AccountPlan | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * What the plan status card starts from, from the user's row as the session read it (no read of its own):
 * the same balance and plan accountSummary gives.
 */
export function liveCreditsOf(user: Pick<User, "credits" | "plan" | "planCredits" | "planInterval">): LiveCredits {
  return {
    credits: user.credits,
    // The plan shows under the same condition as accountSummary's.
    plan: user.plan && findPlan(user.plan) && user.planInterval ? { name: user.plan, credits: user.planCredits } : null,
  };
}

export async function accountSummary(db: Database, userId: string): Promise<AccountSummary | null> {
  const user = await db.query.users.findFirst({ where: eq(users.id, userId) });
  if (!user) return null;
  const catalogPlan = findPlan(user.plan);
  let plan: AccountPlan | null = null;
  if (user.plan && catalogPlan && user.planInterval) {
    const rows = await db.select().from(subscriptions).where(eq(subscriptions.userId, userId)).all();
    const sub = currentSubscription(rows);
    plan = {
      id: catalogPlan.id,
      name: user.plan,
      credits: user.planCredits,
      interval: user.planInterval,
      priceCents: user.planPriceCents,
      features: user.planFeatures,
      nextPaymentDate: iso(user.nextPaymentAt),
      endsAt: sub?.cancelAtPeriodEnd ? iso(sub.currentPeriodEnd) : null,
    };
  }
  return { email: user.email, name: user.name, credits: user.credits, plan };
}

/** Opens the user's live balance channel: a WebSocket held by their Durable Object (docs/decisions/0023-live-balance-push.md). */
export async function openLiveChannel(env: Pick<Env, "USER_OBJECT">, userId: string): Promise<WebSocket | null> {
  const res = await userObject(env, userId).fetch(
    new Request("https://user-object/live", { headers: { Upgrade: "websocket", "X-User-Id": userId } }),
  );
  return res.webSocket ?? null;
}

/** The user's balance as their Durable Object holds it (after any expiry that is due). */
export function currentBalance(env: Pick<Env, "USER_OBJECT">, userId: string): Promise<number> {
  return userObject(env, userId).balance(userId);
}
