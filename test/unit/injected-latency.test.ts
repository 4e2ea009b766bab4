import { env } from "cloudflare:test";
import { withInjectedLatency } from "@workers/lib/injected-latency";
import { describe, expect, it } from "vitest";

// The bench's storage latency (workers/lib/injected-latency.ts) must never reach production, and must not change
// what D1 and R2 answer: the object's batches hand the runtime its own statements back.
describe("injected storage latency", () => {
  it("is off unless dev tools are on and a latency is set", () => {
    expect(withInjectedLatency(env)).toBe(env);
    const prod = { ...env, APP_ENV: "production", INJECT_D1_MS: "20", INJECT_R2_MS: "20" };
    expect(withInjectedLatency(prod)).toBe(prod);
    const dev = { ...env, DEV_TOOLS: "1", APP_ENV: "development", INJECT_D1_MS: "20" };
    const slowed = withInjectedLatency(dev);
    expect(slowed).not.toBe(dev);
    expect(slowed.DB).not.toBe(env.DB);
    expect(slowed.PHOTOS).toBe(env.PHOTOS);
  });

  it("answers as D1 and R2 do: statements, bound statements, batches and objects", async () => {
    const slowed = withInjectedLatency({
      ...env,
      DEV_TOOLS: "1",
      APP_ENV: "development",
      INJECT_D1_MS: "5",
      INJECT_R2_MS: "5",
    });
    expect(await slowed.DB.prepare("SELECT ?1 + 1 AS n").bind(41).first<{ n: number }>()).toEqual({ n: 42 });
    const [a, b] = await slowed.DB.batch<{ n: number }>([
      slowed.DB.prepare("SELECT 1 AS n"),
      slowed.DB.prepare("SELECT ?1 AS n").bind(2),
    ]);
    expect([a?.results[0]?.n, b?.results[0]?.n]).toEqual([1, 2]);
    await slowed.PHOTOS.put("latency/probe", "bytes");
    expect(await (await slowed.PHOTOS.get("latency/probe"))?.text()).toBe("bytes");
    await slowed.PHOTOS.delete("latency/probe");
    expect(await env.PHOTOS.head("latency/probe")).toBeNull();
  });
});
