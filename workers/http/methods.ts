// Which methods a Hono app takes at a path, from its own route table, so an
// unknown method on a known path answers 405 with Allow instead of 404.

const cache = new WeakMap<object, { method: string; pattern: RegExp }[]>();

function toRegExp(path: string): RegExp {
  let out = "";
  for (const part of path.split("/").filter(Boolean)) {
    if (part === "*") {
      out += "(?:/.*)?";
      continue;
    }
    const param = /^:[A-Za-z0-9_]+(?:\{(.+)\})?(\?)?$/.exec(part);
    if (param) out += `${param[2] ? "(?:" : ""}/(?:${param[1] ?? "[^/]+"})${param[2] ? ")?" : ""}`;
    else out += `/${part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`;
  }
  return new RegExp(`^${out || "/"}/?$`);
}

export function allowedMethods(routes: readonly { method: string; path: string }[], path: string): string[] {
  let table = cache.get(routes);
  if (!table) {
    table = routes.filter((r) => r.method !== "ALL").map((r) => ({ method: r.method, pattern: toRegExp(r.path) }));
    cache.set(routes, table);
  }
  const methods = new Set(table.filter((r) => r.pattern.test(path)).map((r) => r.method));
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods];
}
