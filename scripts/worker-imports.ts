import { existsSync } from "node:fs";
import { registerHooks } from "node:module";
import { fileURLToPath } from "node:url";

// Lets a Node script import the Worker's own modules (e.g. the provider adapter in scripts/provider-smoke.ts):
// they import by alias (~/, @workers/, @db/) and without file extensions, as the bundler resolves them.
// Used as `node --import ./scripts/worker-imports.ts --experimental-transform-types <script>`.

const ROOT = new URL("../", import.meta.url);
const ALIASES: [string, string][] = [
  ["~/", "app/"],
  ["@workers/", "workers/"],
  ["@db/", "db/"],
];

function withExtension(url: URL): string {
  if (/\.[cm]?[jt]sx?$/.test(url.pathname)) return url.href;
  for (const ext of [".ts", ".tsx", "/index.ts"]) {
    const candidate = new URL(url.href + ext);
    if (existsSync(fileURLToPath(candidate))) return candidate.href;
  }
  return url.href;
}

registerHooks({
  resolve(specifier, context, next) {
    for (const [alias, dir] of ALIASES) {
      if (specifier.startsWith(alias))
        return next(withExtension(new URL(dir + specifier.slice(alias.length), ROOT)), context);
    }
    const parent = context.parentURL;
    if (specifier.startsWith(".") && parent?.startsWith(ROOT.href) && !parent.includes("/node_modules/")) {
      return next(withExtension(new URL(specifier, parent)), context);
    }
    return next(specifier, context);
  },
});
