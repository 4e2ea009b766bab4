import { env } from "cloudflare:workers";
import { rateLimit } from "@workers/objects/rate-limiter";
import { describe, expect, it } from "vitest";

describe("rate limiter", () => {
  it("allows up to the limit per key and refuses after, with a retry time", async () => {
    const rule = { name: `t-${crypto.randomUUID()}`, limit: 3, windowMs: 60_000 };
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await rateLimit(env, rule, ["a@example.test", "ip-1"]));
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, false, false]);
    expect(results[4]!.retryAfterSeconds).toBeGreaterThan(0);
    // Another e-mail from the same IP is refused because the IP key is over.
    expect((await rateLimit(env, rule, ["b@example.test", "ip-1"])).allowed).toBe(false);
    // A fresh e-mail and IP are fine.
    expect((await rateLimit(env, rule, ["c@example.test", "ip-2"])).allowed).toBe(true);
  });

  it("counts concurrent attempts exactly", async () => {
    const rule = { name: `c-${crypto.randomUUID()}`, limit: 10, windowMs: 60_000 };
    const results = await Promise.all(Array.from({ length: 30 }, () => rateLimit(env, rule, ["same-key"])));
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
  });
});
