import { requireUser } from "@workers/http/auth";
import { getDeps } from "@workers/http/context";
import { failureData } from "@workers/http/result";
import { csvDownload, readTeamRecord, recordCsv } from "@workers/services/teams/record";
import type { Route } from "./+types/record-csv";

// The broker's record as CSV for a date range (/teams/:teamId/record.csv?from=YYYY-MM-DD&to=YYYY-MM-DD&folder=…):
// owner and team admins only (an agent 403, anyone else 404). docs/decisions/0285-the-brokers-record.md

export async function loader({ request, context, params }: Route.LoaderArgs) {
  const user = requireUser(context, request);
  const deps = getDeps(context);
  const url = new URL(request.url);
  const res = await readTeamRecord(deps.db, params.teamId.slice(0, 64), user.id, url.searchParams, {
    csv: true,
    now: deps.clock(),
  });
  if (!res.ok) throw failureData(res);
  const name = `broker-record-${res.range.from}-to-${res.range.to}.csv`;
  return csvDownload(recordCsv(res.rows), name);
}
