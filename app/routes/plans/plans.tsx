import { getUser } from "@workers/http/auth";
import { requestContext } from "@workers/http/context";
import { Link } from "react-router";
import { Icon } from "~/components/icons";
import { PlanIcon } from "~/components/plan-icon";
import {
  BULK_MIN_PROPERTIES,
  BULK_PRICE_PER_PROPERTY,
  PLANS,
  type Plan,
  yearlyMonthlyEquivalent,
} from "~/shared/catalog";
import type { Route } from "./+types/plans";

export const meta: Route.MetaFunction = () => [
  { title: "Plans and pricing · Stagewise" },
  { name: "description", content: "Virtual staging plans from $19 per month. Credits for every room photo." },
];

// The billing toggle is a link (?billing=yearly), so it works before and without JavaScript.
export function loader({ request, context }: Route.LoaderArgs) {
  const yearly = new URL(request.url).searchParams.get("billing") === "yearly";
  return {
    yearly,
    signedIn: Boolean(getUser(context)),
    supportEmail: context.get(requestContext).env.SUPPORT_EMAIL,
  };
}

/** The spec's address: /checkout?planId={plan name}&price={yearly price in yearly mode, else monthly price}. */
function checkoutHref(plan: Plan, yearly: boolean): string {
  return `/checkout?${new URLSearchParams({ planId: plan.name, price: String(yearly ? plan.yearlyPrice : plan.price) })}`;
}

const FAQ = [
  {
    q: "How do credits work?",
    a: "Each credit stages one room photo. Credits are valid for 30 days from purchase and work with any room type or design style.",
  },
  {
    q: "Can I upgrade my plan?",
    a: "Yes, you can upgrade your plan at any time, and your remaining credits carry over.",
  },
  {
    q: "What happens when I run out of credits?",
    a: "You can buy more credits or upgrade your plan at any time. Your account stays active either way.",
  },
  {
    q: "Are there any hidden fees?",
    a: "No. There are no hidden fees: the price you see includes every feature of your plan.",
  },
];

function PlanCard({ plan, yearly, signedIn }: { plan: Plan; yearly: boolean; signedIn: boolean }) {
  const checkout = checkoutHref(plan, yearly);
  const select = signedIn ? checkout : `/login?${new URLSearchParams({ redirectTo: checkout })}`;
  return (
    <li
      className="card flex flex-col transition hover:-translate-y-0.5 hover:border-brand-500 hover:shadow-lg"
      data-testid="plan-card"
      aria-labelledby={`plan-${plan.id}`}
    >
      <span className="inline-flex h-11 w-11 items-center justify-center rounded-xl bg-brand-50 text-brand-700">
        <PlanIcon icon={plan.icon} />
      </span>
      <h2 id={`plan-${plan.id}`} className="mt-4 text-lg font-semibold">
        {plan.name}
      </h2>
      <p className="mt-3">
        <span className="text-3xl font-bold" data-testid="plan-price">
          ${yearly ? yearlyMonthlyEquivalent(plan) : plan.price}
        </span>{" "}
        <span className="text-sm text-muted">{yearly ? "/month (billed yearly)" : "/month"}</span>
      </p>
      <p className="mt-1 text-sm font-medium text-brand-700">{plan.credits} credits every month</p>
      <ul className="mt-4 flex-1 space-y-2 text-sm">
        {plan.features.map((f) => (
          <li key={f} className="flex gap-2">
            <Icon name="check" className="mt-0.5 h-4 w-4 flex-none text-success" />
            {f}
          </li>
        ))}
      </ul>
      <Link to={select} className="btn-primary mt-6 w-full" aria-label={`Select Plan: ${plan.name}`}>
        Select Plan
      </Link>
    </li>
  );
}

export default function Plans({ loaderData }: Route.ComponentProps) {
  const { yearly, signedIn, supportEmail } = loaderData;
  return (
    <div className="container-page relative py-12">
      <Link
        to="/#gallery"
        aria-label="Close"
        className="btn-ghost absolute right-4 top-6 h-11 w-11 rounded-full p-0 text-xl sm:right-6"
      >
        <span aria-hidden="true">✕</span>
      </Link>
      <header className="mx-auto max-w-2xl text-center">
        <h1 className="text-3xl font-extrabold tracking-tight sm:text-4xl">Choose Your Plan</h1>
        <p className="mt-3 text-muted">
          Find the right plan for your virtual staging needs. Every credit stages one room photo.
        </p>
        <Link
          to={yearly ? "/plans" : "/plans?billing=yearly"}
          preventScrollReset
          replace
          className="btn-secondary mt-6"
          data-testid="billing-toggle"
        >
          {yearly ? "Switch to Monthly Billing" : "Switch to Yearly Billing"}
        </Link>
      </header>

      <ul className="mt-10 grid gap-6 sm:grid-cols-2 lg:grid-cols-4">
        {PLANS.map((plan) => (
          <PlanCard key={plan.id} plan={plan} yearly={yearly} signedIn={signedIn} />
        ))}
      </ul>

      <aside
        className="mt-12 rounded-2xl border border-brand-200 bg-brand-50 p-6 text-center sm:p-8"
        aria-labelledby="bulk-title"
      >
        <h2 id="bulk-title" className="text-xl font-bold">
          Staging {BULK_MIN_PROPERTIES} or more properties?
        </h2>
        <p className="mt-2 text-muted">
          Get every photo of each property staged for ${BULK_PRICE_PER_PROPERTY} per property. Write to{" "}
          <a className="font-semibold text-brand-700 underline" href={`mailto:${supportEmail}`}>
            {supportEmail}
          </a>{" "}
          and we will set it up for you.
        </p>
      </aside>

      <section className="mx-auto mt-16 max-w-3xl" aria-labelledby="faq-title">
        <h2 id="faq-title" className="text-center text-2xl font-bold">
          Got questions? We have answers
        </h2>
        <div className="mt-6 divide-y divide-line rounded-2xl border border-line">
          {FAQ.map((item) => (
            <details key={item.q} name="plans-faq" className="group p-4 sm:p-5">
              <summary className="flex cursor-pointer list-none items-center justify-between gap-4 font-medium [&::-webkit-details-marker]:hidden">
                {item.q}
                <span aria-hidden="true" className="text-muted transition group-open:rotate-45">
                  +
                </span>
              </summary>
              <p className="mt-3 text-muted">{item.a}</p>
            </details>
          ))}
        </div>
      </section>
    </div>
  );
}
