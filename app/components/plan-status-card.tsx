import type { ReactNode } from "react";
import { Link } from "react-router";
import { NoActivePlan } from "~/components/no-active-plan";
import { type LiveCredits, useLiveCredits } from "~/lib/use-live-credits";

// The plan and credits status card (spec section 4, "Plan status card"):
//  - a plan: 'Plan Status', a usage bar (credits over plan credits, capped at
//    100%) and 'Upgrade Plan' to /plans;
//  - no plan but credits: 'Active Credits';
//  - neither: 'No Active Plan' and 'Choose Plan' to /plans.
// Pair it with useLiveCredits(initial) so the numbers follow every change.

export function usagePercent(credits: number, planCredits: number): number {
  if (planCredits <= 0) return credits > 0 ? 100 : 0;
  return Math.max(0, Math.min(100, (credits / planCredits) * 100));
}

/** The card's frame; `data-live` says whether the pushed balance is connected (tests wait for it). */
function StatusSection({ state, live, children }: { state: string; live?: boolean; children: ReactNode }) {
  return (
    <section
      className="card"
      aria-labelledby="plan-status-title"
      data-testid="plan-status-card"
      data-state={state}
      data-live={live === undefined ? undefined : String(live)}
    >
      {children}
    </section>
  );
}

export function PlanStatusCard({ credits, plan, live }: LiveCredits & { live?: boolean }) {
  if (plan) {
    const pct = usagePercent(credits, plan.credits);
    return (
      <StatusSection state="plan" live={live}>
        <div className="flex flex-wrap items-start justify-between gap-4">
          <div>
            <h2 id="plan-status-title" className="text-lg font-semibold">
              Plan Status
            </h2>
            <p className="text-sm text-muted" data-testid="plan-name">
              {plan.name}
            </p>
          </div>
          <Link to="/plans" className="btn-secondary">
            Upgrade Plan
          </Link>
        </div>
        <p className="mt-4" aria-live="polite">
          <span className="text-3xl font-bold" data-testid="credits">
            {credits}
          </span>{" "}
          <span className="text-muted">
            of {plan.credits} {plan.credits === 1 ? "credit" : "credits"} left
          </span>
        </p>
        <div
          role="progressbar"
          aria-label="Credits left"
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={Math.round(pct)}
          className="mt-3 h-2.5 overflow-hidden rounded-full bg-slate-200"
        >
          <div className="h-full rounded-full bg-brand-600 transition-[width]" style={{ width: `${pct}%` }} />
        </div>
      </StatusSection>
    );
  }
  if (credits > 0) {
    return (
      <StatusSection state="credits" live={live}>
        <h2 id="plan-status-title" className="text-lg font-semibold">
          Active Credits
        </h2>
        <p className="mt-2" aria-live="polite">
          <span className="text-3xl font-bold" data-testid="credits">
            {credits}
          </span>{" "}
          <span className="text-muted">{credits === 1 ? "credit" : "credits"} available</span>
        </p>
      </StatusSection>
    );
  }
  return (
    <StatusSection state="none" live={live}>
      <NoActivePlan titleId="plan-status-title">
        <p className="text-sm text-muted" aria-live="polite">
          <span data-testid="credits" className="sr-only">
            {credits}
          </span>
          Choose a plan to start staging your photos.
        </p>
      </NoActivePlan>
    </StatusSection>
  );
}

/** The card whose numbers follow every change pushed by the user's Durable Object. */
export function LivePlanStatusCard({ initial }: { initial: LiveCredits }) {
  const live = useLiveCredits(initial);
  return <PlanStatusCard credits={live.credits} plan={live.plan} live={live.live} />;
}

export { type LiveCredits, useLiveCredits };
