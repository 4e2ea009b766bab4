import { requireUser } from "@workers/http/auth";
import { callStripe } from "@workers/http/billing";
import { readForm } from "@workers/http/body";
import { getDeps } from "@workers/http/context";
import { failureData } from "@workers/http/result";
import { CHECKOUT_RULE, overLimit } from "@workers/services/limits";
import { runTeamAction, teamActionInput } from "@workers/services/teams/actions";
import { listTeamKeys } from "@workers/services/teams/keys";
import { teamPage } from "@workers/services/teams/teams";
import { data, Form, Link, redirect } from "react-router";
import { TEAM_PLAN } from "~/shared/catalog";
import { RETENTION_MAX_DAYS, RETENTION_MIN_DAYS, TEAM_POOL_FROZEN } from "~/shared/teams";
import type { Route } from "./+types/team";

// A team's page (issue 47): its members, seats, pool and listings for every member; invitations, removals and
// per-member limits for its owner and team admins. Membership and role are checked on the server for the page and
// for each action (workers/services/teams/); a stranger or a removed member gets the same 404 as a made-up id. The
// owner buys seats (Stripe Checkout) and changes them (prorated at once); the seats shown follow Stripe's webhook.

export const handle = { appFrame: true };

export const meta: Route.MetaFunction = () => [{ title: "Team · Stagewise" }];

const teamIdOf = (params: { teamId: string }) => params.teamId.slice(0, 64);

export async function loader({ request, context, params }: Route.LoaderArgs) {
  const user = requireUser(context, request);
  const deps = getDeps(context);
  const page = await teamPage(deps, teamIdOf(params), user.id);
  if (!page.ok) throw data(null, { status: 404 });
  const checkout = new URL(request.url).searchParams.get("checkout");
  // The team's API keys, for its owner and team admins only (docs/decisions/0295-team-api-keys.md).
  const keys = page.me.manager ? await listTeamKeys(deps.db, page.team.id, deps.clock()) : [];
  // The spend export's range, by default this month so far (UTC), computed here so the page and its hydration agree.
  const today = new Date(deps.clock()).toISOString().slice(0, 10);
  const month = { from: `${today.slice(0, 8)}01`, to: today };
  return { ...page, keys, month, checkout: checkout === "success" || checkout === "canceled" ? checkout : null };
}

export async function action({ request, context, params }: Route.ActionArgs) {
  const user = requireUser(context, request);
  const form = await readForm(request, teamActionInput);
  if (!form.ok) return failureData(form);
  const deps = getDeps(context);
  const teamId = teamIdOf(params);
  const stripeCall = form.data.intent === "seats" || form.data.intent === "billing";
  if (stripeCall) {
    const limited = await overLimit(deps, CHECKOUT_RULE, [`user:${user.id}`]);
    if (limited) return failureData(limited);
  }
  const res = stripeCall
    ? await callStripe(() => runTeamAction(deps, teamId, user.id, form.data))
    : await runTeamAction(deps, teamId, user.id, form.data);
  if (!res.ok) return failureData(res);
  if (res.redirect) return redirect(res.redirect, 303);
  // A key's token or callback secret is in this answer only: never kept by a cache.
  return data(
    {
      ok: true as const,
      message: res.message,
      token: res.token ?? null,
      callbackSecret: res.callbackSecret ?? null,
    },
    { headers: res.token || res.callbackSecret ? { "Cache-Control": "no-store" } : {} },
  );
}

function SeatsForm({ seats, subscribed }: { seats: number; subscribed: boolean }) {
  return (
    <>
      <h2 className="mt-6 text-lg font-semibold">Seats</h2>
      <p className="mt-1 text-sm text-slate-700">
        {TEAM_PLAN.name}: ${TEAM_PLAN.pricePerSeat} a seat a month, {TEAM_PLAN.creditsPerSeat} credits a seat for the
        pool.{" "}
        {subscribed ? "A seat added now is charged for the rest of this month, and buys its share of credits." : ""}
      </p>
      <Form method="post" className="mt-2 flex flex-wrap gap-2">
        <input type="hidden" name="intent" value="seats" />
        <label className="flex flex-col text-sm">
          Seats ({TEAM_PLAN.minSeats} to {TEAM_PLAN.maxSeats})
          <input
            name="seats"
            type="number"
            required
            min={TEAM_PLAN.minSeats}
            max={TEAM_PLAN.maxSeats}
            defaultValue={seats}
            className="mt-1 w-24 rounded border p-2"
          />
        </label>
        <button type="submit" className="self-end rounded bg-slate-900 px-4 py-2 text-white">
          {subscribed ? "Change seats" : "Buy seats"}
        </button>
      </Form>
      {subscribed ? (
        <Form method="post" className="mt-2">
          <input type="hidden" name="intent" value="billing" />
          <button type="submit" className="rounded border px-4 py-2 text-sm">
            Payment details, invoices and cancelling
          </button>
        </Form>
      ) : null}
    </>
  );
}

function SpendSection({ teamId, month }: { teamId: string; month: { from: string; to: string } }) {
  return (
    <>
      <h2 className="mt-6 text-lg font-semibold">Spend</h2>
      <p className="mt-1 text-sm text-slate-700">
        Credits the pool paid, per member and per listing, with what came back from failed or returned results.
      </p>
      {/* A plain GET form: the CSV downloads with or without JavaScript. */}
      <form method="get" action={`/teams/${teamId}/spend.csv`} className="mt-2 flex flex-wrap gap-2">
        <label className="flex flex-col text-sm">
          From
          <input name="from" type="date" required defaultValue={month.from} className="mt-1 rounded border p-2" />
        </label>
        <label className="flex flex-col text-sm">
          To
          <input name="to" type="date" required defaultValue={month.to} className="mt-1 rounded border p-2" />
        </label>
        <button type="submit" className="self-end rounded border px-4 py-2">
          Download CSV
        </button>
      </form>
    </>
  );
}

function RecordSection({ teamId, days }: { teamId: string; days: number }) {
  return (
    <>
      <h2 className="mt-6 text-lg font-semibold">Broker's record</h2>
      <p className="mt-1 text-sm text-slate-700">
        Every photo that left the team's listings, who sent it, with which disclosure.{" "}
        <Link to={`/teams/${teamId}/record`} className="underline">
          Open the record
        </Link>
      </p>
      <Form method="post" className="mt-2 flex flex-wrap gap-2">
        <input type="hidden" name="intent" value="retention" />
        <label className="flex flex-col text-sm">
          Keep what left for (days, {RETENTION_MIN_DAYS} to {RETENTION_MAX_DAYS})
          <input
            name="days"
            type="number"
            required
            min={RETENTION_MIN_DAYS}
            max={RETENTION_MAX_DAYS}
            defaultValue={days}
            className="mt-1 w-28 rounded border p-2"
          />
        </label>
        <button type="submit" className="self-end rounded bg-slate-900 px-4 py-2 text-white">
          Save
        </button>
      </Form>
    </>
  );
}

function MemberRow({
  m,
  manager,
  owner,
}: {
  m: Route.ComponentProps["loaderData"]["members"][number];
  manager: boolean;
  owner: boolean;
}) {
  return (
    <li className="flex flex-wrap items-center gap-2 p-3">
      <span className="flex-1">
        <span className="font-medium">{m.name}</span> <span className="text-sm text-slate-600">{m.email}</span>
      </span>
      <span className="text-sm">{m.roleLabel}</span>
      {manager && m.role !== "owner" ? (
        <>
          <Form method="post" className="flex items-center gap-1">
            <input type="hidden" name="intent" value="limit" />
            <input type="hidden" name="memberId" value={m.userId} />
            <label className="text-sm">
              Limit
              <input
                name="limit"
                inputMode="numeric"
                defaultValue={m.creditLimit ?? ""}
                aria-label={`Credit limit for ${m.email}`}
                className="ml-1 w-16 rounded border p-1"
              />
            </label>
            <button type="submit" className="rounded border px-2 py-1 text-sm">
              Set
            </button>
          </Form>
          <Form method="post">
            <input type="hidden" name="intent" value="remove" />
            <input type="hidden" name="memberId" value={m.userId} />
            <button type="submit" className="rounded border px-2 py-1 text-sm text-red-700">
              Remove
            </button>
          </Form>
          {owner ? (
            <Form method="post" className="flex items-center gap-1">
              <input type="hidden" name="intent" value="transfer" />
              <input type="hidden" name="memberId" value={m.userId} />
              <label className="text-sm">
                <input type="checkbox" name="confirm" required className="mr-1" />
                Hand billing and ownership to {m.name || m.email}
              </label>
              <button type="submit" className="rounded border px-2 py-1 text-sm">
                Make owner
              </button>
            </Form>
          ) : null}
        </>
      ) : null}
    </li>
  );
}

/** One of a key's buttons: its intent and the key's id, named for screen readers with the key's name. */
function KeyForm(props: { intent: string; keyId: string; label: string; danger?: boolean; children: string }) {
  return (
    <Form method="post" className="inline">
      <input type="hidden" name="intent" value={props.intent} />
      <input type="hidden" name="keyId" value={props.keyId} />
      <button
        type="submit"
        aria-label={props.label}
        className={`rounded border px-2 py-1 text-sm${props.danger ? " text-red-700" : ""}`}
      >
        {props.children}
      </button>
    </Form>
  );
}

function TeamKeys({ keys }: { keys: Route.ComponentProps["loaderData"]["keys"] }) {
  return (
    <>
      <h2 className="mt-6 text-lg font-semibold">Team API keys</h2>
      <p className="mt-1 text-sm text-slate-700">
        Keys that belong to the team: their jobs are paid from the pool and they keep working when whoever made them
        leaves. Each key uploads into its own team listing.
      </p>
      {keys.length > 0 ? (
        <ul className="mt-2 divide-y rounded border">
          {keys.map((k) => (
            <li key={k.id} className="flex flex-wrap items-center gap-2 p-3">
              <span className="flex-1">
                <span className="font-medium">{k.name}</span>{" "}
                <span className="font-mono text-sm text-slate-600">{k.prefix}…</span>{" "}
                <span className="text-sm text-slate-600">
                  {k.createdBy ? `made by ${k.createdBy}` : null}
                  {k.creditLimit !== null ? ` · limit ${k.creditLimit} credits` : null}
                  {k.revokedAt !== null ? " · revoked" : null}
                </span>
              </span>
              {k.revokedAt === null ? (
                <>
                  <KeyForm intent="rotate-key-secret" keyId={k.id} label={`Replace callback secret of ${k.name}`}>
                    Replace callback secret
                  </KeyForm>
                  <KeyForm intent="revoke-key" keyId={k.id} label={`Revoke ${k.name}`} danger>
                    Revoke
                  </KeyForm>
                </>
              ) : null}
              {k.oldSecretSignsUntil !== null ? (
                <span className="basis-full text-sm" data-testid="team-key-end-old-secret">
                  Old callback secret signs until {new Date(k.oldSecretSignsUntil).toUTCString()}.{" "}
                  <KeyForm
                    intent="end-key-old-secret"
                    keyId={k.id}
                    label={`Stop the old secret now for ${k.name}`}
                    danger
                  >
                    Stop the old secret now
                  </KeyForm>
                </span>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
      <Form method="post" className="mt-2 flex flex-wrap gap-2">
        <input type="hidden" name="intent" value="create-key" />
        <label className="flex flex-1 flex-col text-sm">
          Key name
          <input name="name" required maxLength={60} className="mt-1 rounded border p-2" />
        </label>
        <label className="flex flex-col text-sm">
          Limit per period (optional)
          <input name="limit" inputMode="numeric" className="mt-1 w-32 rounded border p-2" />
        </label>
        <button type="submit" className="self-end rounded border px-4 py-2">
          Create key
        </button>
      </Form>
    </>
  );
}

export default function TeamPage({ loaderData, actionData }: Route.ComponentProps) {
  const { team, me, members, invitations, freeSeats, checkout, keys, month } = loaderData;
  const checkoutMessage =
    checkout === "success"
      ? "Payment received. The team's seats and credits appear here as soon as Stripe confirms it."
      : checkout === "canceled"
        ? "Checkout was cancelled. Nothing was charged."
        : null;
  const message = actionData && "message" in actionData ? actionData.message : checkoutMessage;
  const token = actionData && "token" in actionData ? actionData.token : null;
  const callbackSecret = actionData && "callbackSecret" in actionData ? actionData.callbackSecret : null;
  const error = actionData && "error" in actionData ? String(actionData.error) : null;
  return (
    <div className="mx-auto max-w-3xl p-4 sm:p-6">
      <h1 className="text-2xl font-semibold">{team.name}</h1>
      <p className="mt-1 text-slate-700">
        {team.pool} credits in the team's pool · {team.seats} {team.seats === 1 ? "seat" : "seats"} · {freeSeats} free
      </p>
      {team.frozen ? (
        <p role="alert" className="mt-2 rounded bg-amber-100 p-2 text-amber-900">
          {TEAM_POOL_FROZEN}
        </p>
      ) : null}
      {message ? (
        <p role="status" className="mt-2 text-green-800">
          {message}
        </p>
      ) : null}
      {token ? (
        <p className="mt-2 break-all rounded bg-slate-100 p-2 font-mono text-sm" data-testid="team-key-token">
          {token}
        </p>
      ) : null}
      {callbackSecret ? (
        <p className="mt-2 text-sm">
          Callback signing secret (checks the Stagewise-Signature header of this key's job callbacks):{" "}
          <span className="break-all rounded bg-slate-100 p-1 font-mono" data-testid="team-key-callback-secret">
            {callbackSecret}
          </span>
        </p>
      ) : null}
      {error ? (
        <p role="alert" className="mt-2 text-red-700">
          {error}
        </p>
      ) : null}
      <h2 className="mt-6 text-lg font-semibold">Members</h2>
      <ul className="mt-2 divide-y rounded border">
        {members.map((m) => (
          <MemberRow key={m.userId} m={m} manager={me.manager} owner={me.owner} />
        ))}
      </ul>
      {me.manager ? (
        <>
          <h2 className="mt-6 text-lg font-semibold">Invite by e-mail</h2>
          <Form method="post" className="mt-2 flex flex-wrap gap-2">
            <input type="hidden" name="intent" value="invite" />
            <label className="flex flex-1 flex-col text-sm">
              E-mail address
              <input name="email" type="email" required className="mt-1 rounded border p-2" />
            </label>
            <label className="flex flex-col text-sm">
              Role
              <select name="role" className="mt-1 rounded border p-2">
                <option value="agent">Agent</option>
                <option value="team_admin">Team admin</option>
              </select>
            </label>
            <button type="submit" className="self-end rounded bg-slate-900 px-4 py-2 text-white">
              Send invitation
            </button>
          </Form>
          {invitations.length > 0 ? (
            <ul className="mt-3 divide-y rounded border">
              {invitations.map((i) => (
                <li key={i.id} className="flex items-center justify-between p-3">
                  <span>
                    {i.email} <span className="text-sm text-slate-600">(pending)</span>
                  </span>
                  <Form method="post">
                    <input type="hidden" name="intent" value="revoke" />
                    <input type="hidden" name="invitationId" value={i.id} />
                    <button type="submit" className="rounded border px-2 py-1 text-sm">
                      Revoke
                    </button>
                  </Form>
                </li>
              ))}
            </ul>
          ) : null}
        </>
      ) : null}
      {me.owner ? <SeatsForm seats={team.seats} subscribed={team.subscribed} /> : null}
      {me.manager ? <TeamKeys keys={keys} /> : null}
      {me.manager ? <SpendSection teamId={team.id} month={month} /> : null}
      {me.manager ? <RecordSection teamId={team.id} days={team.retentionDays} /> : null}
      <h2 className="mt-6 text-lg font-semibold">New shared listing</h2>
      <Form method="post" className="mt-2 flex flex-wrap gap-2">
        <input type="hidden" name="intent" value="create-listing" />
        <label className="flex flex-1 flex-col text-sm">
          Listing name or address
          <input name="name" required maxLength={100} className="mt-1 rounded border p-2" />
        </label>
        <button type="submit" className="self-end rounded border px-4 py-2">
          Create listing
        </button>
      </Form>
    </div>
  );
}
