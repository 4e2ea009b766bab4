// Every route the Worker answers, read from the apps themselves: the Hono
// app's route table and the React Router build's route manifest (every page,
// and whether it has an action or a loader). The hostile-input suite asks for
// it through GET /api/dev/routes (dev tools only), so a route added later
// cannot be missed: a page that takes no form is attacked with the methods it
// refuses.

export interface RouteEntry {
  app: "api" | "page";
  method: string;
  path: string;
  /** React Router only: the route id, and whether it has an action and a loader. */
  id?: string;
  action?: boolean;
  loader?: boolean;
}

interface ManifestRoute {
  id: string;
  parentId?: string;
  path?: string;
  index?: boolean;
  module: { action?: unknown; loader?: unknown };
}

function fullPath(routes: Record<string, ManifestRoute | undefined>, route: ManifestRoute): string {
  const parts: string[] = [];
  for (let r: ManifestRoute | undefined = route; r; r = r.parentId ? routes[r.parentId] : undefined) {
    if (r.path) parts.unshift(r.path.replace(/^\/|\/$/g, ""));
  }
  return `/${parts.filter(Boolean).join("/")}`;
}

export async function routeTable(apiRoutes: readonly { method: string; path: string }[]): Promise<RouteEntry[]> {
  const seen = new Set<string>();
  const out: RouteEntry[] = [];
  for (const r of apiRoutes) {
    if (r.method === "ALL" || r.path.endsWith("/*")) continue;
    const key = `${r.method} ${r.path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ app: "api", method: r.method, path: r.path });
  }
  const build = (await import("virtual:react-router/server-build")) as unknown as {
    routes: Record<string, ManifestRoute | undefined>;
  };
  for (const route of Object.values(build.routes)) {
    if (!route || route.id === "root") continue;
    const action = typeof route.module.action === "function";
    const loader = typeof route.module.loader === "function";
    // A layout without a path of its own and without data is not an address anyone can ask for.
    if (!action && !loader && !route.path && !route.index) continue;
    out.push({
      app: "page",
      method: action ? "POST" : "GET",
      path: fullPath(build.routes, route),
      id: route.id,
      action,
      loader,
    });
  }
  return out;
}
