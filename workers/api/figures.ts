import { computeSiteFigures, figuresCacheKey } from "@workers/services/site-figures";
import { Hono } from "hono";
import type { ApiEnv } from "./types";

// GET /api/figures: the landing page's measured figures (docs/decisions/0185-measured-landing-figures.md). Public,
// the same for everyone, and kept by the edge cache under a key that changes every hour: D1 is read at most once an
// hour per location, never per page view. The prerendered `/` fills its cards from it with its inline script.

/** The browser may keep it ten minutes; the edge cache an hour (the key changes with the hour anyway). */
export const FIGURES_CACHE_CONTROL = "public, max-age=600, s-maxage=3600";

export const figuresApi = new Hono<ApiEnv>().get("/", async (c) => {
  const now = c.get("deps").clock();
  const key = new Request(figuresCacheKey(new URL(c.req.url).origin, now));
  const cache = (caches as unknown as { default: Cache }).default;
  const hit = await cache.match(key);
  if (hit) return new Response(hit.body, hit);
  const figures = await computeSiteFigures(c.get("db"), now);
  const answer = new Response(JSON.stringify(figures), {
    headers: { "Content-Type": "application/json; charset=UTF-8", "Cache-Control": FIGURES_CACHE_CONTROL },
  });
  c.executionCtx.waitUntil(cache.put(key, answer.clone()));
  return answer;
});

/** Forgets this hour's cached figures (the dev fixture that seeds jobs, so a test sees them at once). */
export async function forgetCachedFigures(origin: string, now: number): Promise<void> {
  await (caches as unknown as { default: Cache }).default.delete(new Request(figuresCacheKey(origin, now)));
}
