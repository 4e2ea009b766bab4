import { readBytes } from "@workers/http/body";
import { devToolsEnabled } from "@workers/http/context";
import { failureJson } from "@workers/http/result";
import { serveObject } from "@workers/http/serve-object";
import { verifySampleSignature } from "@workers/lib/signed-urls";
import {
  deepHealth,
  deepProbeAllowed,
  providerSampleKey,
  publicHealth,
  storeProviderSample,
} from "@workers/services/health";
import { Hono } from "hono";
import { MAX_UPLOAD_BYTES } from "~/shared/catalog";
import { fail, NOT_FOUND } from "~/shared/result";
import { NO_STORE } from "./answers";
import type { ApiEnv } from "./types";

// GET /api/health: a read-only answer anyone may ask for.
// GET /api/health?deep=1: writes and reads every binding; dev tools or the
// X-Health-Probe header carrying HEALTH_PROBE_SECRET only.
// PUT /api/health/provider-sample (the same guard): stores the provider smoke
// check's sample image and answers a signed address of it, which
// GET /api/health/provider-sample/:name serves to whoever holds the signature
// (the provider). docs/decisions/0151-provider-as-documented.md
const PROBE_REFUSED = "The deep health probe needs the probe secret.";

export const health = new Hono<ApiEnv>()
  .get("/", async (c) => {
    c.header("Cache-Control", "no-store");
    if (c.req.query("deep") === undefined) {
      const r = await publicHealth(c.get("deps"));
      return c.json(r, r.ok ? 200 : 503);
    }
    if (!deepProbeAllowed(c.env, devToolsEnabled(c.env), c.req.header("X-Health-Probe"))) {
      return failureJson(fail("forbidden", PROBE_REFUSED));
    }
    const r = await deepHealth(c.get("deps"));
    return c.json(r, r.ok ? 200 : 503);
  })
  .put("/provider-sample", async (c) => {
    if (!deepProbeAllowed(c.env, devToolsEnabled(c.env), c.req.header("X-Health-Probe"))) {
      return failureJson(fail("forbidden", PROBE_REFUSED));
    }
    const body = await readBytes(c.req.raw, MAX_UPLOAD_BYTES);
    if (!body.ok) return failureJson(body);
    const stored = await storeProviderSample(c.get("deps"), body.bytes);
    if (!stored.ok) return failureJson(stored);
    return c.json({ name: stored.name, imageUrl: stored.imageUrl }, 201, NO_STORE);
  })
  .get("/provider-sample/:name", async (c) => {
    const name = c.req.param("name");
    const ok = await verifySampleSignature(c.env, name, c.req.query("exp"), c.req.query("sig"), Date.now());
    if (!ok) return failureJson(fail("forbidden", "Forbidden."));
    const key = providerSampleKey(name);
    if (!key) return failureJson(NOT_FOUND);
    return serveObject(c.env.PHOTOS, key, NO_STORE);
  });
