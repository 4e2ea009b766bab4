import { devToolsEnabled } from "@workers/http/context";
import { failureJson } from "@workers/http/result";
import { deepHealth, deepProbeAllowed, publicHealth } from "@workers/services/health";
import { Hono } from "hono";
import { fail } from "~/shared/result";
import type { ApiEnv } from "./types";

// GET /api/health: a read-only answer anyone may ask for.
// GET /api/health?deep=1: writes and reads every binding; dev tools or the
// X-Health-Probe header carrying HEALTH_PROBE_SECRET only.
export const health = new Hono<ApiEnv>().get("/", async (c) => {
  c.header("Cache-Control", "no-store");
  if (c.req.query("deep") === undefined) {
    const r = await publicHealth(c.get("deps"));
    return c.json(r, r.ok ? 200 : 503);
  }
  if (!deepProbeAllowed(c.env, devToolsEnabled(c.env), c.req.header("X-Health-Probe"))) {
    return failureJson(fail("forbidden", "The deep health probe needs the probe secret."));
  }
  const r = await deepHealth(c.get("deps"));
  return c.json(r, r.ok ? 200 : 503);
});
