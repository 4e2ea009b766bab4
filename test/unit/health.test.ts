import { env } from "cloudflare:workers";
import { health } from "@workers/api/health";
import { deepProbeAllowed } from "@workers/services/health";
import { describe, expect, it } from "vitest";

describe("the deep health probe", () => {
  const env = { HEALTH_PROBE_SECRET: "s".repeat(32) } as Env;
  it("runs with dev tools on, or with the exact probe secret", () => {
    expect(deepProbeAllowed({} as Env, true, null)).toBe(true);
    expect(deepProbeAllowed(env, false, "s".repeat(32))).toBe(true);
  });
  it("is refused without dev tools and without the secret, or with a wrong one", () => {
    expect(deepProbeAllowed({} as Env, false, "anything")).toBe(false);
    expect(deepProbeAllowed(env, false, null)).toBe(false);
    expect(deepProbeAllowed(env, false, "s".repeat(31))).toBe(false);
    expect(deepProbeAllowed(env, false, `${"s".repeat(31)}t`)).toBe(false);
  });
});

describe("GET /api/health?deep=1 without dev tools", () => {
  const prod = { ...env, DEV_TOOLS: "0", HEALTH_PROBE_SECRET: "p".repeat(32) } as Env;
  it("answers 403 without the secret header or with a wrong one, before touching any binding", async () => {
    for (const headers of <HeadersInit[]>[{}, { "X-Health-Probe": "wrong" }, { "X-Health-Probe": "p".repeat(31) }]) {
      // No deps are set: reaching a binding would throw, so a 403 proves nothing was written.
      const res = await health.request("/?deep=1", { headers }, prod);
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ ok: false, code: "forbidden" });
      const sample = await health.request("/provider-sample", { method: "PUT", headers, body: "x" }, prod);
      expect(sample.status).toBe(403);
    }
  });
});
