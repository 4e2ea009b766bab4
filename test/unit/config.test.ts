import { ConfigError, parseConfig } from "@workers/config";
import { describe, expect, it } from "vitest";

const local = {
  APP_ENV: "development",
  APP_ORIGIN: "http://localhost:5173",
  SUPPORT_EMAIL: "support@example.com",
  MAIL_FROM: "Stagewise <no-reply@example.com>",
  SIGNUP_CREDITS: "3",
  DEV_TOOLS: "1",
  MAIL_API_KEY: "k",
  PROVIDER_API_KEY: "k",
  SIGNING_SECRET: "local",
  STRIPE_SECRET_KEY: "sk_test_x",
  STRIPE_WEBHOOK_SECRET: "whsec_x",
  GOOGLE_CLIENT_ID: "id",
  GOOGLE_CLIENT_SECRET: "secret",
  MAIL_API_URL: "http://localhost:4011",
};

const deployed = {
  ...local,
  APP_ENV: "production",
  APP_ORIGIN: "https://stagewise.example.com",
  DEV_TOOLS: "0",
  SIGNING_SECRET: "x".repeat(32),
  PROVIDER_BASE_URL: "https://api.decor8.ai",
  HEALTH_PROBE_SECRET: "p".repeat(32),
  MAIL_API_URL: undefined,
};

function problems(env: Record<string, unknown>): string[] {
  try {
    parseConfig(env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe("configuration", () => {
  it("parses a local configuration into typed values", () => {
    const c = parseConfig(local);
    expect(c.SIGNUP_CREDITS).toBe(3);
    expect(c.PROVIDER_TIMEOUT_MS).toBeUndefined();
    expect(parseConfig({ ...local, PROVIDER_TIMEOUT_MS: "1500" }).PROVIDER_TIMEOUT_MS).toBe(1500);
  });

  it("accepts a complete production configuration", () => {
    expect(problems(deployed)).toEqual([]);
  });

  it("names every missing secret and unsafe production setting", () => {
    const { STRIPE_WEBHOOK_SECRET: _a, GOOGLE_CLIENT_SECRET: _b, ...missing } = deployed;
    expect(problems(missing)).toEqual([
      "STRIPE_WEBHOOK_SECRET Invalid input: expected string, received undefined",
      "GOOGLE_CLIENT_SECRET Invalid input: expected string, received undefined",
    ]);
    expect(problems({ ...deployed, DEV_TOOLS: "1" })).toEqual(["DEV_TOOLS must be 0 in production"]);
    expect(problems({ ...deployed, HEALTH_PROBE_SECRET: undefined })).toEqual([
      "HEALTH_PROBE_SECRET is not set (the deploy's smoke check needs it)",
    ]);
    expect(problems({ ...deployed, SIGNING_SECRET: "short" })).toEqual([
      "SIGNING_SECRET must be at least 32 characters",
    ]);
    expect(problems({ ...deployed, STRIPE_API_URL: "http://localhost:4012" })).toEqual([
      "STRIPE_API_URL is a local emulator address; unset it in production",
    ]);
  });

  it("takes the signing keys from SIGNING_KEYS, SIGNING_SECRET alone, or both; never neither (ADR 0182)", () => {
    const { SIGNING_SECRET: _s, ...keyless } = deployed;
    const k = (c: string) => c.repeat(32);
    expect(problems({ ...keyless, SIGNING_KEYS: `k2:${k("b")},k1:${k("a")}` })).toEqual([]);
    expect(problems({ ...deployed, SIGNING_KEYS: `k1:${k("a")}` })).toEqual([]);
    expect(problems(keyless)).toEqual(["SIGNING_KEYS is not set"]);
    expect(problems({ ...keyless, SIGNING_KEYS: `k1:${k("a")},k2:short` })).toEqual([
      "SIGNING_KEYS key k2 must be at least 32 characters",
    ]);
    expect(problems({ ...local, SIGNING_KEYS: "local1:x" })).toEqual([]);
  });

  it("refuses a number that is not one instead of turning it into NaN", () => {
    expect(problems({ ...local, SIGNUP_CREDITS: "three" })).toEqual(["SIGNUP_CREDITS must be a whole number"]);
  });
});
