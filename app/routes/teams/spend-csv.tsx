import { requireUser } from "@workers/http/auth";
import { getDeps } from "@workers/http/context";
import { failureData } from "@workers/http/result";
import { csvDownload } from "@workers/services/teams/record";
import { readTeamSpend, spendCsv } from "@workers/services/teams/spend";
import type { Route } from "./+types/spend-csv";

// What the team's pool paid for, per member and listing, as CSV (/teams/:teamId/spend.csv?from=YYYY-MM-DD&to=…):
// owner and team admins only (an agent 403, anyone else 404). docs/decisions/0312-team-spend-export.md

export async function loader({ request, context, params }: Route.LoaderArgs) {
  const user = requireUser(context, request);
  const deps = getDeps(context);
  const res = await readTeamSpend(deps.db, params.teamId.slice(0, 64), user.id, new URL(request.url).searchParams);
  if (!res.ok) throw failureData(res);
  return csvDownload(spendCsv(res.lines), `team-spend-${res.range.from}-to-${res.range.to}.csv`);
}
