import { Link } from "react-router";

export interface PlanStatusCardProps {
  credits: number;
  plan: { name: string; credits: number } | null;
}

/** The dashboard's plan and credits card, in the spec's three states. */
export function PlanStatusCard({ credits, plan }: PlanStatusCardProps) {
  if (plan) {
    const used = plan.credits > 0 ? Math.min(100, Math.round((credits / plan.credits) * 100)) : 0;
    return (
      <section className="card p-4" aria-labelledby="plan-status-title" data-testid="plan-status">
        <div className="flex items-center justify-between gap-3">
          <h2 id="plan-status-title" className="text-sm font-semibold text-muted">
            Plan Status
          </h2>
          <Link to="/plans" className="text-sm font-semibold text-brand-600 hover:underline">
            Upgrade Plan
          </Link>
        </div>
        <p className="mt-1 font-semibold">{plan.name}</p>
        <p className="text-sm text-muted">
          {credits} of {plan.credits} credits left
        </p>
        <div className="mt-2 h-2 rounded-full bg-slate-100" aria-hidden="true">
          <div className="h-2 rounded-full bg-brand-600" style={{ width: `${used}%` }} />
        </div>
      </section>
    );
  }
  if (credits > 0) {
    return (
      <section className="card p-4" aria-labelledby="plan-status-title" data-testid="plan-status">
        <h2 id="plan-status-title" className="text-sm font-semibold text-muted">
          Active Credits
        </h2>
        <p className="mt-1 font-semibold">
          {credits} {credits === 1 ? "credit" : "credits"}
        </p>
      </section>
    );
  }
  return (
    <section className="card p-4" aria-labelledby="plan-status-title" data-testid="plan-status">
      <h2 id="plan-status-title" className="text-sm font-semibold text-muted">
        No Active Plan
      </h2>
      <Link to="/plans" className="btn-primary mt-2">
        Choose Plan
      </Link>
    </section>
  );
}
