import { findPlan } from "~/shared/catalog";

// What a plan allows a user's queue: how many provider calls at once, and whether its jobs go first
// (Professional, DECISIONS). The gate of all users (provider-gate-object.ts) applies its own fair share on top.

/** The concurrency of a user without a plan, and of every plan but Professional (app/shared/catalog.ts). */
export const DEFAULT_CONCURRENCY = 4;

export interface PlanLimits {
  concurrency: number;
  priority: number;
}

/** The provider concurrency and queue priority of a plan (by its id; null for none). */
export function limitsOf(planId: string | null | undefined): PlanLimits {
  const plan = findPlan(planId);
  return {
    concurrency: plan?.batchConcurrency ?? DEFAULT_CONCURRENCY,
    priority: plan?.id === "professional" ? 1 : 0,
  };
}
