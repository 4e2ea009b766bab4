import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { EDITED_MARK } from "./react-dom-strings.ts";

// The Worker's upload size against its budget (docs/decisions/0181-worker-bundle-budget.md): `wrangler deploy
// --dry-run` on the built Worker (build/server/wrangler.json, what `npm run deploy` uploads) bundles it as a deploy
// would and prints the upload's size and its gzip size; the gzip size is what Cloudflare's Worker size limit counts.
// Run by `npm test` after the end-to-end tests (which build); `--build` builds first, and so does a checkout that has
// no build yet.
//
//   node scripts/check-bundle.ts [--build]

/**
 * Gzip KiB of the Worker upload: 797.42 on 2026-11-26 with error reporting (issue 36 part 1; @sentry/cloudflare is
 * 37.10 of it, ADR 0181's follow-up), plus a margin of about 10 %.
 */
export const WORKER_GZIP_BUDGET_KIB = 880;

const ROOT = resolve(import.meta.dirname, "..");

/** The sizes wrangler prints: `Total Upload: 3394.26 KiB / gzip: 717.66 KiB`. */
export function parseUploadSize(output: string): { kib: number; gzipKib: number } | null {
  const m = /Total Upload:\s*([\d.]+)\s*KiB\s*\/\s*gzip:\s*([\d.]+)\s*KiB/.exec(output);
  return m ? { kib: Number(m[1]), gzipKib: Number(m[2]) } : null;
}

export function judge(size: { kib: number; gzipKib: number }, budgetKib = WORKER_GZIP_BUDGET_KIB) {
  const ok = size.gzipKib <= budgetKib;
  const line = `Worker upload ${size.kib.toFixed(2)} KiB, gzip ${size.gzipKib.toFixed(2)} KiB: ${ok ? "within" : "OVER"} the budget of ${budgetKib} KiB gzip`;
  return {
    ok,
    line: ok
      ? line
      : `${line}. Find what grew (npx wrangler deploy --dry-run -c build/server/wrangler.json --outdir /tmp/w lists each module) and cut it, or raise WORKER_GZIP_BUDGET_KIB in scripts/check-bundle.ts with the reason in ADR 0181.`,
  };
}

/**
 * Whether the built server holds react-dom's writes as scripts/react-dom-strings.ts edits them (ADR 0333): the plugin
 * matches one module by its file name, so an import that stops loading that module would drop the edit silently.
 */
export function serverGathersWrites(serverDir: string): boolean {
  const files = readdirSync(serverDir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".js"));
  return files.some((f) => readFileSync(join(serverDir, f), "utf8").includes(EDITED_MARK));
}

function bin(name: string): string {
  return join(ROOT, "node_modules", ".bin", name);
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { build: { type: "boolean", default: false } } });
  // The top-level (local) environment: the bundle is the same code in every environment.
  const env: NodeJS.ProcessEnv = { ...process.env, WRANGLER_SEND_METRICS: "false", NODE_ENV: "production" };
  delete env.CLOUDFLARE_ENV;
  if (values.build || !existsSync(join(ROOT, "build", "server", "wrangler.json"))) {
    console.log("bundle: building…");
    const built = spawnSync(bin("react-router"), ["build"], { cwd: ROOT, env, stdio: ["ignore", "ignore", "inherit"] });
    if (built.status !== 0) process.exit(built.status ?? 1);
  }
  if (!serverGathersWrites(join(ROOT, "build", "server"))) {
    console.error(
      "bundle: the server build lacks react-dom's gathered writes (scripts/react-dom-strings.ts, ADR 0333)",
    );
    process.exit(1);
  }
  const outdir = mkdtempSync(join(tmpdir(), "stagewise-bundle-"));
  const res = spawnSync(
    bin("wrangler"),
    ["deploy", "--dry-run", "-c", "build/server/wrangler.json", "--outdir", outdir],
    {
      cwd: ROOT,
      env,
      encoding: "utf8",
    },
  );
  rmSync(outdir, { recursive: true, force: true });
  const output = `${res.stdout}${res.stderr}`;
  const size = parseUploadSize(output);
  if (res.status !== 0 || !size) {
    console.error(`bundle: wrangler deploy --dry-run failed or printed no size (exit ${res.status}):\n${output}`);
    process.exit(1);
  }
  const { ok, line } = judge(size);
  (ok ? console.log : console.error)(`bundle: ${line}`);
  process.exit(ok ? 0 : 1);
}
