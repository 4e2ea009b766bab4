import { requireUser } from "@workers/http/auth";
import { billingDeps, billingRefusal, callStripe } from "@workers/http/billing";
import { readFormFields } from "@workers/http/body";
import { getDeps } from "@workers/http/context";
import { failureData } from "@workers/http/result";
import { startCheckout } from "@workers/services/billing";
import { CHECKOUT_RULE, overLimit } from "@workers/services/limits";
import { useState } from "react";
import { Form, redirect, useNavigation } from "react-router";
import { z } from "zod";
import { PLAN_REQUIRED_MESSAGE } from "~/shared/billing-messages";
import { type BillingInterval, findPlan, PLANS, yearlyMonthlyEquivalent } from "~/shared/catalog";
import { fail } from "~/shared/result";
import type { Route } from "./+types/checkout";

export const meta: Route.MetaFunction = () => [{ title: "Choose a Plan · Stagewise" }];

/** The interval a /plans link meant: its price is the yearly price in yearly mode. */
function intervalFrom(params: URLSearchParams): BillingInterval {
  const interval = params.get("interval");
  if (interval === "month" || interval === "year") return interval;
  const plan = findPlan(params.get("planId"));
  const price = Number(params.get("price"));
  return plan && price === plan.yearlyPrice && price !== plan.price ? "year" : "month";
}

export function loader({ request, context }: Route.LoaderArgs) {
  const user = requireUser(context, request);
  const params = new URL(request.url).searchParams;
  return {
    selected: findPlan(params.get("planId"))?.id ?? null,
    interval: intervalFrom(params),
    canceled: params.get("canceled") === "1",
    currentPlan: user.plan,
  };
}

const input = z.object({
  planId: z.string().refine((v) => Boolean(findPlan(v)), PLAN_REQUIRED_MESSAGE),
  // A missing interval means monthly; a wrong one is refused, not guessed.
  interval: z.enum(["month", "year"], { message: "Please choose monthly or yearly billing." }),
});

export async function action({ request, context }: Route.ActionArgs) {
  const user = requireUser(context, request);
  const raw = await readFormFields(request);
  if (!raw.ok) return failureData(raw);
  const form = raw.fields;
  const parsed = input.safeParse({ planId: form.planId ?? "", interval: form.interval ?? "month" });
  if (!parsed.success) return failureData(fail("invalid", parsed.error.issues[0]?.message ?? PLAN_REQUIRED_MESSAGE));
  const limited = await overLimit(getDeps(context), CHECKOUT_RULE, [`user:${user.id}`]);
  if (limited) return failureData(limited);
  const result = await callStripe(() =>
    startCheckout(billingDeps(context), user, parsed.data.planId, parsed.data.interval),
  );
  if (!result.ok) return billingRefusal(result);
  return redirect(result.url, 303);
}

export default function Checkout({ loaderData, actionData }: Route.ComponentProps) {
  const [clientError, setClientError] = useState<string | null>(null);
  const [interval, setIntervalChoice] = useState<BillingInterval>(loaderData.interval);
  const busy = useNavigation().state !== "idle";
  const error = clientError ?? actionData?.error ?? null;
  return (
    <div className="container-page max-w-2xl py-12">
      <h1 className="text-3xl font-extrabold tracking-tight">Choose a Plan</h1>
      <p className="mt-2 text-muted">
        Pick the plan that fits your listings. You will pay on Stripe's secure checkout page.
      </p>
      {loaderData.canceled ? (
        <p className="alert-success mt-6" role="status">
          Checkout was cancelled. You have not been charged.
        </p>
      ) : null}
      {loaderData.currentPlan ? (
        <p className="mt-6 rounded-lg border border-line bg-slate-50 px-4 py-3 text-sm">
          You are on the {loaderData.currentPlan}. Subscribing to another plan switches to it now: a new billing period
          starts, the unused part of the current one is credited, and the credits you have carry over.
        </p>
      ) : null}
      <Form
        method="post"
        className="mt-8 space-y-8"
        noValidate
        onSubmit={(e) => {
          if (!new FormData(e.currentTarget).get("planId")) {
            e.preventDefault();
            setClientError(PLAN_REQUIRED_MESSAGE);
          }
        }}
      >
        <fieldset>
          <legend className="label">Billing</legend>
          <div className="mt-2 inline-flex rounded-lg border border-line p-1">
            {(["month", "year"] as const).map((value) => (
              <label
                key={value}
                className="cursor-pointer rounded-md px-4 py-2 text-sm font-medium has-[:checked]:bg-brand-600 has-[:checked]:text-white has-[:focus-visible]:outline-3 has-[:focus-visible]:outline-brand-500"
              >
                <input
                  type="radio"
                  name="interval"
                  value={value}
                  className="sr-only"
                  defaultChecked={loaderData.interval === value}
                  onChange={() => setIntervalChoice(value)}
                />
                {value === "month" ? "Monthly" : "Yearly"}
              </label>
            ))}
          </div>
        </fieldset>
        <fieldset aria-describedby={error ? "plan-error" : undefined}>
          <legend className="label">Plan</legend>
          <div className="mt-2 space-y-3">
            {PLANS.map((plan) => (
              <label
                key={plan.id}
                className="flex cursor-pointer items-center gap-4 rounded-xl border border-line p-4 hover:border-brand-500 has-[:checked]:border-brand-600 has-[:checked]:bg-brand-50"
              >
                <input
                  type="radio"
                  name="planId"
                  value={plan.id}
                  defaultChecked={loaderData.selected === plan.id}
                  onChange={() => setClientError(null)}
                  className="h-5 w-5 accent-brand-600"
                />
                <span className="flex-1">
                  <span className="block font-semibold">{plan.name}</span>
                  <span className="block text-sm text-muted">{plan.credits} credits per month</span>
                </span>
                <span className="text-right text-sm">
                  <span className="font-semibold" data-interval="month" hidden={interval !== "month"}>
                    ${plan.price}/month
                  </span>
                  <span className="font-semibold" data-interval="year" hidden={interval !== "year"}>
                    ${yearlyMonthlyEquivalent(plan)}/month
                    <span className="block text-xs font-normal text-muted">${plan.yearlyPrice} billed yearly</span>
                  </span>
                </span>
              </label>
            ))}
          </div>
        </fieldset>
        {error ? (
          <p id="plan-error" className="alert-error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" className="btn-primary w-full text-base" disabled={busy}>
          Subscribe Now
        </button>
      </Form>
    </div>
  );
}
