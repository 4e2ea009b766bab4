import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";

// Bundles the check Worker (workers/checker) the way a deploy does, for the workerd tests, which load it as a
// second Worker beside the app (vitest.config.ts). `npm start` and the e2e stack run it with wrangler dev instead.

const ROOT = resolve(import.meta.dirname, "..");
export const CHECKER_CONFIG = join(ROOT, "workers", "checker", "wrangler.toml");
/** The queue the app sends checks on (wrangler.toml's top level, which the tests and `npm start` use). */
export const CHECKER_QUEUE = "stagewise-structure-checks";

/** Bundles the check Worker under .wrangler/checker and returns the bundle's path. */
export function buildChecker(): string {
  const outdir = join(ROOT, ".wrangler", "checker");
  const run = spawnSync(
    join(ROOT, "node_modules", ".bin", "wrangler"),
    ["deploy", "-c", CHECKER_CONFIG, "--env=", "--dry-run", "--outdir", outdir],
    { cwd: ROOT, encoding: "utf8", env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" } },
  );
  if (run.status !== 0) throw new Error(`bundling the check Worker failed:\n${run.stdout}\n${run.stderr}`);
  return join(outdir, "index.js");
}
