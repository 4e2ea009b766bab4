import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserServer, chromium } from "playwright-core";
import type { TestProject } from "vitest/node";
import { ROOT, type RunningStack, startStack } from "../../scripts/stack.ts";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "./chromium.ts";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    stackVars: Record<string, string>;
    ports: RunningStack["ports"];
    /** The run's one Chromium, launched here; test files connect to it (test/e2e/browser.ts). */
    browserWsEndpoint: string;
    /** The stack's state folder (local D1, R2, objects and wrangler's trace store). */
    stateDir: string;
  }
}

let stack: RunningStack | undefined;
let browserServer: BrowserServer | undefined;
let stateDir = "";

export async function setup(project: TestProject) {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM_PATH}. Install it with:\n\n  apt-get update && apt-get install -y chromium\n`,
    );
  }
  stateDir = mkdtempSync(join(tmpdir(), "stagewise-e2e-"));
  mkdirSync(join(ROOT, "test-results"), { recursive: true });
  const port = Number(process.env.E2E_PORT ?? 5199);
  stack = await startStack({
    port,
    emulatorPortBase: Number(process.env.E2E_EMULATOR_PORT_BASE ?? 4110),
    persistDir: stateDir,
    build: process.env.SKIP_BUILD !== "1",
    logFile: join(ROOT, "test-results", "wrangler-e2e.log"),
    quiet: true,
  });
  project.provide("baseUrl", stack.url);
  project.provide("stackVars", stack.vars);
  project.provide("ports", stack.ports);
  project.provide("stateDir", stateDir);
  // One browser for the whole run: launching Chromium per file cost about a second each (and its memory).
  browserServer = await chromium.launchServer({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  project.provide("browserWsEndpoint", browserServer.wsEndpoint());
}

export async function teardown() {
  await browserServer?.close();
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
}
