import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import autocannon from "autocannon";
import * as chromeLauncher from "chrome-launcher";
import lighthouse from "lighthouse";
import { type Browser, chromium } from "playwright-core";
import { ROOT, startStack } from "../scripts/stack.ts";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../test/e2e/chromium.ts";
import { createFixtureUser } from "../test/e2e/fixtures.ts";
import { jobEnded, measureApiJobCreation } from "./api.ts";
import { measureApiPhotoUpload } from "./api-photo.ts";
import { batchModule } from "./batch.ts";
import { measureJobLatencies } from "./jobs.ts";
import { labelsModule } from "./labels.ts";
import { measureGridBytes, measureUploadBytes, phoneSizedJpeg, seedPhotos } from "./library-bytes.ts";
import { applyRatios, type BenchContext, type BenchModule, MIN_RUNS, median, mergeRuns, percentile } from "./module.ts";
import { OBJECT_INSPECTOR_PORT, objectModule } from "./object.ts";
import { qualityScore } from "./photo-quality.ts";
import { BUDGETS, budgetText, type Figure, judge, renderMarkdown } from "./report.ts";
import { resultsModule } from "./results.ts";
import { structureModule } from "./structure.ts";

// `npm run bench`: starts the production build under local workerd with its
// emulators (the same way `npm start` does, on its own ports and a fresh state
// folder), runs every module of MODULES at least 3 times, and writes
// bench/results/report.{md,json}: each figure the median of its runs with min
// and max beside it (docs/decisions/0134-bench-reports-its-spread.md). Every
// load test targets 127.0.0.1 and is bounded in count and time.
// `BENCH_ONLY=photos,bundle npm run bench` runs only the named modules.

const BARE = "baseline: bare React Router page";

async function load(
  url: string,
  headers: Record<string, string> = {},
  bound: { requests: number; seconds: number } = { requests: 5000, seconds: 10 },
) {
  // `amount` would override `duration` (autocannon runs until that many requests are done): on a busy machine a
  // run took minutes. `maxOverallRequests` bounds the count while `duration` bounds the time.
  // `sampleInt`: autocannon notices that its last client is done only at its next sample tick, and the run's
  // `duration` ends there. With the default 1 s samples a run that served its 5,000 requests in 5.72 s reported
  // 6.01 s (832/s for 874/s); every fast page's rate was cut down to 5,000 / a whole number of seconds (1,000, 833,
  // 714/s). Ticks of 100 ms end the run within 0.1 s of its last answer.
  const result = await autocannon({
    url,
    connections: 10,
    duration: bound.seconds,
    maxOverallRequests: bound.requests,
    sampleInt: 100,
    headers,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx answers and ${result.errors} errors under load`);
  }
  return result;
}

/** Several loads of one page taken as one. */
interface Loads {
  rate: number;
  p50: number;
  p99: number;
}

/**
 * Their requests over their summed durations, the median of their p50s and p99s. (autocannon's `requests.average`
 * is the mean of its samples, so a load that stops at its request count in the middle of a sample counts that
 * partial sample as a full one; and see `sampleInt` in load().)
 */
function pooled(results: autocannon.Result[]): Loads {
  const requests = results.reduce((n, r) => n + r.requests.total, 0);
  const seconds = results.reduce((n, r) => n + r.duration, 0);
  return {
    rate: seconds > 0 ? requests / seconds : 0,
    p50: median(results.map((r) => r.latency.p50)),
    p99: median(results.map((r) => r.latency.p99)),
  };
}

/** One turn of a paired load: this many requests or seconds, whichever ends first. */
const TURN = { requests: 1000, seconds: 4 };

/**
 * A page measured beside the bare React Router page: the two take turns, bare-page-page-bare, so each side's figure
 * comes from the same seconds of the machine (a trend over those seconds falls on both alike). On this shared
 * 2-core machine the bare page measured once at the start of a run and a page measured a minute later gave
 * /dashboard p50 ratios of 1.27, 1.73 and 1.83x in three runs of one bench (ADR 0134).
 */
async function paired(bareUrl: string, url: string, headers: Record<string, string>) {
  const bareTurns: autocannon.Result[] = [];
  const pageTurns: autocannon.Result[] = [];
  for (const side of ["bare", "page", "page", "bare"] as const) {
    if (side === "bare") bareTurns.push(await load(bareUrl, {}, TURN));
    else pageTurns.push(await load(url, headers, TURN));
  }
  const bare = pooled(bareTurns);
  const page = pooled(pageTurns);
  // The bare turns are handed back too: the run's own bare-page figure pools every one of them.
  return { bareTurns, page, rateRatio: page.rate / bare.rate, p50Ratio: page.p50 / bare.p50 };
}

/** The built static asset whose size is closest to `bytes`. */
function assetClosestTo(bytes: number): { name: string; bytes: number } {
  const dir = join(ROOT, "build/client/assets");
  const files = readdirSync(dir).map((name) => ({ name, bytes: statSync(join(dir, name)).size }));
  files.sort((a, b) => Math.abs(a.bytes - bytes) - Math.abs(b.bytes - bytes));
  if (!files[0]) throw new Error("no built assets to compare / with");
  return files[0];
}

/** How many photos the library of the second `/dashboard` figure holds: an agent's listing or two. */
const LIBRARY_PHOTOS = 60;
let libraryCookie = "";

/** Server-rendered pages under load, each taking turns with the bare React Router page (the ratios' baseline). */
const ssr: BenchModule = {
  title:
    "Server-rendered pages under load (10 connections; each page in turns with the bare page, 1,000 requests or 4 s a turn)",
  async setup({ stack, fixtureToken }) {
    // The first `/dashboard` figure is an empty library (the issue's own measurement); this one a library of 60
    // photos, whose first page (PAGE_SIZE cards) the server renders.
    const token = await fixtureToken();
    await seedPhotos({ baseUrl: stack.url, sessionToken: token }, LIBRARY_PHOTOS, "Listing room");
    libraryCookie = `sw_session=${token}`;
  },
  async measure({ stack, fixtureSession }) {
    const cookie = await fixtureSession();
    const out: Figure[] = [];
    const bareUrl = `${stack.url}/dev/bare`;
    // Not counted: the first answers of a run pay for compiling and filling caches, which would fall on the bare
    // page's first turn alone.
    await load(bareUrl, {}, { requests: 300, seconds: 2 });
    const bareTurns: autocannon.Result[] = [];
    const rel = (figure: string) => ({ name: `${BARE} ${figure}`, label: "the bare page" });
    // The ceiling of this harness for anything: a 1 KB static file, answered by the platform without the Worker
    // (ADR 0145 serves / this way). Through local `wrangler dev` every request crosses its proxy.
    const ceiling = await paired(bareUrl, `${stack.url}/favicon.svg`, {});
    bareTurns.push(...ceiling.bareTurns);
    out.push({
      group: "SSR",
      name: "baseline: a static file (/favicon.svg) requests/s",
      value: Math.round(ceiling.page.rate),
      unit: "req/s",
      relativeTo: rel("requests/s"),
      pairedRatio: ceiling.rateRatio,
    });
    // The same static path for a file the size of / (a built asset): / is a prerendered static file too, so this
    // is its ceiling here; the favicon's is higher only because it sends ~1 KB instead of ~86 KB.
    const homeBytes = (await (await fetch(`${stack.url}/`)).arrayBuffer()).byteLength;
    const sameSize = assetClosestTo(homeBytes);
    const sized = await paired(bareUrl, `${stack.url}/assets/${sameSize.name}`, {});
    bareTurns.push(...sized.bareTurns);
    out.push({
      group: "SSR",
      name: `baseline: a static file of /'s size (${Math.round(sameSize.bytes / 1024)} KB, / is ${Math.round(homeBytes / 1024)} KB) requests/s`,
      value: Math.round(sized.page.rate),
      unit: "req/s",
      relativeTo: rel("requests/s"),
      pairedRatio: sized.rateRatio,
    });
    // What any signed-in page pays on top: the bare page with a session (one D1 read of the session and user).
    const signedIn = await paired(bareUrl, bareUrl, { Cookie: cookie });
    bareTurns.push(...signedIn.bareTurns);
    out.push({
      group: "SSR",
      name: `${BARE} with a session p50`,
      value: signedIn.page.p50,
      unit: "ms",
      relativeTo: rel("p50"),
      pairedRatio: signedIn.p50Ratio,
    });
    for (const [label, path, headers] of [
      ["/", "/", {}],
      ["/dashboard", "/dashboard", { Cookie: cookie }],
      [`/dashboard, ${LIBRARY_PHOTOS} photos`, "/dashboard", { Cookie: libraryCookie }],
    ] as const) {
      const r = await paired(bareUrl, `${stack.url}${path}`, headers);
      bareTurns.push(...r.bareTurns);
      out.push(
        {
          group: "SSR",
          name: `${label} requests/s`,
          value: Math.round(r.page.rate),
          unit: "req/s",
          relativeTo: rel("requests/s"),
          pairedRatio: r.rateRatio,
          ...BUDGETS.rps(label),
        },
        {
          group: "SSR",
          name: `${label} p50`,
          value: r.page.p50,
          unit: "ms",
          relativeTo: rel("p50"),
          pairedRatio: r.p50Ratio,
          ...BUDGETS.p50(label),
          ...(label.startsWith("/dashboard") ? { ratioBudget: BUDGETS.dashboardRatio } : {}),
        },
        { group: "SSR", name: `${label} p99`, value: r.page.p99, unit: "ms", ...BUDGETS.p99(label) },
      );
    }
    // The bare page over every one of its turns in this run.
    const bare = pooled(bareTurns);
    out.unshift(
      { group: "SSR", name: `${BARE} requests/s`, value: Math.round(bare.rate), unit: "req/s" },
      { group: "SSR", name: `${BARE} p50`, value: bare.p50, unit: "ms" },
    );
    return out;
  },
};

const credits: BenchModule = {
  title: "Credit reservations through the users' Durable Objects",
  async measure({ stack }) {
    const out: Figure[] = [];
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
      out.push({
        group: "Credits",
        name: `reservations/s, ${users} user${users > 1 ? "s" : ""}`,
        value: Math.round((r.attempts / r.ms) * 1000),
        unit: "res/s",
        ...BUDGETS.reservations(users),
      });
    }
    return out;
  },
};

/** The bytes a phone sends for a 10 MB photo (with the stored photo's size and SSIM), and the grid's bytes. */
function photosModule(): BenchModule {
  const jpeg = phoneSizedJpeg();
  let gridToken = "";
  return {
    title: "Photo bytes: a 10 MB phone photo's upload (size and SSIM of what is stored), and a 50-photo grid",
    async setup({ stack, fixtureToken }) {
      gridToken = await fixtureToken();
      await seedPhotos({ baseUrl: stack.url, sessionToken: gridToken }, 50);
    },
    async measure({ stack, fixtureToken }) {
      const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
      try {
        const token = await fixtureToken();
        const upload = await measureUploadBytes(
          browser,
          { baseUrl: stack.url, sessionToken: token },
          { name: "phone-photo.jpg", mimeType: "image/jpeg", buffer: Buffer.from(jpeg) },
        );
        const headers = { Cookie: `sw_session=${token}` };
        const list = (await (await fetch(`${stack.url}/api/photos`, { headers })).json()) as {
          photos: { id: string; width: number; height: number }[];
        };
        const photo = list.photos[0];
        if (!photo) throw new Error("the bench upload stored no photo");
        const stored = new Uint8Array(
          await (await fetch(`${stack.url}/api/photos/${photo.id}/original`, { headers })).arrayBuffer(),
        );
        const { default: jpegJs } = await import("jpeg-js");
        const { width, height } = jpegJs.decode(stored, { useTArray: true, maxMemoryUsageInMB: 512 });
        const mb = (n: number) => Math.round(n / 10485.76) / 100;
        const grid = await measureGridBytes(browser, { baseUrl: stack.url, sessionToken: gridToken });
        if (grid.originalRequests > 0) throw new Error(`the grid loaded ${grid.originalRequests} originals`);
        return [
          { group: "Photos", name: "phone JPEG before upload", value: mb(upload.fileBytes), unit: "MB" },
          {
            group: "Photos",
            name: "bytes sent to upload it",
            value: mb(upload.sentTotalBytes),
            unit: "MB",
            baseline: `${Math.round((upload.sentTotalBytes / upload.fileBytes) * 100)}% of the file, ${upload.requests} requests`,
            ...BUDGETS.uploadMb,
          },
          {
            group: "Photos",
            name: "long edge of the photo sent",
            value: Math.max(width, height),
            unit: "px",
            ...BUDGETS.uploadLongEdge,
          },
          {
            group: "Photos",
            name: "quality: SSIM against the full-size photo scaled to the same size",
            value: Math.round(qualityScore(jpeg, stored) * 10000) / 10000,
            unit: "",
            baseline: "1 = identical; ADR 0131 has the sweep",
          },
          {
            group: "Photos",
            name: "grid of 50 photos: image bytes",
            value: Math.round(grid.imageBytes / 102.4) / 10,
            unit: "KB",
            baseline: `${grid.imageRequests} thumbnails, largest ${Math.round(grid.largestImageBytes / 1024)} KB`,
            ...BUDGETS.gridKb,
          },
          {
            group: "Photos",
            name: "grid of 50 photos: whole page",
            value: Math.round(grid.totalBytes / 102.4) / 10,
            unit: "KB",
          },
        ];
      } finally {
        await browser.close();
      }
    },
  };
}

const jobs: BenchModule = {
  title: "Jobs at provider latencies from 1 s to 119 s, all started at once (about two minutes a run)",
  measure: ({ stack }) => measureJobLatencies(stack),
};

const api: BenchModule = {
  title: "Public API: job creation through /api/v1 against the page's own call, and a 24-megapixel photo upload",
  measure: async ({ stack }) => [
    ...(await measureApiJobCreation(stack)),
    ...(await measureApiPhotoUpload(stack, OBJECT_INSPECTOR_PORT)),
  ],
};

const staging: BenchModule = {
  title: "Staging overhead: our end-to-end job time minus the provider emulator's own time",
  async measure({ stack, fixtureToken }) {
    const token = await fixtureToken(40);
    const [photoId] = await seedPhotos({ baseUrl: stack.url, sessionToken: token }, 1, "Bench room");
    const headers = { Cookie: `sw_session=${token}`, "Content-Type": "application/json", Origin: stack.url };
    const provider = `http://127.0.0.1:${stack.ports.provider}`;
    const LATENCY_MS = 300;
    await fetch(`${provider}/_emulator/mode`, {
      method: "POST",
      body: JSON.stringify({ mode: "ok", latencyMs: LATENCY_MS }),
    });
    try {
      // The same call made directly to the emulator: the time the provider itself takes.
      const original = new Uint8Array(
        await (await fetch(`${stack.url}/api/photos/${photoId}/original`, { headers })).arrayBuffer(),
      );
      // The emulator logs each call's own time (body received to answer written: the configured latency, its image
      // work, which varies by tens of ms from call to call, and its fetch of the input address, which it logs apart
      // as input_fetch_ms); a job's overhead is taken against its own call. The input fetch of a job's call is served
      // by our Worker (the signed address), so it is counted as ours, not as the provider's.
      const providerTimeOfLastCall = async () => {
        const log = (await (await fetch(`${provider}/_emulator/requests`)).json()) as {
          ms?: number;
          input_fetch_ms?: number;
        }[];
        const last = log.at(-1);
        if (typeof last?.ms !== "number") throw new Error("the provider emulator did not log the call's time");
        return last.ms - (last.input_fetch_ms ?? 0);
      };
      // The direct call's input is served by this process, as a client of the provider would serve its own photo.
      const source = createServer((_req, res) => res.writeHead(200, { "Content-Type": "image/jpeg" }).end(original));
      await new Promise<void>((r) => source.listen(0, "127.0.0.1", () => r()));
      const sourceUrl = `http://127.0.0.1:${(source.address() as AddressInfo).port}/room.jpg`;
      const direct: number[] = [];
      const directOwn: number[] = [];
      const directTransport: number[] = [];
      for (let i = 0; i < 10; i++) {
        const t = performance.now();
        // The documented call, then the download of the result it names: what a direct client of the provider does.
        const res = await fetch(`${provider}/generate_designs_for_room`, {
          method: "POST",
          headers: { Authorization: `Bearer ${stack.vars.PROVIDER_API_KEY}`, "Content-Type": "application/json" },
          body: JSON.stringify({
            input_image_url: sourceUrl,
            room_type: "bedroom",
            design_style: "scandinavian",
            num_images: 1,
            scale_factor: 3,
          }),
        });
        const answer = (await res.json()) as { info: { images: { url: string }[] } };
        await (await fetch(answer.info.images[0]!.url)).arrayBuffer();
        const took = performance.now() - t;
        const own = await providerTimeOfLastCall();
        direct.push(took);
        directOwn.push(own);
        directTransport.push(took - own);
      }
      source.close();
      const directP50 = percentile(direct, 50);
      const transportP50 = percentile(directTransport, 50);
      const overhead: number[] = [];
      const unpaired: number[] = [];
      const jobOwn: number[] = [];
      for (let i = 0; i < 20; i++) {
        const t = performance.now();
        const res = await fetch(`${stack.url}/api/photos/${photoId}/jobs`, {
          method: "POST",
          // As the page sends it (app/lib/use-job.ts): a key of its own, so a resend starts nothing (ADR 0148).
          headers: { ...headers, "Idempotency-Key": crypto.randomUUID() },
          body: JSON.stringify({ kind: "stage", roomType: "bedroom", designStyle: "scandinavian" }),
        });
        if (res.status !== 202) throw new Error(`staging job refused: ${res.status} ${await res.text()}`);
        const { job } = (await res.json()) as { job: { id: string } };
        const ended = await jobEnded(stack.url, job.id, headers);
        if (ended.status === "failed") throw new Error(`staging job failed: ${ended.error}`);
        const took = performance.now() - t;
        const own = await providerTimeOfLastCall();
        jobOwn.push(own);
        // What the job took beyond the direct call: the provider's own time of this job's call out, and the
        // direct call's transport (client to emulator and back, the result's download) out, since it pays them too.
        overhead.push(took - own - transportP50);
        unpaired.push(took - directP50);
      }
      return [
        {
          group: "Staging",
          name: "direct emulator call p50 (baseline)",
          value: Math.round(directP50),
          unit: "ms",
          baseline: `configured latency ${LATENCY_MS} ms`,
        },
        {
          group: "Staging",
          name: "the emulator's own time p50 (its input fetch aside), direct calls",
          value: Math.round(percentile(directOwn, 50)),
          unit: "ms",
        },
        {
          group: "Staging",
          name: "the emulator's own time p50 (its input fetch aside), our jobs' calls",
          value: Math.round(percentile(jobOwn, 50)),
          unit: "ms",
        },
        {
          group: "Staging",
          name: "our overhead p50",
          value: Math.round(percentile(overhead, 50)),
          unit: "ms",
          ...BUDGETS.overheadP50,
        },
        {
          group: "Staging",
          name: "our overhead p99",
          value: Math.round(percentile(overhead, 99)),
          unit: "ms",
          ...BUDGETS.overheadP99,
        },
        {
          group: "Staging",
          name: "job time minus the direct call's p50 (unpaired) p50",
          value: Math.round(percentile(unpaired, 50)),
          unit: "ms",
        },
      ];
    } finally {
      await fetch(`${provider}/_emulator/mode`, { method: "POST", body: JSON.stringify({ mode: "ok", latencyMs: 0 }) });
    }
  },
};

/**
 * The gzipped JavaScript a page makes the browser load: every script Chromium fetches from /assets/ until the page
 * has hydrated and the network is idle (modulepreloads, the hydration script's imports). Measured in the browser
 * because cached public pages carry no modulepreload links (docs/decisions/0132) and the HTML also names modules
 * that load only on navigation.
 */
async function gzippedJs(browser: Browser, url: string, cookie?: string): Promise<number> {
  const ctx = await browser.newContext();
  if (cookie) {
    const [name, value] = cookie.split("=");
    await ctx.addCookies([{ name: name!, value: value!, url }]);
  }
  const page = await ctx.newPage();
  const bodies: Promise<number>[] = [];
  page.on("response", (res) => {
    if (res.request().resourceType() === "script" && new URL(res.url()).pathname.startsWith("/assets/"))
      bodies.push(res.body().then((b) => gzipSync(b).length));
  });
  await page.goto(url);
  await page.waitForSelector("html[data-hydrated=true]");
  await page.waitForLoadState("networkidle");
  const sizes = await Promise.all(bodies);
  await ctx.close();
  return sizes.reduce((a, b) => a + b, 0);
}

const bundle: BenchModule = {
  title: "JavaScript each route sends (gzipped)",
  async measure({ stack, fixtureSession }) {
    const cookie = await fixtureSession();
    const out: Figure[] = [];
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    try {
      for (const [label, path, withCookie] of [
        ["/", "/", undefined],
        ["/dashboard", "/dashboard", cookie],
      ] as const) {
        out.push({
          group: "Bundle",
          name: `${label} gzipped JS`,
          value: Math.round((await gzippedJs(browser, `${stack.url}${path}`, withCookie)) / 102.4) / 10,
          unit: "KB",
          ...BUDGETS.js(label),
        });
      }
    } finally {
      await browser.close();
    }
    return out;
  },
};

/** Lighthouse on the mobile profile for one page; `runs` separate Lighthouse runs. */
function lighthouseModule(label: string, path: string, runs: number, signedIn: boolean): BenchModule {
  let headers: Record<string, string> = {};
  return {
    title: `Lighthouse, mobile profile: ${label} (${runs} runs)`,
    runs,
    async setup({ fixtureSession }) {
      if (signedIn) headers = { Cookie: await fixtureSession() };
    },
    async measure({ stack }) {
      const chrome = await chromeLauncher.launch({
        chromePath: CHROMIUM_PATH,
        chromeFlags: ["--headless=new", ...CHROMIUM_ARGS],
      });
      try {
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
          throw new Error(
            `lighthouse could not measure ${path}: ${lhr.runtimeError?.message ?? "no performance score"}`,
          );
        }
        const seconds = (audit: string) => Math.round((lhr.audits[audit]?.numericValue ?? 0) / 10) / 100;
        return [
          {
            group: "Lighthouse (mobile)",
            name: `${label} performance score`,
            value: Math.round((lhr.categories.performance?.score ?? 0) * 100),
            unit: "",
            ...BUDGETS.lighthouse(label),
          },
          {
            group: "Lighthouse (mobile)",
            name: `${label} FCP`,
            value: seconds("first-contentful-paint"),
            unit: "s",
            ...BUDGETS.fcp(label),
          },
          {
            group: "Lighthouse (mobile)",
            name: `${label} LCP`,
            value: seconds("largest-contentful-paint"),
            unit: "s",
            ...BUDGETS.lcp(label),
          },
          {
            group: "Lighthouse (mobile)",
            name: `${label} total bytes`,
            value: Math.round((lhr.audits["total-byte-weight"]?.numericValue ?? 0) / 102.4) / 10,
            unit: "KB",
          },
        ];
      } finally {
        chrome.kill();
      }
    },
  };
}

/** Everything `npm run bench` measures, in order. Add a module here (see bench/module.ts). */
export const MODULES: Record<string, BenchModule> = {
  ssr,
  credits,
  photos: photosModule(),
  jobs,
  batch: batchModule(3),
  api,
  staging,
  results: resultsModule,
  bundle,
  "lighthouse-home": lighthouseModule("/", "/", 5, false),
  "lighthouse-dashboard": lighthouseModule("/dashboard", "/dashboard", MIN_RUNS, true),
  structure: structureModule(),
  object: objectModule(),
  labels: labelsModule(),
};

/** CPU time (clock ticks) used so far by every workerd process on the machine: the stack's runtime and its proxy. */
function workerdTicks(): number | null {
  if (!existsSync("/proc")) return null;
  let ticks = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("workerd")) continue;
      // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // A process that ended meanwhile.
    }
  }
  return ticks;
}

/**
 * Waits until the stack is idle (workerd under 5% of a core over half a second), at most 30 s: work a previous run
 * left behind (thumbnails made after a job's commit, alarms, a data export) is not counted in the next run's
 * figures. Says so when it had to wait, and when the stack never went quiet.
 */
async function untilQuiet(): Promise<void> {
  const started = Date.now();
  const WINDOW_MS = 500;
  // Clock ticks per second on Linux.
  const HZ = 100;
  for (;;) {
    const before = workerdTicks();
    if (before === null) return;
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const used = (((workerdTicks() ?? before) - before) / HZ) * 1000;
    const waited = Date.now() - started;
    if (used / WINDOW_MS < 0.05) {
      if (waited > WINDOW_MS * 2) console.log(`  (waited ${(waited / 1000).toFixed(1)} s for the stack to go quiet)`);
      return;
    }
    if (waited > 30_000) {
      console.log("  (the stack did not go quiet within 30 s; measuring anyway)");
      return;
    }
  }
}

/** One run of a module; a run that fails is tried again twice (a flaky tool is not a figure). */
async function measureWithRetry(mod: BenchModule, ctx: BenchContext, run: number): Promise<Figure[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await mod.measure(ctx, run);
    } catch (err) {
      if (attempt >= 3) throw err;
      console.error(`  run ${run + 1} failed (${err instanceof Error ? err.message : err}); trying again`);
    }
  }
}

/**
 * How long the state folder's disk takes to make a 4 KB append durable (write + fsync, 50 times). Local D1, R2 and
 * the objects sync on every commit (local D1 on every query, reads included), so the staging and reservation
 * figures follow this more than they follow our code (docs/performance.md, "wrangler's local trace store").
 */
function syncLatency(dir: string, n = 50): { p50: number; p90: number } {
  const file = join(dir, "sync-probe");
  const fd = openSync(file, "w");
  const block = Buffer.alloc(4096, 1);
  const times: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      // Appended, as a WAL grows: the sync commits the file's new size too.
      writeSync(fd, block, 0, block.length, i * block.length);
      fsyncSync(fd);
      times.push(performance.now() - t);
    }
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
  const ms = (p: number) => Math.round(percentile(times, p) * 100) / 100;
  return { p50: ms(50), p90: ms(90) };
}

async function main() {
  const started = Date.now();
  const loadAtStart = { loadavg: loadavg(), cores: availableParallelism() };
  console.log(
    `Machine load at the start: ${loadAtStart.loadavg.map((n) => n.toFixed(2)).join(" / ")} on ${loadAtStart.cores} cores.`,
  );
  const only = process.env.BENCH_ONLY?.split(",").map((s) => s.trim());
  // BENCH_SKIP leaves modules out but still writes report.md (it says which were skipped).
  const skip = process.env.BENCH_SKIP?.split(",").map((s) => s.trim()) ?? [];
  const chosen = Object.entries(MODULES).filter(([name]) => (!only || only.includes(name)) && !skip.includes(name));
  if (chosen.length === 0) throw new Error(`BENCH_ONLY named no module; modules: ${Object.keys(MODULES).join(", ")}`);

  const stateDir = mkdtempSync(join(tmpdir(), "stagewise-bench-"));
  // wrangler runs its local trace store unless X_LOCAL_OBSERVABILITY=false: every request pays for it.
  const stackAtStart = {
    syncMs: syncLatency(stateDir),
    traceStore: process.env.X_LOCAL_OBSERVABILITY?.toLowerCase() === "false" ? ("off" as const) : ("on" as const),
  };
  console.log(
    `State folder: a 4 KB append + fsync takes ${stackAtStart.syncMs.p50} ms (p50), ${stackAtStart.syncMs.p90} ms (p90); wrangler's local trace store ${stackAtStart.traceStore}.`,
  );
  console.log("Starting the production build under local workerd…");
  const stack = await startStack({
    port: Number(process.env.BENCH_PORT ?? 5190),
    emulatorPortBase: Number(process.env.BENCH_EMULATOR_PORT_BASE ?? 4090),
    persistDir: stateDir,
    build: process.env.SKIP_BUILD !== "1",
    logFile: join(stateDir, "wrangler.log"),
    quiet: true,
    // No line per request from wrangler's Node process: harness work production does not have (docs/performance.md).
    requestLog: false,
    // The app's inspector, for the object module's CPU profile (bench/object.ts).
    inspectorPort: OBJECT_INSPECTOR_PORT,
  });
  const fixtureToken = async (credits = 20) => {
    const user = await createFixtureUser(stack.url, { credits });
    if (!user.sessionToken) throw new Error("fixture user came without a session");
    return user.sessionToken;
  };
  const ctx: BenchContext = {
    stack,
    fixtureToken,
    fixtureSession: async (credits) => `sw_session=${await fixtureToken(credits)}`,
  };

  let figures: Figure[] = [];
  try {
    for (const [name, mod] of chosen) {
      const runs = Math.max(MIN_RUNS, mod.runs ?? MIN_RUNS);
      console.log(`${mod.title} [${name}, ${runs} runs]…`);
      try {
        await mod.setup?.(ctx);
        const all: Figure[][] = [];
        for (let run = 0; run < runs; run++) {
          await untilQuiet();
          all.push(await measureWithRetry(mod, ctx, run));
        }
        for (const f of mergeRuns(all)) figures.push(f);
      } catch (err) {
        // One module that cannot measure (e.g. Lighthouse's NO_NAVSTART) loses its own figures, not the report's.
        const message = err instanceof Error ? err.message : String(err);
        console.error(`  ${name} could not be measured: ${message}`);
        figures.push({ group: "Not measured", name: `${name}: ${message}`, value: 0, unit: "", pass: false });
      }
    }
  } finally {
    await stack.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
  figures = applyRatios(figures).map(judge);
  for (const f of figures) {
    const budget = budgetText(f) ? ` (budget ${budgetText(f)})` : "";
    console.log(`  ${f.name}: ${f.value}${f.unit ? ` ${f.unit}` : ""} [${f.min}–${f.max}]${budget}`);
  }

  const report = {
    generatedAt: new Date().toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine: `${loadAtStart.cores} cores (CI kind)${only ? `; only ${only.join(", ")}` : ""}${skip.length ? `; skipped ${skip.join(", ")}` : ""}`,
    loadAtStart,
    stackAtStart,
    figures,
  };
  const out = join(ROOT, "bench", "results");
  mkdirSync(out, { recursive: true });
  const suffix = only ? `-${only.join("+")}` : "";
  writeFileSync(join(out, `report${suffix}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(out, `report${suffix}.md`), renderMarkdown(report));
  const over = figures.filter((f) => f.pass === false);
  console.log(
    `\nWrote bench/results/report${suffix}.md and .json in ${report.durationSeconds} s. ${over.length} figure(s) over budget.`,
  );
  for (const f of over) {
    const ratio = f.ratioBudget !== undefined ? `, ${f.ratio}x ${f.relativeTo?.label ?? ""}`.trimEnd() : "";
    console.log(`  OVER: ${f.name} = ${f.value} ${f.unit}${ratio} (budget ${budgetText(f)})`);
  }
}

await main();
