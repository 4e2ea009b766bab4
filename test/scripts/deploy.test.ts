import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import {
  type Command,
  type DeployIO,
  type DeployOptions,
  deploy,
  ROOT,
  readTarget,
  shown,
} from "../../scripts/deploy.ts";
import { DEFAULT_CPU_MS, PROVIDER_ALLOWANCE } from "../../scripts/deploy-target.ts";

// The one deploy command (scripts/deploy.ts, README.md "Production"). The dry run is run as an operator runs it;
// the real run's order, its stops and its rollback advice are driven through fake commands (no network here).

const run = promisify(execFile);

describe("npm run deploy -- --dry-run", () => {
  test("prints every step of a staging deploy with its exact command, the bookmark and the rollback", async () => {
    const { stdout } = await run(process.execPath, ["scripts/deploy.ts", "--env", "staging", "--dry-run"], {
      cwd: ROOT,
      env: { ...process.env, HEALTH_PROBE_SECRET: "", PROVIDER_API_KEY: "", CLOUDFLARE_ENV: "" },
    });
    const steps = [
      "$ node scripts/check-migrations.ts",
      "$ CLOUDFLARE_ENV=staging NODE_ENV=production npx react-router build",
      "$ npx wrangler deployments status --json --env staging",
      "$ npx wrangler d1 time-travel info DB --json --env staging",
      "bookmark: <bookmark>",
      "$ CI=true npx wrangler d1 migrations apply DB --remote --env staging",
      "$ npx wrangler deploy --message",
      `$ curl -fsS -H "X-Health-Probe: $HEALTH_PROBE_SECRET" 'https://staging.stagewise.example.com/api/health?deep=1'`,
      "(skipped: PROVIDER_API_KEY is not set in this shell)",
      "code: npx wrangler rollback <version serving before>",
      "data: npx wrangler d1 time-travel restore DB --bookmark=<bookmark> --env staging",
    ];
    let at = 0;
    for (const s of steps) {
      const i = stdout.indexOf(s, at);
      expect(i, `"${s}" after position ${at} in:\n${stdout}`).toBeGreaterThan(-1);
      at = i + s.length;
    }
    // What the real run would refuse is said, and staging is never tagged.
    expect(stdout).toContain(
      "warning: [env.staging] in wrangler.toml still holds placeholders: d1_databases.database_id",
    );
    expect(stdout).toContain("warning: HEALTH_PROBE_SECRET is not set");
    expect(stdout).not.toContain("git tag");
  }, 60_000);

  test("a production dry run tags the release after the smoke checks and runs the provider check when a key is set", async () => {
    const lines: string[] = [];
    const io = fakeIO({}, lines);
    const code = await deploy(
      { ...(await options("production")), dryRun: true, vars: { PROVIDER_API_KEY: "k", HEALTH_PROBE_SECRET: "s" } },
      io,
    );
    expect(code).toBe(0);
    expect(io.ran).toEqual([]);
    const out = lines.join("\n");
    const smoke = out.indexOf("$ npm run provider:smoke -- --origin https://stagewise.example.com");
    const tag = out.indexOf("$ git tag -a release-20261126-101500-0123456789ab -m");
    const push = out.indexOf("$ git push origin release-20261126-101500-0123456789ab");
    expect(smoke).toBeGreaterThan(out.indexOf("/api/health?deep=1"));
    expect(tag).toBeGreaterThan(smoke);
    expect(push).toBeGreaterThan(tag);
  }, 30_000);
});

describe("a real deploy (fake commands)", () => {
  test("runs the steps in order, notes the version and the bookmark, and tags production after a good smoke check", async () => {
    const lines: string[] = [];
    const io = fakeIO({}, lines);
    expect(await deploy(await options("production"), io)).toBe(0);
    expect(io.ran.map((c) => c.argv.slice(0, 4).join(" "))).toEqual([
      "node scripts/check-migrations.ts",
      "react-router build",
      "wrangler deployments status --json",
      "wrangler d1 time-travel info",
      "wrangler d1 migrations apply",
      "wrangler deploy --message commit 0123456789ab",
      "wrangler deploy -c workers/checker/wrangler.toml",
      "git tag -a release-20261126-101500-0123456789ab",
      "git push origin release-20261126-101500-0123456789ab",
    ]);
    expect(io.ran[1]?.env).toEqual({ CLOUDFLARE_ENV: "production", NODE_ENV: "production" });
    expect(io.fetched).toEqual([{ url: "https://stagewise.example.com/api/health?deep=1", probe: "probe-secret" }]);
    const out = lines.join("\n");
    expect(out).toContain("bookmark: 00000085-0000024c-00004e2f-bookmark");
    expect(io.ran[7]?.argv.join(" ")).toContain(
      "D1 bookmark before its migrations: 00000085-0000024c-00004e2f-bookmark",
    );
    expect(out).toContain(
      "code: npx wrangler rollback version-before --message 'rollback of 0123456789ab' --env production",
    );
  });

  test("a failed migration stops before the deploy and prints the restore command with the bookmark", async () => {
    const lines: string[] = [];
    const io = fakeIO({ "wrangler d1 migrations apply": 1 }, lines);
    expect(await deploy(await options("staging"), io)).toBe(1);
    expect(io.ran.some((c) => c.argv[1] === "deploy")).toBe(false);
    expect(io.fetched).toEqual([]);
    const out = lines.join("\n");
    expect(out).toContain("✗ Step 5 (Apply the new migrations) failed");
    expect(out).toContain(
      "data: npx wrangler d1 time-travel restore DB --bookmark=00000085-0000024c-00004e2f-bookmark --env staging",
    );
  });

  test("a failed smoke check tags nothing and says how to roll the code back", async () => {
    const lines: string[] = [];
    const io = fakeIO({}, lines, 503);
    expect(await deploy(await options("production"), io)).toBe(1);
    expect(io.ran.some((c) => c.argv[0] === "git")).toBe(false);
    expect(io.fetched.length).toBe(6);
    expect(lines.join("\n")).toContain("code: npx wrangler rollback version-before");
  });

  test("a build of another environment is refused before anything remote is touched", async () => {
    const lines: string[] = [];
    const io = fakeIO({}, lines, 200, { targetEnvironment: "production", name: "stagewise" });
    expect(await deploy(await options("staging"), io)).toBe(1);
    expect(io.ran.map((c) => c.argv[0])).toEqual(["node", "react-router"]);
    expect(lines.join("\n")).toContain("targets production (stagewise), not staging (stagewise-staging)");
  });

  test("placeholders, a missing probe secret or a dirty tree for production refuse the deploy before any step", async () => {
    const lines: string[] = [];
    const io = fakeIO({}, lines);
    const o = await options("production");
    const code = await deploy(
      {
        ...o,
        target: { ...o.target, placeholders: ["d1_databases.database_id"] },
        git: { ...o.git, dirty: true },
        vars: {},
      },
      io,
    );
    expect(code).toBe(2);
    expect(io.ran).toEqual([]);
    const out = lines.join("\n");
    expect(out).toContain(
      "refused: [env.production] in wrangler.toml still holds placeholders: d1_databases.database_id",
    );
    expect(out).toContain("refused: HEALTH_PROBE_SECRET is not set");
    expect(out).toContain("refused: the working tree has changes");
  });
});

describe("what wrangler.toml must say of a deployed environment", () => {
  const committed = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
  /** wrangler.toml with `edit` applied, in a folder of its own (wrangler resolves paths from it). */
  function variant(edit: (toml: string) => string): string {
    const dir = mkdtempSync(join(tmpdir(), "stagewise-deploy-"));
    const path = join(dir, "wrangler.toml");
    const changed = edit(committed);
    expect(changed).not.toBe(committed);
    writeFileSync(path, changed);
    return path;
  }

  test("the committed file: a route (a placeholder, like the origin) and workers.dev off in both; shares within the allowance", async () => {
    for (const env of ["staging", "production"] as const) {
      const t = await readTarget(env);
      expect(t.refusals).toEqual([]);
      expect(t.placeholders).toContain("routes");
    }
  });

  test("an environment without a route is refused: on workers.dev the edge cache does nothing", async () => {
    const path = variant((t) =>
      t.replace('routes = [{ pattern = "staging.stagewise.example.com", custom_domain = true }]\n', ""),
    );
    const t = await readTarget("staging", path);
    expect(t.refusals).toEqual([expect.stringContaining("[env.staging] has no route")]);
    const lines: string[] = [];
    const io = fakeIO({}, lines);
    const o = await options("staging");
    expect(await deploy({ ...o, target: { ...t, placeholders: [] } }, io)).toBe(2);
    expect(io.ran).toEqual([]);
    expect(lines.join("\n")).toContain("refused: [env.staging] has no route");
  });

  test("workers_dev left unsaid is refused, and a route for another host than APP_ORIGIN's", async () => {
    const unsaid = variant((t) =>
      t.replace('workers_dev = false\nroutes = [{ pattern = "staging.', 'routes = [{ pattern = "staging.'),
    );
    expect((await readTarget("staging", unsaid)).refusals).toEqual([
      expect.stringContaining("[env.staging] must say workers_dev = false"),
    ]);
    const elsewhere = variant((t) =>
      t.replace('pattern = "staging.stagewise.example.com"', 'pattern = "other.example.com"'),
    );
    expect((await readTarget("staging", elsewhere)).refusals).toEqual([
      expect.stringContaining("no route for APP_ORIGIN's host staging.stagewise.example.com"),
    ]);
  });

  test("the CPU limit is the default, inherited by both environments; above it, or unsaid, is refused", async () => {
    for (const env of ["staging", "production"] as const) {
      const c = (await import("wrangler")).unstable_readConfig({ config: join(ROOT, "wrangler.toml"), env });
      expect(c.limits?.cpu_ms).toBe(DEFAULT_CPU_MS);
    }
    const paidMax = variant((t) => t.replace("cpu_ms = 30000", "cpu_ms = 300000"));
    expect((await readTarget("production", paidMax)).refusals).toEqual([
      expect.stringContaining("[env.production] limits.cpu_ms is 300000: at most the default 30000"),
    ]);
    const unsaid = variant((t) => t.replace("[limits]\ncpu_ms = 30000\n", ""));
    expect((await readTarget("staging", unsaid)).refusals).toEqual([
      expect.stringContaining("[env.staging] has no [limits] cpu_ms"),
    ]);
  });

  test("the environments' provider shares together above the provider's allowance are refused", async () => {
    const path = variant((t) => t.replace('PROVIDER_CAP = "4"', 'PROVIDER_CAP = "16"'));
    const refusal = `the environments' PROVIDER_CAP add up to 28 (staging 16, production 12), above the provider account's allowance of ${PROVIDER_ALLOWANCE}`;
    expect((await readTarget("staging", path)).refusals).toEqual([expect.stringContaining(refusal)]);
    expect((await readTarget("production", path)).refusals).toEqual([expect.stringContaining(refusal)]);
  });
});

test("commands are shown as typed: npx for the project's tools, variables first, shell quoting", () => {
  expect(shown({ argv: ["wrangler", "deploy", "--message", "it's"], env: { CI: "true" } })).toBe(
    `CI=true npx wrangler deploy --message 'it'\\''s'`,
  );
});

async function options(env: "staging" | "production"): Promise<DeployOptions> {
  const target = await readTarget(env);
  return {
    env,
    dryRun: false,
    // The committed wrangler.toml holds placeholders; these runs stand for a filled-in one.
    target: { ...target, placeholders: [] },
    git: { sha: "0123456789abcdef0123456789abcdef01234567", subject: "A change", dirty: false },
    vars: { HEALTH_PROBE_SECRET: "probe-secret" },
  };
}

function fakeIO(
  failing: Record<string, number>,
  lines: string[],
  healthStatus = 200,
  built?: { targetEnvironment?: string; name?: string },
): DeployIO & { ran: Command[]; fetched: { url: string; probe: string | undefined }[] } {
  const ran: Command[] = [];
  const fetched: { url: string; probe: string | undefined }[] = [];
  let lastBuildEnv = "";
  return {
    ran,
    fetched,
    async run(cmd) {
      ran.push(cmd);
      const line = cmd.argv.join(" ");
      const code = Object.entries(failing).find(([k]) => line.startsWith(k))?.[1] ?? 0;
      if (cmd.argv[0] === "react-router") lastBuildEnv = cmd.env?.CLOUDFLARE_ENV ?? "";
      let stdout = "";
      if (line.startsWith("wrangler deployments status")) {
        stdout = JSON.stringify({ versions: [{ version_id: "version-before", percentage: 100 }] });
      }
      if (line.startsWith("wrangler d1 time-travel info")) {
        stdout = JSON.stringify({ bookmark: "00000085-0000024c-00004e2f-bookmark" });
      }
      return { code, stdout, stderr: "" };
    },
    async fetch(url, init) {
      fetched.push({ url, probe: init.headers["X-Health-Probe"] });
      const body = JSON.stringify({ ok: healthStatus === 200, checks: {}, failing: [] });
      return { status: healthStatus, text: async () => body };
    },
    log: (line) => lines.push(line),
    now: () => new Date("2026-11-26T10:15:00.000Z"),
    sleep: async () => undefined,
    readBuiltConfig: () =>
      built ?? {
        targetEnvironment: lastBuildEnv,
        name: lastBuildEnv === "staging" ? "stagewise-staging" : "stagewise",
      },
    cleanBuild: () => undefined,
  };
}
