import { Link } from "react-router";
import { LivePlanStatusCard } from "../components/plan-status-card";
import { requireUser } from "../lib/auth.server";
import { liveCreditsFor } from "../lib/billing.server";
import type { Route } from "./+types/dashboard";

// PLACEHOLDER until the photo library issue's dashboard lands: only the plan
// status card, so the checkout flow has its landing page (success_url is
// /dashboard?checkout=success). The real dashboard renders
// <LivePlanStatusCard initial={await liveCreditsFor(context, user.id)} />.

export const meta: Route.MetaFunction = () => [{ title: "Dashboard · Stagewise" }];

export async function loader({ request, context }: Route.LoaderArgs) {
  const user = requireUser(context, request);
  return {
    initial: await liveCreditsFor(context, user.id),
    justPaid: new URL(request.url).searchParams.get("checkout") === "success",
  };
}

export default function Dashboard({ loaderData }: Route.ComponentProps) {
  return (
    <div className="container-page max-w-3xl py-10">
      <div className="flex items-center justify-between">
        <h1 className="text-2xl font-bold">Dashboard</h1>
        <Link to="/billing" className="btn-secondary">
          Billing
        </Link>
      </div>
      {loaderData.justPaid ? (
        <p className="alert-success mt-6" role="status">
          Thank you! Your payment went through. Your credits appear below as soon as Stripe confirms it.
        </p>
      ) : null}
      <div className="mt-6">
        <LivePlanStatusCard initial={loaderData.initial} />
      </div>
    </div>
  );
}
