import { DurableObject } from "cloudflare:workers";
import { observed } from "@workers/lib/observed";

/**
 * Counts attempts per key in fixed windows, where every isolate sees the same
 * count (an in-memory limiter would not: isolates are many and short-lived).
 * One instance per limited key (e.g. "signin:ip:203.0.113.9"), so counters
 * never contend with each other.
 */
export class RateLimiter extends DurableObject<Env> {
  async hit(
    limit: number,
    windowMs: number,
  ): Promise<{ allowed: boolean; remaining: number; retryAfterSeconds: number }> {
    const now = Date.now();
    const windowStart = now - (now % windowMs);
    const state = (await this.ctx.storage.get<{ windowStart: number; count: number }>("w")) ?? {
      windowStart,
      count: 0,
    };
    const current = state.windowStart === windowStart ? state : { windowStart, count: 0 };
    current.count += 1;
    await this.ctx.storage.put("w", current);
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(windowStart + windowMs * 2);
    const allowed = current.count <= limit;
    return {
      allowed,
      remaining: Math.max(0, limit - current.count),
      retryAfterSeconds: allowed ? 0 : Math.ceil((windowStart + windowMs - now) / 1000),
    };
  }

  /** The count in the current window, without counting this look. */
  async peek(windowMs: number): Promise<{ count: number; retryAfterSeconds: number }> {
    const now = Date.now();
    const windowStart = now - (now % windowMs);
    const state = await this.ctx.storage.get<{ windowStart: number; count: number }>("w");
    const count = state && state.windowStart === windowStart ? state.count : 0;
    return { count, retryAfterSeconds: Math.ceil((windowStart + windowMs - now) / 1000) };
  }

  override alarm(): Promise<void> {
    return observed(
      this.env,
      (p) => this.ctx.waitUntil(p),
      { where: "rate-limiter alarm" },
      () => this.ctx.storage.deleteAll(),
    );
  }
}

export interface RateRule {
  /** Short name of what is limited, e.g. "signin". */
  name: string;
  limit: number;
  windowMs: number;
}

export const RATE_LIMITED_MESSAGE = "Too many attempts. Please wait a few minutes and try again.";

/**
 * Counts one attempt against every key (e.g. per e-mail and per IP) and tells
 * whether all of them are still within the rule.
 */
export async function rateLimit(
  env: Env,
  rule: RateRule,
  keys: (string | null | undefined)[],
): Promise<{ allowed: boolean; retryAfterSeconds: number }> {
  const results = await Promise.all(
    keys
      .filter((k): k is string => Boolean(k))
      .map((k) => {
        const id = env.RATE_LIMITER.idFromName(`${rule.name}:${k.toLowerCase()}`);
        return env.RATE_LIMITER.get(id).hit(rule.limit, rule.windowMs);
      }),
  );
  const refused = results.filter((r) => !r.allowed);
  return {
    allowed: refused.length === 0,
    retryAfterSeconds: Math.max(0, ...refused.map((r) => r.retryAfterSeconds)),
  };
}

function limiter(env: Env, rule: RateRule, key: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`${rule.name}:${key.toLowerCase()}`));
}

/** How many attempts one key has made in the rule's current window (counts nothing). */
export function peekLimit(
  env: Env,
  rule: RateRule,
  key: string,
): Promise<{ count: number; retryAfterSeconds: number }> {
  return limiter(env, rule, key).peek(rule.windowMs);
}

export function clientIp(request: Request): string {
  return request.headers.get("CF-Connecting-IP") ?? "local";
}
