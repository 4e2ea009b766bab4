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
