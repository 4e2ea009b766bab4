import { failureJson } from "@workers/http/result";
import { overLimit } from "@workers/services/limits";
import { currentSiteFigures, FIGURES_RULE } from "@workers/services/site-figures";
import { Hono } from "hono";
import type { ApiEnv } from "./types";

// GET /api/figures: the landing page's measured figures (docs/decisions/0185-measured-landing-figures.md,
// 0231-figures-from-the-agents-side.md). Public and the same for everyone: read from one D1 row that the first
// request of each hour recomputes (workers/services/site-figures.ts), never counted per page view; limited per
// address, since every answer is a read. The prerendered `/` fills its cards from it with its inline script.

/** The browser may keep it ten minutes. */
export const FIGURES_CACHE_CONTROL = "public, max-age=600";

export const figuresApi = new Hono<ApiEnv>().get("/", async (c) => {
  const deps = c.get("deps");
  const limited = await overLimit(deps, FIGURES_RULE, [`ip:${deps.ip}`]);
  if (limited) return failureJson(limited);
  const figures = await currentSiteFigures(c.get("db"), deps.clock());
  return c.json(figures, 200, { "Cache-Control": FIGURES_CACHE_CONTROL });
});
