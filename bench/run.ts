import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import autocannon from "autocannon";
import * as chromeLauncher from "chrome-launcher";
import lighthouse from "lighthouse";
import { chromium } from "playwright-core";
import { ROOT, startStack } from "../scripts/stack.ts";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../test/e2e/chromium.ts";
import { createFixtureUser } from "../test/e2e/fixtures.ts";
import { measureApiJobCreation } from "./api.ts";
import { measureJobLatencies } from "./jobs.ts";
import { measureGridBytes, measureUploadBytes, phoneSizedJpeg, seedPhotos } from "./library-bytes.ts";
import { BUDGETS, type Figure, judge, renderMarkdown } from "./report.ts";

// `npm run bench`: starts the production build under local workerd with its
// emulators (the same way `npm start` does, on its own ports and a fresh state
// folder), measures, and writes bench/results/report.{md,json}. Every load
// test targets 127.0.0.1 and is bounded in count and time.

const figures: Figure[] = [];
const started = Date.now();

function add(raw: Figure) {
  const f = judge(raw);
  figures.push(f);
  const budget = f.budget === undefined ? "" : ` (budget ${f.op} ${f.budget})`;
  console.log(`  ${f.name}: ${f.value}${f.unit ? ` ${f.unit}` : ""}${budget}`);
}

const stateDir = mkdtempSync(join(tmpdir(), "stagewise-bench-"));
console.log("Starting the production build under local workerd…");
const stack = await startStack({
  port: Number(process.env.BENCH_PORT ?? 5190),
  emulatorPortBase: Number(process.env.BENCH_EMULATOR_PORT_BASE ?? 4090),
  persistDir: stateDir,
  build: process.env.SKIP_BUILD !== "1",
  logFile: join(stateDir, "wrangler.log"),
  quiet: true,
});

async function fixtureToken(credits = 20): Promise<string> {
  const user = await createFixtureUser(stack.url, { credits });
  if (!user.sessionToken) throw new Error("fixture user came without a session");
  return user.sessionToken;
}

async function fixtureSession(credits = 20): Promise<string> {
  return `sw_session=${await fixtureToken(credits)}`;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

async function load(path: string, headers: Record<string, string> = {}) {
  const result = await autocannon({
    url: `${stack.url}${path}`,
    connections: 10,
    duration: 10,
    amount: 5000,
    headers,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${path}: ${result.non2xx} non-2xx answers and ${result.errors} errors under load`);
  }
  return result;
}

try {
  const cookie = await fixtureSession();

  console.log("Server-rendered pages under load (10 connections, at most 10 s or 5,000 requests each)…");
  const base = await load("/dev/bare");
  add({
    group: "SSR",
    name: "baseline: bare React Router page requests/s",
    value: Math.round(base.requests.average),
    unit: "req/s",
  });
  add({ group: "SSR", name: "baseline: bare React Router page p50", value: base.latency.p50, unit: "ms" });
  for (const [label, path, headers] of [
    ["/", "/", {}],
    ["/dashboard", "/dashboard", { Cookie: cookie }],
  ] as const) {
    const r = await load(path, headers);
    const ratio = (x: number, y: number) => `${(x / y).toFixed(2)}x the bare page`;
    add({
      group: "SSR",
      name: `${label} requests/s`,
      value: Math.round(r.requests.average),
      unit: "req/s",
      baseline: ratio(r.requests.average, base.requests.average),
      ...BUDGETS.rps(label),
    });
    add({
      group: "SSR",
      name: `${label} p50`,
      value: r.latency.p50,
      unit: "ms",
      baseline: ratio(r.latency.p50, base.latency.p50),
      ...BUDGETS.p50(label),
    });
    add({ group: "SSR", name: `${label} p99`, value: r.latency.p99, unit: "ms", ...BUDGETS.p99(label) });
  }

  console.log("Credit reservations through the users' Durable Objects…");
  for (const [users, perUser] of [
    [1, 200],
    [100, 10],
  ] as const) {
    const res = await fetch(`${stack.url}/api/dev/bench/reservations`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ users, perUser }),
    });
    const r = (await res.json()) as { attempts: number; succeeded: number; ms: number; negative: boolean };
    if (r.negative || r.succeeded !== users * perUser)
      throw new Error(`reservation bench broke the ledger: ${JSON.stringify(r)}`);
    add({
      group: "Credits",
      name: `reservations/s, ${users} user${users > 1 ? "s" : ""}`,
      value: Math.round((r.attempts / r.ms) * 1000),
      unit: "res/s",
      ...BUDGETS.reservations(users),
    });
  }

  console.log("Photo bytes: a 10 MB phone photo's upload, and a 50-photo grid…");
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: CHROMIUM_ARGS,
  });
  try {
    const jpeg = phoneSizedJpeg();
    const upload = await measureUploadBytes(
      browser,
      { baseUrl: stack.url, sessionToken: await fixtureToken() },
      {
        name: "phone-photo.jpg",
        mimeType: "image/jpeg",
        buffer: Buffer.from(jpeg),
      },
    );
    const mb = (n: number) => Math.round(n / 10485.76) / 100;
    add({ group: "Photos", name: "phone JPEG before upload", value: mb(upload.fileBytes), unit: "MB" });
    add({
      group: "Photos",
      name: "bytes sent to upload it",
      value: mb(upload.sentTotalBytes),
      unit: "MB",
      baseline: `${Math.round((upload.sentTotalBytes / upload.fileBytes) * 100)}% of the file, ${upload.requests} requests`,
      ...BUDGETS.uploadMb,
    });
    const gridToken = await fixtureToken();
    await seedPhotos({ baseUrl: stack.url, sessionToken: gridToken }, 50);
    const grid = await measureGridBytes(browser, { baseUrl: stack.url, sessionToken: gridToken });
    if (grid.originalRequests > 0) throw new Error(`the grid loaded ${grid.originalRequests} originals`);
    add({
      group: "Photos",
      name: "grid of 50 photos: image bytes",
      value: Math.round(grid.imageBytes / 102.4) / 10,
      unit: "KB",
      baseline: `${grid.imageRequests} thumbnails, largest ${Math.round(grid.largestImageBytes / 1024)} KB`,
      ...BUDGETS.gridKb,
    });
    add({
      group: "Photos",
      name: "grid of 50 photos: whole page",
      value: Math.round(grid.totalBytes / 102.4) / 10,
      unit: "KB",
    });
  } finally {
    await browser.close();
  }

  console.log("Jobs at provider latencies from 1 s to 119 s (about two minutes)…");
  for (const f of await measureJobLatencies(stack)) add(f);

  console.log("Public API: job creation through /api/v1 against the page's own call…");
  for (const f of await measureApiJobCreation(stack)) add(f);

  console.log("Staging overhead: our end-to-end job time minus the provider emulator's own time…");
  {
    const token = await fixtureToken(40);
    const [photoId] = await seedPhotos({ baseUrl: stack.url, sessionToken: token }, 1, "Bench room");
    const headers = { Cookie: `sw_session=${token}`, "Content-Type": "application/json", Origin: stack.url };
    const provider = `http://127.0.0.1:${stack.ports.provider}`;
    const LATENCY_MS = 300;
    await fetch(`${provider}/_emulator/mode`, {
      method: "POST",
      body: JSON.stringify({ mode: "ok", latencyMs: LATENCY_MS }),
    });
    // The same call made directly to the emulator: the time the provider itself takes.
    const original = new Uint8Array(
      await (await fetch(`${stack.url}/api/photos/${photoId}/original`, { headers })).arrayBuffer(),
    );
    const direct: number[] = [];
    for (let i = 0; i < 10; i++) {
      const form = new FormData();
      form.append("input_image", new Blob([original], { type: "image/jpeg" }), "room.jpg");
      form.append("room_type", "bedroom");
      form.append("design_style", "scandinavian");
      form.append("num_images", "1");
      const t = performance.now();
      const res = await fetch(`${provider}/generate_designs`, {
        method: "POST",
        headers: { Authorization: `Bearer ${stack.vars.PROVIDER_API_KEY}` },
        body: form,
      });
      await res.arrayBuffer();
      direct.push(performance.now() - t);
    }
    const directP50 = percentile(direct, 50);
    const overhead: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      const res = await fetch(`${stack.url}/api/photos/${photoId}/jobs`, {
        method: "POST",
        headers,
        body: JSON.stringify({ kind: "stage", roomType: "bedroom", designStyle: "scandinavian" }),
      });
      if (res.status !== 202) throw new Error(`staging job refused: ${res.status} ${await res.text()}`);
      const { job } = (await res.json()) as { job: { id: string } };
      for (;;) {
        const poll = (await (await fetch(`${stack.url}/api/jobs/${job.id}`, { headers })).json()) as {
          job: { status: string; error: string | null };
        };
        if (poll.job.status === "succeeded") break;
        if (poll.job.status === "failed") throw new Error(`staging job failed: ${poll.job.error}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      overhead.push(performance.now() - t - directP50);
    }
    await fetch(`${provider}/_emulator/mode`, { method: "POST", body: JSON.stringify({ mode: "ok", latencyMs: 0 }) });
    add({
      group: "Staging",
      name: "direct emulator call p50 (baseline)",
      value: Math.round(directP50),
      unit: "ms",
      baseline: `configured latency ${LATENCY_MS} ms`,
    });
    add({
      group: "Staging",
      name: "our overhead p50",
      value: Math.round(percentile(overhead, 50)),
      unit: "ms",
      ...BUDGETS.overheadP50,
    });
    add({
      group: "Staging",
      name: "our overhead p99",
      value: Math.round(percentile(overhead, 99)),
      unit: "ms",
      ...BUDGETS.overheadP99,
    });
  }

  console.log("JavaScript each route sends (gzipped)…");
  for (const [label, path, headers] of [
    ["/", "/", {}],
    ["/dashboard", "/dashboard", { Cookie: cookie }],
  ] as const) {
    const html = await (await fetch(`${stack.url}${path}`, { headers })).text();
    const srcs = new Set([...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1]!));
    let bytes = 0;
    for (const src of srcs)
      bytes += gzipSync(Buffer.from(await (await fetch(`${stack.url}${src}`)).arrayBuffer())).length;
    add({
      group: "Bundle",
      name: `${label} gzipped JS`,
      value: Math.round(bytes / 102.4) / 10,
      unit: "KB",
      ...BUDGETS.js,
    });
  }

  console.log("Lighthouse, mobile profile…");
  const chrome = await chromeLauncher.launch({
    chromePath: CHROMIUM_PATH,
    chromeFlags: ["--headless=new", ...CHROMIUM_ARGS],
  });
  try {
    for (const [label, path, headers] of [
      ["/", "/", {}],
      ["/dashboard", "/dashboard", { Cookie: cookie }],
    ] as const) {
      const result = await lighthouse(`${stack.url}${path}`, {
        port: chrome.port,
        output: "json",
        logLevel: "error",
        onlyCategories: ["performance"],
        extraHeaders: headers,
      });
      const lhr = result?.lhr;
      if (!lhr) throw new Error(`lighthouse gave no result for ${path}`);
      if (lhr.runtimeError || lhr.categories.performance?.score == null) {
        // A failed Lighthouse run is a failed measurement, never a score of 0.
        throw new Error(`lighthouse could not measure ${path}: ${lhr.runtimeError?.message ?? "no performance score"}`);
      }
      add({
        group: "Lighthouse (mobile)",
        name: `${label} performance score`,
        value: Math.round((lhr.categories.performance?.score ?? 0) * 100),
        unit: "",
        ...BUDGETS.lighthouse,
      });
      add({
        group: "Lighthouse (mobile)",
        name: `${label} LCP`,
        value: Math.round((lhr.audits["largest-contentful-paint"]?.numericValue ?? 0) / 10) / 100,
        unit: "s",
        ...BUDGETS.lcp,
      });
      add({
        group: "Lighthouse (mobile)",
        name: `${label} total bytes`,
        value: Math.round((lhr.audits["total-byte-weight"]?.numericValue ?? 0) / 102.4) / 10,
        unit: "KB",
      });
    }
  } finally {
    chrome.kill();
  }
} finally {
  await stack.stop();
  rmSync(stateDir, { recursive: true, force: true });
}

const report = {
  generatedAt: new Date().toISOString(),
  durationSeconds: Math.round((Date.now() - started) / 1000),
  machine: "2 cores (CI kind)",
  figures,
};
const out = join(ROOT, "bench", "results");
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "report.json"), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(out, "report.md"), renderMarkdown(report));
const over = figures.filter((f) => f.pass === false);
console.log(
  `\nWrote bench/results/report.md and report.json in ${report.durationSeconds} s. ${over.length} figure(s) over budget.`,
);
for (const f of over) console.log(`  OVER: ${f.name} = ${f.value} ${f.unit} (budget ${f.op} ${f.budget})`);
