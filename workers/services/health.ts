import { healthChecks } from "@db/schema";
import { timingSafeEqual } from "@workers/lib/crypto";
import { userObject } from "@workers/objects/client";
import { sql } from "drizzle-orm";
import type { Deps } from "./deps";

// Two probes. The public one (GET /api/health) only reads: anyone may call it
// as often as they like without writing anything. The deep one writes and
// reads D1, puts and gets R2 and calls a Durable Object that writes its own
// storage; it answers only with dev tools on or the HEALTH_PROBE_SECRET header.

type Check = "ok" | "error";
export type HealthReport = { ok: boolean; checks: Record<string, Check>; failing: string[] };

function report(checks: Record<string, Check>, errors: Record<string, string>): HealthReport {
  for (const [k, v] of Object.entries(errors)) console.error(`health: ${k} failed: ${v}`);
  const failing = Object.entries(checks)
    .filter(([, v]) => v !== "ok")
    .map(([k]) => k);
  return { ok: failing.length === 0, checks, failing };
}

/** One read of D1: the database answers. */
export async function publicHealth(deps: Pick<Deps, "db">): Promise<HealthReport> {
  const errors: Record<string, string> = {};
  const checks: Record<string, Check> = { d1: "error" };
  try {
    const row = await deps.db.get<{ one: number }>(sql`SELECT 1 AS one`);
    if (row?.one === 1) checks.d1 = "ok";
  } catch (e) {
    errors.d1 = String(e);
  }
  return report(checks, errors);
}

/** Whether this request may run the deep probe (it writes). */
export function deepProbeAllowed(env: Env, devTools: boolean, header: string | null | undefined): boolean {
  if (devTools) return true;
  const secret = env.HEALTH_PROBE_SECRET;
  if (!secret || !header) return false;
  const enc = new TextEncoder();
  const a = enc.encode(secret);
  const b = enc.encode(header);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Touches each binding for real: a D1 write and read, an R2 put and get, a Durable Object's storage. */
export async function deepHealth(deps: Pick<Deps, "db" | "bucket" | "env" | "clock">): Promise<HealthReport> {
  const now = deps.clock();
  const checks: Record<string, Check> = { d1: "error", r2: "error", durableObject: "error" };
  const errors: Record<string, string> = {};
  await Promise.all([
    (async () => {
      // RETURNING reads back what this very statement wrote, so concurrent probes cannot fail each other.
      const [row] = await deps.db
        .insert(healthChecks)
        .values({ id: "probe", checkedAt: now })
        .onConflictDoUpdate({ target: healthChecks.id, set: { checkedAt: now } })
        .returning();
      if (row?.checkedAt === now) checks.d1 = "ok";
    })().catch((e: unknown) => {
      errors.d1 = String(e);
    }),
    (async () => {
      const key = `health/probe-${crypto.randomUUID()}`;
      await deps.bucket.put(key, String(now));
      const obj = await deps.bucket.get(key);
      if ((await obj?.text()) === String(now)) checks.r2 = "ok";
      await deps.bucket.delete(key);
    })().catch((e: unknown) => {
      errors.r2 = String(e);
    }),
    (async () => {
      const res = await userObject(deps.env, "__health__").ping();
      if (res.ok) checks.durableObject = "ok";
    })().catch((e: unknown) => {
      errors.durableObject = String(e);
    }),
  ]);
  return report(checks, errors);
}
