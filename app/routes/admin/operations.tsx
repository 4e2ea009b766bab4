import { adminPageTakesNoForm, requireAdmin } from "@workers/http/auth";
import { requestContext } from "@workers/http/context";
import { type ProviderSlots, readOperations, type Tally, type WindowView } from "@workers/services/operations";
import { AdminCrumbs } from "~/components/admin-crumbs";
import { formatDateTime } from "~/lib/format";
import type { Route } from "./+types/operations";

// The operations page (issue 36 part 5): read from counters kept as jobs, provider calls and webhooks end, and a few
// indexed counts (docs/decisions/0184-operations-aggregates.md). Admins only; everyone else gets the 404 every admin
// page gives.

export const meta: Route.MetaFunction = () => [{ title: "Admin · Operations" }];

export const action = adminPageTakesNoForm;

export async function loader({ context }: Route.LoaderArgs) {
  requireAdmin(context);
  const { db, env } = context.get(requestContext);
  return readOperations(db, env);
}

function ms(value: number | null, calls: number): string {
  if (calls === 0) return "—";
  if (value === null) return "over 120 s";
  return value >= 1000 ? `≤ ${value / 1000} s` : `≤ ${value} ms`;
}

const CAUSES: Record<string, string> = {
  timeout: "Timed out",
  network: "Network error",
  rate_limited: "Rate limited (429)",
  server_error: "Provider error (5xx)",
  refused: "Refused by the provider",
  bad_answer: "Unreadable answer",
  unexpected: "Unexpected error (reported)",
  interrupted: "Interrupted (instance lost)",
  other: "Other",
  key_revoked: "API key revoked",
  job_gone: "Job gone",
  secret_unreadable: "Secret unreadable",
  gave_up: "Given up",
  will_retry: "Failed, will retry",
  error: "Error on our side",
  unsent: "Not sent (the queue refused)",
  failed: "Check failed (R2 or the Images binding)",
  unjudgeable: "Picture missing, too small or unreadable",
  no_source: "Source gone",
  score: "By its score",
  daily_limit: "Refused, past the day's free refusals",
};

function Tallies({ items, testId }: { items: Tally[]; testId: string }) {
  if (items.length === 0) return <span className="text-muted">none</span>;
  return (
    <ul data-testid={testId} className="space-y-0.5">
      {items.map((t) => (
        <li key={t.cause} data-cause={t.cause}>
          {CAUSES[t.cause] ?? t.cause}: <span className="tabular-nums">{t.count}</span>
        </li>
      ))}
    </ul>
  );
}

function Window({ w }: { w: WindowView }) {
  const failed = w.jobs.failed.reduce((n, t) => n + t.count, 0);
  const rows: [string, React.ReactNode, string][] = [
    ["Provider calls", w.provider.calls, "provider-calls"],
    ["Provider latency p50", ms(w.provider.p50Ms, w.provider.calls), "provider-p50"],
    ["Provider latency p95", ms(w.provider.p95Ms, w.provider.calls), "provider-p95"],
    ["Provider failures", <Tallies key="pf" items={w.provider.failures} testId="provider-failures" />, "pf"],
    ["Jobs succeeded", w.jobs.succeeded, "jobs-succeeded"],
    ["Jobs failed", failed, "jobs-failed"],
    ["Jobs failed, by cause", <Tallies key="jf" items={w.jobs.failed} testId="job-failures" />, "jf"],
    ["Refused by the structure check (not charged)", w.jobs.refused, "structure-refusals"],
    ["Marked by the structure check (delivered)", w.jobs.flagged.reduce((n, t) => n + t.count, 0), "structure-flagged"],
    ["Delivered unchecked", w.jobs.unchecked.reduce((n, t) => n + t.count, 0), "structure-unchecked"],
    ["Unchecked, by cause", <Tallies key="uc" items={w.jobs.unchecked} testId="unchecked-causes" />, "uc"],
    ["API callbacks failed", <Tallies key="cb" items={w.webhooks.callbacks} testId="callback-failures" />, "cb"],
    ["Stripe webhooks failed", <Tallies key="sw" items={w.webhooks.stripe} testId="stripe-failures" />, "sw"],
  ];
  return (
    <section className="rounded-2xl border border-line p-5" aria-labelledby={`w-${w.since}`}>
      <h2 id={`w-${w.since}`} className="font-semibold">
        {w.label} <span className="text-sm font-normal text-muted">since {formatDateTime(w.since)}</span>
      </h2>
      <dl className="mt-3 grid grid-cols-[1fr_auto] gap-x-6 gap-y-2 text-sm">
        {rows.map(([label, value, id]) => (
          <div key={label} className="contents">
            <dt className="text-muted">{label}</dt>
            <dd className="text-right tabular-nums" data-testid={`${w.label === "This hour" ? "hour" : "day"}-${id}`}>
              {value}
            </dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

function Slots({ slots }: { slots: ProviderSlots | null }) {
  return (
    <p data-testid="provider-slots">
      {slots
        ? `${slots.inFlight} of ${slots.cap} in flight, ${slots.waiting} waiting`
        : "Not measured yet (the provider gate did not answer)."}
    </p>
  );
}

export default function AdminOperations({ loaderData: o }: Route.ComponentProps) {
  const facts: [string, React.ReactNode, string][] = [
    ["Jobs queued", o.jobsQueued, "jobs-queued"],
    ["Jobs running", o.jobsRunning, "jobs-running"],
    ["Provider calls in flight / waiting (global cap)", <Slots key="s" slots={o.providerSlots} />, "slots"],
    ["Data exports waiting", o.exportsQueued, "exports-queued"],
    ["Deleted accounts not purged yet", o.deletionsPending, "deletions-pending"],
    [
      "Last cron run",
      o.lastCron
        ? `${formatDateTime(o.lastCron.finishedAt)}: ${o.lastCron.ok ? "succeeded" : `failed (${o.lastCron.failed.join(", ")})`}`
        : "none recorded",
      "last-cron",
    ],
  ];
  return (
    <div className="container-page py-8">
      <AdminCrumbs here="Operations" />
      <h1 className="mt-2 text-2xl font-bold">Operations</h1>
      <p className="mt-1 text-sm text-muted">
        As of {formatDateTime(o.now)}. Latencies are read from hourly buckets: each figure is the bucket's upper bound.
      </p>
      <dl className="mt-6 grid max-w-2xl grid-cols-[1fr_auto] gap-x-6 gap-y-2 rounded-2xl border border-line p-5 text-sm">
        {facts.map(([label, value, id]) => (
          <div key={label} className="contents">
            <dt className="text-muted">{label}</dt>
            <dd className="text-right tabular-nums" data-testid={id}>
              {value}
            </dd>
          </div>
        ))}
      </dl>
      <div className="mt-6 grid gap-6 lg:grid-cols-2">
        {o.windows.map((w) => (
          <Window key={w.label} w={w} />
        ))}
      </div>
    </div>
  );
}
