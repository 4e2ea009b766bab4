import { eq } from "drizzle-orm";
import { findPlan } from "../../app/lib/catalog";
import type { Database } from "../../db/client";
import { users } from "../../db/schema";

/** The plan shown on the plan status card: its display name and monthly credits, or null without a plan. */
export async function planSummary(db: Database, userId: string): Promise<{ name: string; credits: number } | null> {
  const row = await db
    .select({ plan: users.plan, planCredits: users.planCredits })
    .from(users)
    .where(eq(users.id, userId))
    .get();
  if (!row?.plan) return null;
  const plan = findPlan(row.plan);
  return { name: plan?.name ?? row.plan, credits: row.planCredits || plan?.credits || 0 };
}
