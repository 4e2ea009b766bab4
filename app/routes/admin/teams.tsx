import { adminPageTakesNoForm, requireAdmin } from "@workers/http/auth";
import { requestContext } from "@workers/http/context";
import { consoleTeams } from "@workers/services/teams/console";
import { Link } from "react-router";
import { AdminCrumbs } from "~/components/admin-crumbs";
import { formatDate } from "~/lib/format";
import type { Route } from "./+types/teams";

// The operator's list of teams (issue 47 item 6): seats taken of seats paid, and the pool. Read only. Admins only;
// everyone else gets the 404 every admin page gives.

export const meta: Route.MetaFunction = () => [{ title: "Admin · Teams" }];

export const action = adminPageTakesNoForm;

export async function loader({ context }: Route.LoaderArgs) {
  requireAdmin(context);
  const { db } = context.get(requestContext);
  return { teams: await consoleTeams(db) };
}

export default function AdminTeams({ loaderData }: Route.ComponentProps) {
  const { teams } = loaderData;
  return (
    <div className="container-page py-8">
      <AdminCrumbs here="Teams" />
      <h1 className="mt-2 text-2xl font-bold">Teams</h1>
      {teams.length === 0 ? (
        <p className="mt-4 text-muted">No team yet.</p>
      ) : (
        <table className="mt-6 w-full text-left text-sm" data-testid="admin-teams">
          <thead>
            <tr>
              <th className="py-2">Team</th>
              <th>Owner</th>
              <th className="text-right">Seats taken / paid</th>
              <th className="text-right">Pool</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {teams.map((t) => (
              <tr key={t.id} className="border-t border-line">
                <td className="py-2">
                  <Link to={`/admin/teams/${t.id}`} className="text-brand-700 underline">
                    {t.name}
                  </Link>
                  {t.frozen ? <span className="ml-2 text-amber-800">frozen</span> : null}
                </td>
                <td>{t.owner ?? "—"}</td>
                <td className="text-right tabular-nums">
                  {t.members} / {t.seats}
                </td>
                <td className="text-right tabular-nums">{t.pool}</td>
                <td>{formatDate(t.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
