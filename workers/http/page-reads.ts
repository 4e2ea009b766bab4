import {
  type LibraryColumns,
  type LibraryPreload,
  type LibraryQuery,
  libraryReads,
} from "@workers/services/library-page";
import type { SessionReads } from "@workers/services/sessions";
import { createContext } from "react-router";
import { viewFromSearch } from "~/shared/library-view";

// Columns a page reads in the same D1 statement as the session's, so that a
// signed-in page costs one statement in one round trip (docs/decisions/0144-dashboard-reads-with-the-session.md).
// Only /dashboard has them: the library is the page people open most. Only on
// GET: after an action (a POST) the loaders must see what the action wrote.

const DASHBOARD_ROUTE = "routes/dashboard/dashboard";

/** The library's reads made with the session's, for the dashboard's loader; null when there were none. */
export const libraryPreload = createContext<LibraryPreload | null>(null);

/** Which view of the library this request's dashboard loader will show, if it runs. */
function dashboardQuery(request: Request): LibraryQuery | null {
  if (request.method !== "GET") return null;
  const url = new URL(request.url);
  if (url.pathname !== "/dashboard" && url.pathname !== "/dashboard.data") return null;
  // A client-side revalidation of other routes only (`_routes` without the dashboard): its loader does not run.
  const routes = url.searchParams.get("_routes");
  if (routes !== null && !routes.split(",").includes(DASHBOARD_ROUTE)) return null;
  return { view: viewFromSearch(url.searchParams), cursor: url.searchParams.get("cursor") };
}

/** The reads to add to the session's batch for this request, and where to put their results. */
export function pageReads(
  request: Request,
): { reads: SessionReads; keep: (values: LibraryColumns) => LibraryPreload } | null {
  const query = dashboardQuery(request);
  if (!query) return null;
  return { reads: libraryReads(query), keep: (values) => ({ query, values }) };
}
