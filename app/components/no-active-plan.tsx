import type { ReactNode } from "react";
import { Link } from "react-router";

/**
 * 'No Active Plan' with 'Choose Plan' to /plans: the plan status card and /billing show it to someone without a
 * plan. `children` is the line under the heading, which says what it means where it stands.
 */
export function NoActivePlan({ titleId, children }: { titleId: string; children: ReactNode }) {
  return (
    <div className="flex flex-wrap items-center justify-between gap-4">
      <div>
        <h2 id={titleId} className="text-lg font-semibold">
          No Active Plan
        </h2>
        {children}
      </div>
      <Link to="/plans" className="btn-primary">
        Choose Plan
      </Link>
    </div>
  );
}
