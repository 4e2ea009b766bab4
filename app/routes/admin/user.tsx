import { requireAdmin } from "@workers/http/auth";
import { checkFields, readFormFields } from "@workers/http/body";
import { requestContext } from "@workers/http/context";
import { failureData } from "@workers/http/result";
import {
  API_KEY_ID,
  adjustCredits,
  resendVerificationFor,
  revokeSessions,
  revokeUserApiKey,
  setRole,
  userDetail,
} from "@workers/services/admin";
import { data, Form, Link, useNavigation } from "react-router";
import { z } from "zod";
import { formatDate, formatDateTime } from "~/lib/format";
import { accountDeps } from "~/routes/auth/auth-action.server";
import { cleanText } from "~/shared/text";
import type { Route } from "./+types/user";

export const meta: Route.MetaFunction = ({ loaderData }) => [{ title: `Admin · ${loaderData?.user.email ?? "User"}` }];

export async function loader({ params, context }: Route.LoaderArgs) {
  requireAdmin(context);
  const { db } = context.get(requestContext);
  const detail = await userDetail(db, params.id);
  if (!detail) throw data(null, { status: 404 });
  // Each rendering of the credits form is one submission: sending it twice changes credits once.
  return { ...detail, submission: crypto.randomUUID() };
}

const reason = cleanText("Reason", 3, 500);
const actions = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("credits"),
    submission: z.uuid().optional(),
    amount: z.coerce
      .number({ message: "Enter a whole number." })
      .int("Enter a whole number.")
      .refine((n) => n !== 0 && Math.abs(n) <= 10_000, "Enter a number between -10000 and 10000, not 0."),
    reason,
  }),
  z.object({ intent: z.literal("revoke"), reason }),
  z.object({ intent: z.literal("resend"), reason }),
  z.object({ intent: z.literal("role"), role: z.enum(["user", "admin"]), reason }),
  z.object({
    intent: z.literal("revoke-key"),
    keyId: z.string({ message: "Choose a key." }).regex(API_KEY_ID, "That is not an API key id."),
    reason,
  }),
]);

type FieldErrors = Partial<Record<"amount" | "reason" | "role" | "keyId" | "form", string>>;
const noErrors: FieldErrors = {};

export async function action({ request, params, context }: Route.ActionArgs) {
  const admin = requireAdmin(context);
  const { db, env } = context.get(requestContext);
  const raw = await readFormFields(request);
  if (!raw.ok) return failureData({ ...raw, intent: "", fieldErrors: noErrors, message: raw.error });
  const parsed = checkFields(actions, raw.fields);
  if (!parsed.ok) {
    const fieldErrors: FieldErrors = { ...parsed.fieldErrors };
    return failureData({ ...parsed, intent: raw.fields.intent ?? "", fieldErrors, message: null });
  }
  const input = parsed.data;
  const res =
    input.intent === "credits"
      ? await adjustCredits(env, db, admin, params.id, input.amount, input.reason, input.submission)
      : input.intent === "revoke"
        ? await revokeSessions(db, admin, params.id, input.reason)
        : input.intent === "resend"
          ? await resendVerificationFor(accountDeps(context, request), admin, params.id, input.reason)
          : input.intent === "revoke-key"
            ? await revokeUserApiKey(db, admin, params.id, input.keyId, input.reason)
            : await setRole(db, admin, params.id, input.role, input.reason);
  if (!res.ok) return failureData({ ...res, intent: input.intent, fieldErrors: noErrors, message: res.error });
  return { intent: input.intent, ok: true as const, fieldErrors: noErrors, message: res.message };
}

const REVOKED_BY: Record<string, string> = {
  owner: "by the user",
  password_reset: "by a password reset",
  sessions_revoked: "by “sign out everywhere”",
  admin: "by an admin",
  account_deleted: "with the account",
};

/** The user's API keys (prefix only, never a secret), each active one with its own revoke form. */
function ApiKeysSection({
  apiKeys,
  actionData,
}: {
  apiKeys: Route.ComponentProps["loaderData"]["apiKeys"];
  actionData: Route.ComponentProps["actionData"];
}) {
  const nav = useNavigation();
  const mine = actionData?.intent === "revoke-key" ? actionData : undefined;
  const busyKey =
    nav.state !== "idle" && nav.formData?.get("intent") === "revoke-key" ? nav.formData.get("keyId") : null;
  return (
    <section className="mt-10" aria-labelledby="api-keys-title">
      <h2 id="api-keys-title" className="text-lg font-semibold">
        API keys
      </h2>
      {mine?.message || mine?.fieldErrors.keyId || mine?.fieldErrors.reason ? (
        <p className={mine.ok ? "alert-success mt-3" : "alert-error mt-3"} role={mine.ok ? "status" : "alert"}>
          {mine.message ?? mine.fieldErrors.keyId ?? mine.fieldErrors.reason}
        </p>
      ) : null}
      <div className="mt-3 overflow-x-auto rounded-2xl border border-line">
        <table className="w-full min-w-[40rem] text-left text-sm" data-testid="admin-api-keys">
          <thead className="bg-slate-50 text-xs uppercase tracking-wide text-muted">
            <tr>
              <th className="px-4 py-2">Name</th>
              <th className="px-4 py-2">Key</th>
              <th className="px-4 py-2">Scopes</th>
              <th className="px-4 py-2">Created</th>
              <th className="px-4 py-2">Last used</th>
              <th className="px-4 py-2">State</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-line">
            {apiKeys.map((k) => (
              <tr key={k.id} className="align-top">
                <td className="px-4 py-2">{k.name}</td>
                <td className="px-4 py-2">
                  <code>{k.prefix}…</code>
                </td>
                <td className="px-4 py-2">{k.scopes.join(", ")}</td>
                <td className="px-4 py-2 whitespace-nowrap">{formatDateTime(k.createdAt)}</td>
                <td className="px-4 py-2 whitespace-nowrap">{formatDateTime(k.lastUsedAt)}</td>
                <td className="px-4 py-2">
                  {k.revokedAt !== null ? (
                    <span className="text-muted">
                      Revoked {REVOKED_BY[k.revokedReason ?? ""] ?? ""} on {formatDateTime(k.revokedAt)}
                    </span>
                  ) : (
                    <Form method="post" className="flex flex-wrap items-end gap-2">
                      <input type="hidden" name="intent" value="revoke-key" />
                      <input type="hidden" name="keyId" value={k.id} />
                      <label className="grid gap-1 text-xs">
                        Reason
                        <input name="reason" className="input" required minLength={3} maxLength={500} />
                      </label>
                      <button type="submit" className="btn-danger" disabled={busyKey === k.id}>
                        Revoke <span className="sr-only">{k.name}</span>
                      </button>
                    </Form>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {apiKeys.length === 0 ? <p className="p-4 text-muted">No API keys.</p> : null}
      </div>
    </section>
  );
}

function ActionCard({
  intent,
  title,
  children,
  actionData,
  submit,
  danger,
}: {
  intent: string;
  title: string;
  children?: React.ReactNode;
  actionData: Route.ComponentProps["actionData"];
  submit: string;
  danger?: boolean;
}) {
  const nav = useNavigation();
  const mine = actionData?.intent === intent ? actionData : undefined;
  const reasonError = mine?.fieldErrors.reason;
  const busy = nav.state !== "idle" && nav.formData?.get("intent") === intent;
  return (
    <Form method="post" className="card space-y-3" aria-labelledby={`${intent}-title`}>
      <h2 id={`${intent}-title`} className="font-semibold">
        {title}
      </h2>
      <input type="hidden" name="intent" value={intent} />
      {children}
      <div>
        <label className="label" htmlFor={`${intent}-reason`}>
          Reason
        </label>
        <input
          id={`${intent}-reason`}
          name="reason"
          className="input"
          required
          minLength={3}
          maxLength={500}
          aria-invalid={reasonError ? true : undefined}
          aria-describedby={reasonError ? `${intent}-reason-error` : undefined}
        />
        {reasonError ? (
          <p id={`${intent}-reason-error`} className="field-error">
            {reasonError}
          </p>
        ) : null}
      </div>
      {mine?.message ? (
        <p className={mine.ok ? "alert-success" : "alert-error"} role={mine.ok ? "status" : "alert"}>
          {mine.message}
        </p>
      ) : null}
      <button type="submit" className={danger ? "btn-danger" : "btn-primary"} disabled={busy}>
        {busy ? "Working…" : submit}
      </button>
    </Form>
  );
}

export default function AdminUser({ loaderData, actionData }: Route.ComponentProps) {
  const { user, ledger, sessions, audit, photos, jobs, failedJobs, apiKeys } = loaderData;
  const amountError = actionData?.intent === "credits" ? actionData.fieldErrors.amount : undefined;
  return (
    <div className="container-page py-8">
      <Link to="/admin" className="text-sm text-brand-700 underline">
        ← All users
      </Link>
      <h1 className="mt-2 text-2xl font-bold break-all">{user.email}</h1>
      {user.deletedAt !== null ? (
        <p className="alert-error mt-2" data-testid="deleted">
          Account deleted on {formatDateTime(user.deletedAt)}: personal data erased, ledger and payments kept.
        </p>
      ) : null}
      <dl className="mt-4 grid grid-cols-2 gap-4 sm:grid-cols-4">
        {[
          ["Credits", String(user.credits)],
          ["Plan", user.plan ?? "—"],
          ["Role", user.role],
          ["Verified", user.verified ? "Yes" : "No"],
          ["Signed up", formatDate(user.createdAt)],
          ["Last active", formatDateTime(user.lastActiveAt)],
          ["Sessions", String(sessions.length)],
          ["Photos", `${photos.total}${photos.trashed ? ` (${photos.trashed} in trash)` : ""}`],
          [
            "Jobs",
            `${(jobs.succeeded ?? 0) + (jobs.failed ?? 0) + (jobs.running ?? 0) + (jobs.queued ?? 0)} (${jobs.failed ?? 0} failed)`,
          ],
        ].map(([k, v]) => (
          <div key={k} className="rounded-xl bg-slate-50 p-3">
            <dt className="text-xs uppercase tracking-wide text-muted">{k}</dt>
            <dd className="mt-1 font-semibold" data-testid={`detail-${k?.toLowerCase().replace(" ", "-")}`}>
              {v}
            </dd>
          </div>
        ))}
      </dl>

      <div className="mt-8 grid gap-4 lg:grid-cols-3">
        <ActionCard intent="credits" title="Grant or remove credits" submit="Apply" actionData={actionData}>
          <input type="hidden" name="submission" value={loaderData.submission} />
          <div>
            <label className="label" htmlFor="credits-amount">
              Credits (negative to remove)
            </label>
            <input
              id="credits-amount"
              name="amount"
              type="number"
              step={1}
              required
              className="input"
              aria-invalid={amountError ? true : undefined}
              aria-describedby={amountError ? "credits-amount-error" : undefined}
            />
            {amountError ? (
              <p id="credits-amount-error" className="field-error">
                {amountError}
              </p>
            ) : null}
          </div>
        </ActionCard>
        <ActionCard
          intent="revoke"
          title="Sign out everywhere"
          submit="Revoke all sessions, API keys and export links"
          actionData={actionData}
          danger
        />
        <ActionCard
          intent="role"
          title={user.role === "admin" ? "Remove the admin role" : "Grant the admin role"}
          submit={user.role === "admin" ? "Remove admin" : "Make admin"}
          actionData={actionData}
          danger={user.role === "admin"}
        >
          <input type="hidden" name="role" value={user.role === "admin" ? "user" : "admin"} />
        </ActionCard>
      </div>

      <ApiKeysSection apiKeys={apiKeys} actionData={actionData} />

      <section className="mt-10">
        <h2 className="text-lg font-semibold">Ledger</h2>
        <div className="mt-3 overflow-x-auto rounded-2xl border border-line">
          <table className="w-full min-w-[36rem] text-left text-sm">
            <thead className="bg-slate-50 text-xs uppercase tracking-wide text-muted">
              <tr>
                <th className="px-4 py-2">When</th>
                <th className="px-4 py-2">Kind</th>
                <th className="px-4 py-2">Amount</th>
                <th className="px-4 py-2">Reason</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-line">
              {ledger.map((l) => (
                <tr key={l.id}>
                  <td className="px-4 py-2 whitespace-nowrap">{formatDateTime(l.createdAt)}</td>
                  <td className="px-4 py-2">{l.kind}</td>
                  <td className={`px-4 py-2 tabular-nums ${l.amount < 0 ? "text-danger" : ""}`}>
                    {l.amount > 0 ? `+${l.amount}` : l.amount}
                  </td>
                  <td className="px-4 py-2">{l.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {ledger.length === 0 ? <p className="p-4 text-muted">No credit movements yet.</p> : null}
        </div>
      </section>

      <section className="mt-10">
        <h2 className="text-lg font-semibold">Failed jobs</h2>
        <ul className="mt-3 space-y-2 text-sm">
          {failedJobs.map((j) => (
            <li key={j.id} className="rounded-xl border border-line p-3">
              <span className="font-medium">{j.kind}</span> · {formatDateTime(j.createdAt)}
              <br />
              <span className="text-danger">{j.error ?? "No error recorded"}</span>
            </li>
          ))}
          {failedJobs.length === 0 ? <li className="text-muted">No failed jobs.</li> : null}
        </ul>
      </section>

      <section className="mt-10 grid gap-8 lg:grid-cols-2">
        <div>
          <h2 className="text-lg font-semibold">Sessions</h2>
          <ul className="mt-3 space-y-2 text-sm">
            {sessions.map((s) => (
              <li key={s.id} className="rounded-xl border border-line p-3">
                <span className="font-mono">{s.id}…</span> · {s.userAgent ?? "unknown device"} · since{" "}
                {formatDateTime(s.createdAt)} · expires {formatDate(s.expiresAt)}
              </li>
            ))}
            {sessions.length === 0 ? <li className="text-muted">Signed out everywhere.</li> : null}
          </ul>
        </div>
        <div>
          <h2 className="text-lg font-semibold">Audit log</h2>
          <ul className="mt-3 space-y-2 text-sm">
            {audit.map((a) => (
              <li key={a.id} className="rounded-xl border border-line p-3">
                <span className="font-medium">{a.action}</span> by {a.actorEmail} · {formatDateTime(a.createdAt)}
                <br />
                <span className="text-muted">{a.reason}</span>
              </li>
            ))}
            {audit.length === 0 ? <li className="text-muted">No admin actions yet.</li> : null}
          </ul>
        </div>
      </section>
    </div>
  );
}
