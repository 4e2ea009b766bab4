import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import autocannon from "autocannon";
import { ROOT } from "../scripts/stack.ts";
import { seedPhotos } from "../test/e2e/support/library-bytes.ts";
import { type BenchModule, median } from "./module.ts";
import { BUDGETS, type Figure } from "./report.ts";

// Server-rendered pages under load, each taking turns with the bare React Router page (moved out of bench/run.ts).

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
async function paired(
  bareUrl: string,
  url: string,
  headers: Record<string, string>,
  bareHeaders: Record<string, string> = {},
) {
  const bareTurns: autocannon.Result[] = [];
  const pageTurns: autocannon.Result[] = [];
  for (const side of ["bare", "page", "page", "bare"] as const) {
    if (side === "bare") bareTurns.push(await load(bareUrl, bareHeaders, TURN));
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

/** Server-rendered pages under load, each taking turns with the bare React Router page (the ratios' baseline). */
export function ssrModule(): BenchModule {
  let libraryCookie = "";
  return {
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
        // Issue 44: the library is held to the bare page *with a session* (both read the session; the library also
        // reads and renders its page of photos), so its turns alternate with that page, signed in as the same user.
        const library = label.includes("photos");
        const r = await paired(bareUrl, `${stack.url}${path}`, headers, library ? headers : {});
        if (!library) bareTurns.push(...r.bareTurns);
        const against = library
          ? (figure: string) => ({ name: `${BARE} with a session ${figure}`, label: "the bare page with a session" })
          : rel;
        out.push(
          {
            group: "SSR",
            name: `${label} requests/s`,
            value: Math.round(r.page.rate),
            unit: "req/s",
            relativeTo: against("requests/s"),
            pairedRatio: r.rateRatio,
            ...BUDGETS.rps(label),
          },
          {
            group: "SSR",
            name: `${label} p50`,
            value: r.page.p50,
            unit: "ms",
            relativeTo: against("p50"),
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
}
