import { Link } from "react-router";
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

export function PlanStatusCard({ credits, plan, live }: LiveCredits & { live?: boolean }) {
  const liveAttr = live === undefined ? undefined : String(live);
  if (plan) {
    const pct = usagePercent(credits, plan.credits);
    return (
      <section
        className="card"
        aria-labelledby="plan-status-title"
        data-testid="plan-status-card"
        data-state="plan"
        data-live={liveAttr}
      >
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
      </section>
    );
  }
  if (credits > 0) {
    return (
      <section
        className="card"
        aria-labelledby="plan-status-title"
        data-testid="plan-status-card"
        data-state="credits"
        data-live={liveAttr}
      >
        <h2 id="plan-status-title" className="text-lg font-semibold">
          Active Credits
        </h2>
        <p className="mt-2" aria-live="polite">
          <span className="text-3xl font-bold" data-testid="credits">
            {credits}
          </span>{" "}
          <span className="text-muted">{credits === 1 ? "credit" : "credits"} available</span>
        </p>
      </section>
    );
  }
  return (
    <section
      className="card"
      aria-labelledby="plan-status-title"
      data-testid="plan-status-card"
      data-state="none"
      data-live={liveAttr}
    >
      <NoActivePlan titleId="plan-status-title">
        <span data-testid="credits" className="sr-only">
          {credits}
        </span>
        Choose a plan to start staging your photos.
      </NoActivePlan>
    </section>
  );
}

/** 'No Active Plan' with its 'Choose Plan' link: the plan card's and /billing's empty state. */
export function NoActivePlan({ titleId, children }: { titleId: string; children: React.ReactNode }) {
  return (
    <div className="flex flex-wrap items-center justify-between gap-4">
      <div>
        <h2 id={titleId} className="text-lg font-semibold">
          No Active Plan
        </h2>
        <p className="text-sm text-muted" aria-live="polite">
          {children}
        </p>
      </div>
      <Link to="/plans" className="btn-primary">
        Choose Plan
      </Link>
    </div>
  );
}

/** The card whose numbers follow every change pushed by the user's Durable Object. */
export function LivePlanStatusCard({ initial }: { initial: LiveCredits }) {
  const live = useLiveCredits(initial);
  return <PlanStatusCard credits={live.credits} plan={live.plan} live={live.live} />;
}

export { type LiveCredits, useLiveCredits };
