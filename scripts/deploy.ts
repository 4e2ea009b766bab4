import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

// `npm run deploy -- --env staging|production [--dry-run] [--provider-only stage,sky]`: the one way Stagewise is
// deployed (README.md, "Production"). In order, stopping at the first failure:
//
//   1. the migration check against the release that is running (scripts/check-migrations.ts, ADR 0180);
//   2. the build, with CLOUDFLARE_ENV set: the Vite plugin fixes the environment at build time, so the build
//      itself is of that environment, and `wrangler deploy --env` refuses a build of another one;
//   3. the Worker version serving now (the code rollback target) and a D1 Time Travel bookmark (the data one);
//   4. the migrations, the deploy;
//   5. the smoke checks: /api/health?deep=1 with the probe secret, and the provider smoke check when
//      PROVIDER_API_KEY is set in this shell;
//   6. production only, after a good smoke check: the commit is tagged release-<UTC date>-<sha> and the tag pushed,
//      which is what the migration check compares the next migrations with.
//
// Before any step it refuses an environment that still holds placeholders, has no route or leaves workers.dev on,
// or whose provider share would take the environments above the provider's allowance (scripts/deploy-target.ts).
//
// --dry-run prints each step with the exact command, needing no network, account or secret. A failure prints how
// to roll back: the code to the version noted in step 3, the database to the bookmark.

import { type DeployEnv, ENVIRONMENTS, ROOT, readTarget, type Target } from "./deploy-target.ts";

export { type DeployEnv, ENVIRONMENTS, ROOT, readTarget, type Target };
/** Where the smoke check's deep probe looks; the answer must be 200 with ok: true. */
export const HEALTH_PATH = "/api/health?deep=1";

export interface Command {
  /** The program and its arguments, run without a shell. */
  argv: string[];
  /** Variables set for this command only (shown before it). */
  env?: Record<string, string>;
  /** Whether its standard output is read (JSON) rather than shown. */
  capture?: boolean;
}

/** Quoted for a POSIX shell; a `<placeholder>` of the dry run is left as it is. */
const quote = (s: string) =>
  /^[\w@%+=:,./-]+$/.test(s) || /^(--[\w-]+=)?<[\w -]+>$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
/** The command as a person would type it in this folder. */
export function shown(cmd: Command): string {
  const [program = "", ...args] = cmd.argv;
  const npx = program === "wrangler" || program === "react-router" ? ["npx", program] : [program];
  const vars = Object.entries(cmd.env ?? {}).map(([k, v]) => `${k}=${quote(v)}`);
  return [...vars, ...npx, ...args.map(quote)].join(" ");
}

export interface DeployIO {
  run(cmd: Command): Promise<{ code: number; stdout: string; stderr: string }>;
  fetch(url: string, init: { headers: Record<string, string> }): Promise<{ status: number; text(): Promise<string> }>;
  log(line: string): void;
  now(): Date;
  sleep(ms: number): Promise<void>;
  /** The build's flattened configuration (build/server/wrangler.json), or null when there is none. */
  readBuiltConfig(): { targetEnvironment?: string; name?: string } | null;
  /** Removes local values the Vite plugin copies into the build (.dev.vars). */
  cleanBuild(): void;
}

export interface DeployOptions {
  env: DeployEnv;
  dryRun: boolean;
  target: Target;
  git: { sha: string; subject: string; dirty: boolean };
  /** This shell's variables: HEALTH_PROBE_SECRET, PROVIDER_API_KEY, CLOUDFLARE_ENV. */
  vars: Record<string, string | undefined>;
  providerOnly?: string;
}

/** release-<UTC yyyymmdd-hhmmss>-<short sha>: sortable by name, and naming the commit. */
export function releaseTag(now: Date, sha: string): string {
  const t = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `release-${t}-${sha.slice(0, 12)}`;
}

const wrangler = (env: DeployEnv, ...args: string[]): string[] => ["wrangler", ...args, "--env", env];

/** The rollback commands, as far as the deploy got. */
function rollbackLines(o: DeployOptions, s: { previousVersion?: string | null; bookmark?: string }): string[] {
  const lines: string[] = [];
  if (s.previousVersion === undefined) lines.push("  code: (no version noted yet)");
  else if (s.previousVersion === null) lines.push("  code: first deploy of this Worker, there is no earlier version");
  else {
    lines.push(
      `  code: ${shown({ argv: wrangler(o.env, "rollback", s.previousVersion, "--message", `rollback of ${o.git.sha.slice(0, 12)}`) })}`,
    );
  }
  if (s.bookmark) {
    lines.push(
      `  data: ${shown({ argv: wrangler(o.env, "d1", "time-travel", "restore", o.target.database.binding, `--bookmark=${s.bookmark}`) })}`,
      "        (undoes every write since the bookmark, not only the migrations: restore only when a migration",
      "        itself is at fault; migrations are expand-only, so the previous code runs on the new schema)",
    );
  } else lines.push("  data: (no bookmark taken yet: the database was not changed)");
  return lines;
}

class StepFailed extends Error {}

/** Runs (or, with dryRun, prints) every step. Answers the process's exit code. */
export async function deploy(o: DeployOptions, io: DeployIO): Promise<number> {
  const { env, target, dryRun } = o;
  const log = io.log;
  // A dry run shows where the values read during a real one go.
  const state: { previousVersion?: string | null; bookmark?: string } = dryRun
    ? { previousVersion: "<version serving before>", bookmark: "<bookmark>" }
    : {};
  const problems: string[] = [];
  if (o.vars.CLOUDFLARE_ENV && o.vars.CLOUDFLARE_ENV !== env) {
    problems.push(`CLOUDFLARE_ENV is "${o.vars.CLOUDFLARE_ENV}" in this shell but --env is "${env}"`);
  }
  if (target.placeholders.length > 0) {
    problems.push(
      `[env.${env}] in wrangler.toml still holds placeholders: ${target.placeholders.join(", ")} (README.md, "First deploy")`,
    );
  }
  for (const r of target.refusals) problems.push(r);
  if (!o.vars.HEALTH_PROBE_SECRET) {
    problems.push("HEALTH_PROBE_SECRET is not set in this shell: the smoke check could not run after the deploy");
  }
  if (env === "production" && o.git.dirty) {
    problems.push("the working tree has changes: a production deploy ships a commit, which its release tag names");
  }

  log(`${dryRun ? "Dry run: the steps of" : "Deploying"} ${target.worker} (--env ${env}) at ${target.origin}`);
  log(`  commit ${o.git.sha.slice(0, 12)} ${o.git.subject}${o.git.dirty ? " (with uncommitted changes)" : ""}`);
  log(`  D1 ${target.database.name} (${target.database.id}), R2 ${target.bucket}`);
  for (const p of problems) log(`  ${dryRun ? "warning" : "refused"}: ${p}`);
  if (problems.length > 0 && !dryRun) return 2;

  const tag = releaseTag(io.now(), o.git.sha);
  const health = `${target.origin}${HEALTH_PATH}`;
  let n = 0;
  const step = async (title: string, what: string, act: () => Promise<void>) => {
    n += 1;
    log(`\n${n}. ${title}\n   $ ${what}`);
    if (dryRun) return;
    try {
      await act();
    } catch (err) {
      log(`\n✗ Step ${n} (${title}) failed: ${(err as Error).message}`);
      throw new StepFailed();
    }
  };
  const exec = async (cmd: Command): Promise<string> => {
    const { code, stdout } = await io.run(cmd);
    if (code !== 0) throw new Error(`${shown(cmd)} exited with ${code}`);
    return stdout;
  };
  const cmd = (c: Command) => [shown(c), () => exec(c).then(() => undefined)] as const;

  try {
    await step(
      "Check that no new migration breaks the running release",
      ...cmd({ argv: ["node", "scripts/check-migrations.ts"] }),
    );
    const build: Command = {
      argv: ["react-router", "build"],
      env: { CLOUDFLARE_ENV: env, NODE_ENV: "production" },
    };
    await step(`Build for ${env}`, shown(build), async () => {
      await exec(build);
      io.cleanBuild();
      const built = io.readBuiltConfig();
      if (built?.targetEnvironment !== env || built.name !== target.worker) {
        throw new Error(
          `build/server/wrangler.json targets ${built?.targetEnvironment ?? "no environment"} (${built?.name}), not ${env} (${target.worker})`,
        );
      }
    });
    const status: Command = { argv: wrangler(env, "deployments", "status", "--json"), capture: true };
    await step("Note the Worker version serving now (the code rollback target)", shown(status), async () => {
      const { code, stdout, stderr } = await io.run(status);
      if (code !== 0) {
        // A Worker never deployed has no deployment to read; anything else (no login, no network) stops here.
        if (/has no deployments|does not exist|10007/.test(stderr + stdout)) state.previousVersion = null;
        else throw new Error(`${shown(status)} exited with ${code}`);
      } else {
        const versions = (JSON.parse(stdout) as { versions?: { version_id: string; percentage: number }[] }).versions;
        state.previousVersion =
          [...(versions ?? [])].sort((a, b) => b.percentage - a.percentage)[0]?.version_id ?? null;
      }
      log(`   serving now: ${state.previousVersion ?? "nothing (first deploy)"}`);
    });
    const info: Command = {
      argv: wrangler(env, "d1", "time-travel", "info", target.database.binding, "--json"),
      capture: true,
    };
    await step("Take a D1 Time Travel bookmark (the data rollback target)", shown(info), async () => {
      const parsed = JSON.parse(await exec(info)) as { bookmark?: string };
      if (!parsed.bookmark) throw new Error("wrangler answered no bookmark");
      state.bookmark = parsed.bookmark;
      log(`   bookmark: ${parsed.bookmark}`);
    });
    if (dryRun) log(`   bookmark: ${state.bookmark} (printed here, then in the tag and the rollback command)`);
    await step(
      "Apply the new migrations",
      ...cmd({
        argv: wrangler(env, "d1", "migrations", "apply", target.database.binding, "--remote"),
        env: { CI: "true" },
      }),
    );
    await step(
      "Deploy the build",
      ...cmd({
        argv: wrangler(env, "deploy", "--message", `commit ${o.git.sha.slice(0, 12)}`),
      }),
    );
    // The check Worker, the structure check's queue consumer (workers/checker, ADR 0188): after the app, whose
    // UserObject it answers. Until it runs, a job's check times out and its result is delivered unchecked.
    await step(
      "Deploy the check Worker",
      ...cmd({
        argv: wrangler(
          env,
          "deploy",
          "-c",
          "workers/checker/wrangler.toml",
          "--message",
          `commit ${o.git.sha.slice(0, 12)}`,
        ),
      }),
    );
    await step(
      "Smoke check: the deep health probe",
      `curl -fsS -H "X-Health-Probe: $HEALTH_PROBE_SECRET" ${quote(health)}`,
      async () => {
        // A new version reaches every location within seconds; a few tries cover that.
        let last = "";
        for (let attempt = 1; attempt <= 6; attempt++) {
          try {
            const res = await io.fetch(health, { headers: { "X-Health-Probe": o.vars.HEALTH_PROBE_SECRET ?? "" } });
            const body = await res.text();
            if (res.status === 200 && (JSON.parse(body) as { ok?: boolean }).ok === true) {
              log(`   ${body}`);
              return;
            }
            last = `${res.status} ${body.slice(0, 300)}`;
          } catch (err) {
            last = String(err);
          }
          if (attempt < 6) await io.sleep(5_000);
        }
        throw new Error(`${health} did not answer 200 with ok: true (last: ${last})`);
      },
    );
    const only = o.providerOnly ? ["--only", o.providerOnly] : [];
    const smoke: Command = { argv: ["npm", "run", "provider:smoke", "--", "--origin", target.origin, ...only] };
    if (o.vars.PROVIDER_API_KEY) await step("Smoke check: the AI provider", ...cmd(smoke));
    else {
      n += 1;
      log(
        `\n${n}. Smoke check: the AI provider (skipped: PROVIDER_API_KEY is not set in this shell)\n   $ ${shown(smoke)}`,
      );
    }
    if (env === "production") {
      const message =
        `Production deploy of ${o.git.sha}; D1 bookmark before its migrations: ${state.bookmark}; ` +
        `Worker version it replaced: ${state.previousVersion ?? "none"}`;
      await step("Tag the release", ...cmd({ argv: ["git", "tag", "-a", tag, "-m", message] }));
      await step(
        "Push the tag (the next migration check compares with it)",
        ...cmd({ argv: ["git", "push", "origin", tag] }),
      );
    }
  } catch (err) {
    if (!(err instanceof StepFailed)) throw err;
    log("\nStopped. To roll back:");
    for (const line of rollbackLines(o, state)) log(line);
    return 1;
  }
  log(`\n${dryRun ? "Rollback, should it be needed" : `Deployed ${target.worker}. Rollback, should it be needed`}:`);
  for (const line of rollbackLines(
    o,
    dryRun ? { previousVersion: "<version serving before>", bookmark: "<bookmark>" } : state,
  )) {
    log(line);
  }
  return 0;
}

/** Runs a command from this folder: wrangler and react-router from node_modules, the rest from PATH. */
function runCommand(cmd: Command): Promise<{ code: number; stdout: string; stderr: string }> {
  const [program = "", ...args] = cmd.argv;
  const local = join(ROOT, "node_modules", ".bin", program);
  const file = program === "node" ? process.execPath : existsSync(local) ? local : program;
  return new Promise((done) => {
    const child = spawn(file, args, {
      cwd: ROOT,
      stdio: ["inherit", cmd.capture ? "pipe" : "inherit", cmd.capture ? "pipe" : "inherit"],
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", ...cmd.env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => {
      stdout += d;
    });
    // A read command's messages are shown as well as read (a failure's reason is in them).
    child.stderr?.on("data", (d) => {
      stderr += d;
      process.stderr.write(d);
    });
    child.on("error", (err) => done({ code: 127, stdout, stderr: String(err) }));
    child.on("exit", (code) => done({ code: code ?? 1, stdout, stderr }));
  });
}

const USAGE = "Usage: npm run deploy -- --env staging|production [--dry-run] [--provider-only stage,sky,…]";

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      env: { type: "string" },
      "dry-run": { type: "boolean", default: false },
      "provider-only": { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!ENVIRONMENTS.includes(values.env as DeployEnv)) {
    console.error(`--env must be staging or production.\n${USAGE}`);
    return 2;
  }
  const env = values.env as DeployEnv;
  const { execFileSync } = await import("node:child_process");
  const g = (...args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" }).trim();
  const target = await readTarget(env);
  return deploy(
    {
      env,
      dryRun: values["dry-run"],
      target,
      git: {
        sha: g("rev-parse", "HEAD"),
        subject: g("log", "-1", "--format=%s"),
        dirty: g("status", "--porcelain") !== "",
      },
      vars: process.env,
      providerOnly: values["provider-only"],
    },
    {
      run: runCommand,
      fetch: (url, init) => fetch(url, init),
      log: (line) => console.log(line),
      now: () => new Date(),
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
      readBuiltConfig: () => {
        const path = join(ROOT, "build", "server", "wrangler.json");
        return existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : null;
      },
      cleanBuild: () => {
        for (const f of [".dev.vars", `.dev.vars.${env}`, ".env", `.env.${env}`]) {
          rmSync(join(ROOT, "build", "server", f), { force: true });
        }
      },
    },
  );
}

if (import.meta.main) process.exit(await main());
