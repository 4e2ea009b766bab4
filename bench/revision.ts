import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ROOT } from "../scripts/stack.ts";

// Another revision of the product, ready to run beside the working tree (`npm run bench -- --against <rev>`,
// docs/decisions/0225-bench-against-a-revision.md): a detached git worktree of that commit under the system's temp
// folder, with its own install and its own production build. Both are kept by commit: a second comparison against
// the same revision reuses them (delete the folder, or pass --fresh, to start over).

/** Where prepared revisions are kept: one folder per commit. */
export const REVISIONS_DIR = process.env.BENCH_REVISIONS_DIR ?? join(tmpdir(), "stagewise-bench-revisions");

export interface PreparedRevision {
  /** What was asked for (a branch, a tag, a short hash). */
  asked: string;
  /** The full commit hash. */
  sha: string;
  /** Its subject line, for the report. */
  subject: string;
  /** The worktree's root: its own scripts/stack.ts starts its own stack from there. */
  root: string;
  /** False when its build's prerender of the public pages timed out (the app itself is built). */
  prerendered: boolean;
}

function git(args: string[], cwd = ROOT): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

/** Runs a command in `cwd`, its output appended to `log`; resolves with its exit code. */
function step(cmd: string, args: string[], cwd: string, log: string, env: NodeJS.ProcessEnv = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const out = (chunk: Buffer) => writeFileSync(log, chunk, { flag: "a" });
    writeFileSync(log, `\n$ ${cmd} ${args.join(" ")}\n`, { flag: "a" });
    const child = spawn(cmd, args, {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        WRANGLER_SEND_METRICS: "false",
        npm_config_audit: "false",
        npm_config_fund: "false",
        ...env,
      },
    });
    child.stdout.on("data", out);
    child.stderr.on("data", out);
    child.on("error", reject);
    child.on("exit", (code) => resolve(code ?? 1));
  });
}

/**
 * The revision's worktree with its dependencies installed and its production build made, each step done once per
 * commit (a marker file records it). `npm ci` first; a lockfile it refuses (older ones lack this machine's optional
 * platform entries: docs TOOLCHAIN) falls back to `npm install`, which may rewrite the worktree's lockfile only.
 */
export async function prepareRevision(asked: string, opts: { fresh?: boolean; say?: (line: string) => void } = {}) {
  const say = opts.say ?? ((line: string) => console.log(line));
  const sha = git(["rev-parse", "--verify", `${asked}^{commit}`]);
  const subject = git(["log", "-1", "--format=%s", sha]);
  const root = join(REVISIONS_DIR, sha);
  const log = join(REVISIONS_DIR, `${sha}.log`);
  mkdirSync(REVISIONS_DIR, { recursive: true });
  const marker = (name: string) => join(root, `.bench-${name}`);
  if (opts.fresh && existsSync(root)) {
    say(`  removing the kept worktree of ${sha.slice(0, 7)} (--fresh)`);
    git(["worktree", "remove", "--force", root]);
  }
  if (!existsSync(join(root, ".git"))) {
    // A folder left by an interrupted run, or a worktree git forgot: let git drop its record before adding again.
    git(["worktree", "prune"]);
    say(`  adding a worktree of ${sha.slice(0, 7)} at ${root}`);
    git(["worktree", "add", "--detach", "--force", root, sha]);
  }
  if (!existsSync(marker("installed"))) {
    say(`  installing ${sha.slice(0, 7)}'s dependencies (npm ci; log: ${log})`);
    let code = await step("npm", ["ci"], root, log);
    if (code !== 0) {
      say("  npm ci refused its lockfile; npm install instead");
      code = await step("npm", ["install"], root, log);
    }
    if (code !== 0) throw new Error(`could not install ${sha.slice(0, 7)}'s dependencies: see ${log}`);
    writeFileSync(marker("installed"), `${new Date().toISOString()}\n`);
  } else say(`  ${sha.slice(0, 7)}'s install is kept from an earlier run (${root})`);
  // Its production build, by its own scripts (the same command its `npm start` would run).
  if (!existsSync(marker("built")) || !existsSync(join(root, "build", "server", "wrangler.json"))) {
    say(`  building ${sha.slice(0, 7)} (react-router build)`);
    // NODE_ENV set as its buildApp sets it: an inherited NODE_ENV=test would bundle React's development renderer.
    let code = 1;
    // Its prerender asks its own pages with a 10 s timeout that a loaded machine can miss: up to three tries.
    for (let attempt = 1; attempt <= 3 && code !== 0; attempt++) {
      if (attempt > 1) say(`  the build failed; try ${attempt} of 3`);
      code = await step("npm", ["run", "build"], root, log, { NODE_ENV: "production" });
    }
    if (code !== 0) {
      // The app and its client assets are built before the prerender runs; only the public pages' static files are
      // missing then. The job, credit and API modules never load them; ssr, bundle and lighthouse do. So a build
      // whose prerender alone timed out is kept, loudly, and the report says so (prerendered: false).
      const prerenderOnly =
        readFileSync(log, "utf8").split("\n$ ").at(-1)?.includes("Prerender: Request failed") &&
        existsSync(join(root, "build", "server", "wrangler.json"));
      if (!prerenderOnly) throw new Error(`could not build ${sha.slice(0, 7)}: see ${log}`);
      say(
        `  WARNING: ${sha.slice(0, 7)}'s prerender timed out three times (a loaded machine); its app is built, its public ` +
          "pages' static files are not: the ssr, bundle and lighthouse modules would measure the wrong / (see the log)",
      );
      writeFileSync(marker("no-prerender"), `${new Date().toISOString()}\n`);
    } else rmSync(marker("no-prerender"), { force: true });
    // As its own buildApp does: a build never carries local values.
    rmSync(join(root, "build", "server", ".dev.vars"), { force: true });
    writeFileSync(marker("built"), `${new Date().toISOString()}\n`);
  } else say(`  ${sha.slice(0, 7)}'s build is kept from an earlier run`);
  return { asked, sha, subject, root, prerendered: !existsSync(marker("no-prerender")) } satisfies PreparedRevision;
}

/** The working tree's own commit and whether it has changes beyond it, for the report. */
export function workingTreeName(): string {
  const sha = git(["rev-parse", "--short", "HEAD"]);
  const dirty = git(["status", "--porcelain", "--untracked-files=no"]).length > 0;
  return `working tree (${sha}${dirty ? " + uncommitted changes" : ""})`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // `node bench/revision.ts <rev>`: prepares a revision ahead of a comparison (what --against does first).
  const rev = process.argv[2];
  if (!rev) throw new Error("usage: node bench/revision.ts <revision>");
  console.log(await prepareRevision(rev, { fresh: process.argv.includes("--fresh") }));
}
