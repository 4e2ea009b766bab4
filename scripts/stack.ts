import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, createWriteStream, existsSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { type EmulatorPorts, startEmulators } from "../emulators/index.ts";
import { CHECKER_CONFIG } from "./checker-build.ts";

// Starts the whole product locally: production build under local workerd
// (wrangler dev on the built worker), local D1/R2/Durable Objects persisted in
// one folder, migrations applied, emulators, demo users seeded. Used by
// `npm start` (scripts/start.ts) and by the end-to-end tests, so both run the
// same way.

export const ROOT = resolve(import.meta.dirname, "..");

export function assertNode24(): void {
  if (!process.version.startsWith("v24.")) {
    throw new Error(
      `This project runs on Node 24 (found ${process.version}). Run it through npm (npm start, npm test), which uses the node package installed in node_modules.`,
    );
  }
}

export function parseEnvFile(path: string): Record<string, string> {
  const vars: Record<string, string> = {};
  if (!existsSync(path)) return vars;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)\s*$/.exec(line);
    if (!m?.[1]) continue;
    vars[m[1]] = (m[2] ?? "").replace(/^"(.*)"$/, "$1");
  }
  return vars;
}

/** Makes .dev.vars from the committed example when a fresh checkout has none. */
export function ensureDevVars(): string {
  const path = join(ROOT, ".dev.vars");
  if (!existsSync(path)) copyFileSync(join(ROOT, ".dev.vars.example"), path);
  return path;
}

function bin(name: string): string {
  return join(ROOT, "node_modules", ".bin", name);
}

/**
 * What every wrangler of the stack runs with: no metrics sent, and no fetch of the `Request.cf` placeholder from
 * workers.cloudflare.com (miniflare's CLOUDFLARE_CF_FETCH_ENABLED), so a start makes no request off the machine and,
 * offline, prints no DNS error; every request gets miniflare's fixed placeholder, as it did when the fetch failed.
 */
export const OFFLINE_ENV = { WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };

export function run(
  cmd: string,
  args: string[],
  opts: { quiet?: boolean; env?: NodeJS.ProcessEnv } = {},
): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(bin(cmd), args, {
      cwd: ROOT,
      stdio: opts.quiet ? ["ignore", "pipe", "pipe"] : "inherit",
      env: { ...process.env, ...OFFLINE_ENV, ...opts.env },
    });
    let output = "";
    child.stdout?.on("data", (d) => {
      output += d;
    });
    child.stderr?.on("data", (d) => {
      output += d;
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`${cmd} ${args.join(" ")} exited with ${code}\n${output}`));
    });
  });
}

export async function buildApp(quiet = false): Promise<void> {
  // NODE_ENV is set explicitly: Vite keeps an inherited one, and Vitest (the e2e suite builds through here) sets
  // NODE_ENV=test, which made every test build bundle React's development server renderer (about 7x slower).
  // React Router's prerender gives each page's first request 10 s, not configurable; on a loaded machine the built
  // Worker's cold start can pass that. One more try, only for that failure: any other error is the build's own.
  for (let attempt = 1; ; attempt++) {
    try {
      await run("react-router", ["build"], { quiet, env: { NODE_ENV: "production" } });
      break;
    } catch (err) {
      if (attempt >= 2 || !/Prerender: Request failed .* timeout/.test(String(err))) throw err;
      console.warn("react-router build: the prerender's request timed out (a loaded machine?); building once more");
    }
  }
  // The Cloudflare plugin copies .dev.vars into the build; the start command
  // passes it explicitly instead, and a build must never carry local values.
  rmSync(join(ROOT, "build", "server", ".dev.vars"), { force: true });
}

export async function applyMigrations(persistDir: string, quiet = false): Promise<void> {
  await run("wrangler", ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persistDir], {
    quiet,
    env: { CI: "true" },
  });
}

/**
 * Resolves once `url` answers with a status `accept` takes (any answer by default); rejects when `proc` exits first
 * or `timeoutMs` pass.
 */
async function waitForAnswer(
  url: string,
  proc: ChildProcess,
  timeoutMs: number,
  what: string,
  accept: (res: Response) => boolean = () => true,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`${what} exited with ${proc.exitCode} before answering`);
    try {
      const res = await fetch(url);
      last = `${res.status} ${await res.text()}`;
      if (accept(res)) return;
    } catch (err) {
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} did not answer at ${url} within ${timeoutMs} ms (last: ${last.slice(0, 300)})`);
}

/**
 * Fails fast when another process already listens on the port: otherwise the
 * health check passes against that process and the tests run against it.
 */
export function assertPortFree(port: number): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const probe = createServer();
    probe.once("error", () => reject(new Error(`Port ${port} is already in use; choose another (E2E_PORT / PORT).`)));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolvePromise()));
  });
}

/** Stops a child process: SIGTERM, then SIGKILL after 5 s. */
async function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once("exit", r));
  proc.kill("SIGTERM");
  const timer = setTimeout(() => proc.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

/** A port nobody listens on right now, chosen by the system. */
function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolvePromise(port));
    });
  });
}

export interface StackOptions {
  port: number;
  emulatorPortBase: number;
  persistDir: string;
  build: boolean;
  /** Where wrangler's output goes; "inherit" prints it. */
  logFile?: string;
  quiet?: boolean;
  /**
   * Whether wrangler writes a line per request (default true). The bench turns it off: that line is work of
   * wrangler's Node process on the same two cores (about 30% of a core under load), which production does not have.
   * Warnings, errors and the Worker's console.error still reach the log.
   */
  requestLog?: boolean;
  /**
   * The port of wrangler's inspector (the Chrome DevTools protocol for the app's Worker), for `npm run
   * bench:profile`; unset, wrangler picks a free one.
   */
  inspectorPort?: number;
  /** Worker variables for this run only, over .dev.vars and wrangler.toml (a bench's PROVIDER_CAP, INJECT_*). */
  vars?: Record<string, string>;
}

export interface RunningStack {
  url: string;
  /** The app, the check Worker's wrangler dev (workers/checker: a queue consumer, it answers no page), the emulators. */
  ports: { app: number; checker: number } & EmulatorPorts;
  vars: Record<string, string>;
  seeded: { email: string; credits: number; role: string }[];
  /** The app's wrangler dev process: its workerd runtime is a child of it (the bench reads that one's memory). */
  pids: { app: number };
  stop(): Promise<void>;
}

/** Where under a state folder wrangler keeps its local trace store (checked in test/e2e/foundation.e2e.ts). */
export const TRACE_STORE_DIR = join("v3", "observability");

/**
 * Drops the traces wrangler's local trace store kept from earlier starts. `wrangler dev` records every request's
 * trace in SQLite under the state folder and never deletes any (miniflare's TraceStore has no retention): a day of
 * local use had grown it to 1 GB, and each request's trace write slows as it grows
 * (docs/decisions/0149-wranglers-local-trace-store.md). The product's data beside it (D1, R2, objects) is kept.
 */
export function clearTraces(persistDir: string): void {
  rmSync(join(persistDir, TRACE_STORE_DIR), { recursive: true, force: true });
}

export async function startStack(opts: StackOptions): Promise<RunningStack> {
  assertNode24();
  const devVarsPath = ensureDevVars();
  const fileVars = parseEnvFile(devVarsPath);
  const url = `http://localhost:${opts.port}`;
  await assertPortFree(opts.port);
  if (opts.build) await buildApp(opts.quiet);
  clearTraces(opts.persistDir);
  await applyMigrations(opts.persistDir, opts.quiet);

  const emulators = await startEmulators({
    portBase: opts.emulatorPortBase,
    stateDir: opts.persistDir,
    vars: fileVars,
    appUrl: url,
  });
  // A .dev.vars made before a new setting was added to the example gets that setting from the example.
  const example = parseEnvFile(join(ROOT, ".dev.vars.example"));
  const added = Object.fromEntries(Object.entries(example).filter(([k]) => !(k in fileVars)));
  const vars: Record<string, string> = {
    ...added,
    ...fileVars,
    ...emulators.workerVars,
    ...opts.vars,
    APP_ORIGIN: url,
  };
  const varArgs = Object.entries({ ...added, ...emulators.workerVars, ...opts.vars, APP_ORIGIN: url }).flatMap(
    ([k, v]) => ["--var", `${k}:${v}`],
  );

  // The stack's own dev registry: the app and the check Worker find each other there (the queue, the RPC back), and
  // never another stack's (the e2e suite and a bench may run two at once).
  const registry = join(opts.persistDir, "dev-registry");
  const wranglerEnv = {
    ...process.env,
    ...OFFLINE_ENV,
    CI: "true",
    WRANGLER_REGISTRY_PATH: registry,
    ...(opts.requestLog === false ? { WRANGLER_LOG: "warn" } : {}),
  };
  // The check Worker (workers/checker) in a wrangler dev process of its own: its own workerd, so its pixel work runs
  // on another thread than the app's objects, as a queue consumer does in production (docs/decisions/0188).
  const checkerPort = await freePort();
  const checker = spawn(
    bin("wrangler"),
    [
      "dev",
      "-c",
      CHECKER_CONFIG,
      "--env=",
      "--port",
      String(checkerPort),
      "--ip",
      "127.0.0.1",
      "--persist-to",
      opts.persistDir,
      "--show-interactive-dev-session=false",
      "--inspector-port",
      "0",
      "--var",
      "APP_ENV:development",
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: wranglerEnv, detached: false },
  );
  // Up when its port answers anything (it has no fetch handler: wrangler answers with an error page).
  const checkerReady = waitForAnswer(
    `http://127.0.0.1:${checkerPort}/`,
    checker,
    60_000,
    "the check Worker (workers/checker)",
  );

  const child = spawn(
    bin("wrangler"),
    [
      "dev",
      "-c",
      "build/server/wrangler.json",
      "--port",
      String(opts.port),
      "--ip",
      "127.0.0.1",
      "--persist-to",
      opts.persistDir,
      "--env-file",
      devVarsPath,
      "--show-interactive-dev-session=false",
      "--inspector-port",
      String(opts.inspectorPort ?? 0),
      ...varArgs,
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: wranglerEnv, detached: false },
  );
  for (const proc of [child, checker]) {
    if (opts.logFile) {
      // Two sources into one file: neither may end it (the first to end made the other's next write throw
      // "write after end", crashing the test run after its tests passed); it ends when the process has closed both.
      const log = createWriteStream(opts.logFile, { flags: "a" });
      proc.stdout?.pipe(log, { end: false });
      proc.stderr?.pipe(log, { end: false });
      proc.once("close", () => log.end());
    } else if (!opts.quiet) {
      proc.stdout?.pipe(process.stdout);
      proc.stderr?.pipe(process.stderr);
    }
  }

  const stop = async () => {
    await Promise.all([child, checker].map(stopProcess));
    await emulators.stop();
  };

  try {
    await checkerReady;
    await waitForAnswer(`${url}/api/health`, child, 60_000, "wrangler dev (the app)", (res) => res.ok);
    const res = await fetch(`${url}/api/dev/seed`, { method: "POST" });
    if (!res.ok) throw new Error(`seeding failed: ${res.status} ${await res.text()}`);
    const { users } = (await res.json()) as { users: RunningStack["seeded"] };
    return {
      url,
      ports: { app: opts.port, checker: checkerPort, ...emulators.ports },
      vars,
      seeded: users,
      pids: { app: child.pid ?? 0 },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
