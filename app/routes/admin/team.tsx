import { adminPageTakesNoForm, requireAdmin } from "@workers/http/auth";
import { requestContext } from "@workers/http/context";
import { consoleTeam } from "@workers/services/teams/console";
import { data } from "react-router";
import { AdminCrumbs } from "~/components/admin-crumbs";
import { formatDate } from "~/lib/format";
import type { Route } from "./+types/team";

// One team for the operator (issue 47 item 6): seats, members (those removed too), the pool, and the pool's ledger
// summed by member, a team API key counted as its own member. Read only. Admins only; everyone else gets the 404
// every admin page gives, and so does a team that does not exist.

export const meta: Route.MetaFunction = () => [{ title: "Admin · Team" }];

export const action = adminPageTakesNoForm;

export async function loader({ context, params }: Route.LoaderArgs) {
  requireAdmin(context);
  const { db } = context.get(requestContext);
  const team = await consoleTeam(db, params.teamId.slice(0, 64));
  if (!team) throw data(null, { status: 404 });
  return team;
}

export default function AdminTeam({ loaderData }: Route.ComponentProps) {
  const { team, members, seatsTaken, ledger, ledgerTotal } = loaderData;
  return (
    <div className="container-page py-8">
      <AdminCrumbs trail={[{ to: "/admin/teams", label: "Teams" }]} here={team.name} />
      <h1 className="mt-2 text-2xl font-bold">{team.name}</h1>
      <dl className="mt-4 grid max-w-md grid-cols-[1fr_auto] gap-x-6 gap-y-1 text-sm">
        <dt className="text-muted">Seats taken / paid</dt>
        <dd className="text-right tabular-nums" data-testid="team-seats">
          {seatsTaken} / {team.seats}
        </dd>
        <dt className="text-muted">Pool</dt>
        <dd className="text-right tabular-nums" data-testid="team-pool">
          {team.pool}
          {team.frozen ? " (frozen)" : ""}
        </dd>
        <dt className="text-muted">Ledger total</dt>
        <dd className="text-right tabular-nums">{ledgerTotal}</dd>
        <dt className="text-muted">Billing period since</dt>
        <dd className="text-right">{formatDate(team.periodStart)}</dd>
      </dl>
      <h2 className="mt-8 text-lg font-semibold">Members</h2>
      <table className="mt-2 w-full text-left text-sm">
        <thead>
          <tr>
            <th className="py-2">Member</th>
            <th>Role</th>
            <th className="text-right">Limit</th>
            <th>Removed</th>
          </tr>
        </thead>
        <tbody>
          {members.map((m) => (
            <tr key={m.userId} className="border-t border-line">
              <td className="py-2">{m.email ?? m.userId}</td>
              <td>{m.roleLabel}</td>
              <td className="text-right tabular-nums">{m.creditLimit ?? "—"}</td>
              <td>{m.removedAt !== null ? formatDate(m.removedAt) : ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2 className="mt-8 text-lg font-semibold">Ledger by member</h2>
      <table className="mt-2 w-full text-left text-sm" data-testid="team-ledger">
        <thead>
          <tr>
            <th className="py-2">Member</th>
            <th>Kind</th>
            <th className="text-right">Ledger sum</th>
            <th className="text-right">Jobs charged</th>
            <th className="text-right">Held now</th>
          </tr>
        </thead>
        <tbody>
          {ledger.map((l) => (
            <tr key={l.memberId ?? "billing"} className="border-t border-line">
              <td className="py-2">{l.label}</td>
              <td>{l.kind}</td>
              <td className="text-right tabular-nums">{l.sum}</td>
              <td className="text-right tabular-nums">{l.committed}</td>
              <td className="text-right tabular-nums">{l.held}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
