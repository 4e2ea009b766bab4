import { requireUser } from "@workers/http/auth";
import { billingDeps, billingRefusal, callStripe } from "@workers/http/billing";
import { readFormFields } from "@workers/http/body";
import { requestContext } from "@workers/http/context";
import { failureData } from "@workers/http/result";
import { accountSummary } from "@workers/services/account";
import { openBillingPortal } from "@workers/services/billing";
import { data, Form, Link, redirect, useNavigation } from "react-router";
import { NoActivePlan } from "~/components/no-active-plan";
import { LivePlanStatusCard } from "~/components/plan-status-card";
import { fail } from "~/shared/result";
import type { Route } from "./+types/billing";

// A signed-in page: the app's header with the balance, not the public one (app/root.tsx).
export const handle = { appFrame: true };

export const meta: Route.MetaFunction = () => [{ title: "Billing · Stagewise" }];

export async function loader({ request, context }: Route.LoaderArgs) {
  const user = requireUser(context, request);
  const { db, env } = context.get(requestContext);
  const summary = await accountSummary(db, user.id);
  if (!summary) throw data(null, { status: 404 });
  const params = new URL(request.url).searchParams;
  return {
    summary,
    supportEmail: env.SUPPORT_EMAIL,
    notice: params.get("canceled") === "1" ? "canceled" : params.get("changed") === "1" ? "changed" : null,
  };
}

export async function action({ request, context }: Route.ActionArgs) {
  const user = requireUser(context, request);
  const raw = await readFormFields(request);
  if (!raw.ok) return failureData(raw);
  const intent = raw.fields.intent;
  if (intent !== "manage" && intent !== "cancel") return failureData(fail("invalid", "Unknown action."));
  const result = await callStripe(() => openBillingPortal(billingDeps(context), user, intent));
  if (!result.ok) return billingRefusal(result);
  return redirect(result.url, 303);
}

/** Dates are shown in UTC on the server and in the browser alike, so hydration matches. */
function formatDate(iso: string | null): string {
  if (!iso) return "N/A";
  return new Date(iso).toLocaleDateString("en-US", { year: "numeric", month: "long", day: "numeric", timeZone: "UTC" });
}

function monthlyPrice(priceCents: number, interval: "month" | "year"): string {
  const perMonth = interval === "year" ? priceCents / 12 : priceCents;
  return `$${(perMonth / 100).toFixed(2)}`;
}

export default function Billing({ loaderData, actionData }: Route.ComponentProps) {
  const { summary, supportEmail, notice } = loaderData;
  const plan = summary.plan;
  const busy = useNavigation().state !== "idle";
  return (
    <div className="container-page max-w-3xl py-10">
      <div className="flex items-center justify-between gap-4">
        <h1 className="text-3xl font-extrabold tracking-tight">Billing</h1>
        <Link to="/dashboard" aria-label="Close" className="btn-ghost h-11 w-11 rounded-full p-0 text-xl">
          <span aria-hidden="true">✕</span>
        </Link>
      </div>

      {notice === "canceled" ? (
        <p className="alert-success mt-6" role="status">
          Your plan is cancelled. It stays active until the end of the period you paid for.
        </p>
      ) : null}
      {notice === "changed" ? (
        <p className="alert-success mt-6" role="status">
          Your plan was changed. Its credits arrive as soon as Stripe confirms the payment.
        </p>
      ) : null}
      {actionData?.error ? (
        <p className="alert-error mt-6" role="alert">
          {actionData.error}
        </p>
      ) : null}

      <div className="mt-6">
        <LivePlanStatusCard
          initial={{ credits: summary.credits, plan: plan ? { name: plan.name, credits: plan.credits } : null }}
        />
      </div>

      <section className="card mt-6" aria-labelledby="account-title">
        <h2 id="account-title" className="text-lg font-semibold">
          Account
        </h2>
        <dl className="mt-4 grid gap-4 sm:grid-cols-2">
          <div>
            <dt className="text-sm text-muted">Email address</dt>
            <dd className="mt-1">
              <span className="block break-all font-medium">{summary.email}</span>
              <a
                className="mt-1 inline-block text-sm font-medium text-brand-700 underline"
                href={`mailto:${supportEmail}?subject=${encodeURIComponent("Update email address")}&body=${encodeURIComponent(`Please change the e-mail address of my account ${summary.email} to: `)}`}
              >
                Update email address
              </a>
            </dd>
          </div>
          <div>
            <dt className="text-sm text-muted">Next payment date</dt>
            <dd className="mt-1">
              <span className="block font-medium" data-testid="next-payment-date">
                {formatDate(plan?.nextPaymentDate ?? null)}
              </span>
              {plan?.endsAt ? (
                <span className="mt-1 block text-sm text-muted">Your plan ends on {formatDate(plan.endsAt)}.</span>
              ) : null}
            </dd>
          </div>
        </dl>
        <Form method="post" className="mt-6">
          <button type="submit" name="intent" value="manage" className="btn-secondary" disabled={busy}>
            Manage payment
          </button>
        </Form>
        <p className="mt-4 text-sm">
          <Link to="/settings" className="font-medium text-brand-700 underline">
            API keys
          </Link>{" "}
          for connecting your own software.
        </p>
      </section>

      <section className="card mt-6" aria-labelledby="billing-plan-title">
        {plan ? (
          <>
            <div className="flex flex-wrap items-start justify-between gap-4">
              <div>
                <h2 id="billing-plan-title" className="text-lg font-semibold" data-testid="billing-plan-name">
                  {plan.name}
                </h2>
                <p className="mt-1 text-2xl font-bold" data-testid="billing-plan-price">
                  {monthlyPrice(plan.priceCents, plan.interval)}{" "}
                  <span className="text-sm font-normal text-muted">
                    per month{plan.interval === "year" ? " (billed yearly)" : ""}
                  </span>
                </p>
              </div>
              <div className="flex flex-wrap gap-2">
                <Link to="/plans" className="btn-secondary">
                  Change plan
                </Link>
                {plan.endsAt ? null : (
                  <Form method="post">
                    <button
                      type="submit"
                      name="intent"
                      value="cancel"
                      className="btn-ghost text-danger"
                      disabled={busy}
                    >
                      Cancel
                    </button>
                  </Form>
                )}
              </div>
            </div>
            <p className="mt-4">
              <span className="font-semibold" data-testid="photos-per-month">
                {plan.credits}
              </span>{" "}
              photos per month
            </p>
            <ul className="mt-4 grid gap-2 text-sm sm:grid-cols-2">
              {plan.features.map((f) => (
                <li key={f} className="flex gap-2">
                  <span aria-hidden="true" className="text-success">
                    ✓
                  </span>
                  {f}
                </li>
              ))}
            </ul>
          </>
        ) : (
          <NoActivePlan titleId="billing-plan-title">
            <p className="text-sm text-muted">You are not subscribed to a plan.</p>
          </NoActivePlan>
        )}
      </section>
    </div>
  );
}
