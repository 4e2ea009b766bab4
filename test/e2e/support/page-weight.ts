import { gzipSync } from "node:zlib";
import type { BrowserContext } from "playwright-core";

// The JavaScript a page makes a phone download, measured as the browser loads it: one measure for the e2e guard
// (test/e2e/page-weight.e2e.ts) and the bench (bench/pages.ts), so the two cannot drift apart.

/**
 * The gzipped bytes of JavaScript a page makes the browser load in `ctx`: every script Chromium fetches from /assets/
 * until the page has hydrated and the network is idle (modulepreloads, the hydration script's imports, the imports
 * it starts at once). Measured in the browser because cached public pages carry no modulepreload links
 * (docs/decisions/0132) and the HTML also names modules that load only on navigation. Closes `ctx`.
 */
export async function gzippedJs(ctx: BrowserContext, url: string): Promise<number> {
  const page = await ctx.newPage();
  const bodies: Promise<number | Error>[] = [];
  page.on("response", (res) => {
    // Each body's failure is kept, not thrown: a script answered after the count below would otherwise reject once
    // the context is closed, with nobody awaiting it, and that unhandled rejection ended a whole bench run.
    if (res.request().resourceType() === "script" && new URL(res.url()).pathname.startsWith("/assets/"))
      bodies.push(
        res.body().then(
          (b) => gzipSync(b).length,
          (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
        ),
      );
  });
  await page.goto(url);
  await page.waitForSelector("html[data-hydrated=true]");
  await page.waitForLoadState("networkidle");
  const sizes = await Promise.all(bodies);
  await ctx.close();
  const failed = sizes.find((s) => s instanceof Error);
  if (failed) throw new Error(`a script's body could not be read: ${failed.message}`);
  return sizes.reduce<number>((a, b) => a + (b as number), 0);
}
