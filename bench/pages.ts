import * as chromeLauncher from "chrome-launcher";
import lighthouse from "lighthouse";
import { type Browser, chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../test/e2e/chromium.ts";
import { measureGridBytes, measureUploadBytes, phoneSizedJpeg, seedPhotos } from "../test/e2e/support/library-bytes.ts";
import { gzippedJs } from "../test/e2e/support/page-weight.ts";
import { qualityScore } from "../test/e2e/support/photo-quality.ts";
import type { BenchModule } from "./module.ts";
import { BUDGETS, type Figure } from "./report.ts";

// What the browser loads: a phone photo's upload and the grid's bytes, each route's JavaScript, Lighthouse (moved
// out of bench/run.ts).

/** The bytes a phone sends for a 10 MB photo (with the stored photo's size and SSIM), and the grid's bytes. */
export function photosModule(): BenchModule {
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

/** A context with the session cookie, if any, for gzippedJs. */
async function contextFor(browser: Browser, url: string, cookie?: string) {
  const ctx = await browser.newContext();
  if (cookie) {
    const [name, value] = cookie.split("=");
    await ctx.addCookies([{ name: name!, value: value!, url }]);
  }
  return ctx;
}

export const bundle: BenchModule = {
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
          value:
            Math.round(
              (await gzippedJs(await contextFor(browser, stack.url, withCookie), `${stack.url}${path}`)) / 102.4,
            ) / 10,
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
export function lighthouseModule(label: string, path: string, runs: number, signedIn: boolean): BenchModule {
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
