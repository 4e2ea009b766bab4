import { healthChecks } from "@db/schema";
import { sha256 } from "@oslojs/crypto/sha2";
import { encodeHexLowerCase } from "@oslojs/encoding";
import { timingSafeEqual } from "@workers/lib/crypto";
import { log } from "@workers/lib/log";
import { signedSampleUrl } from "@workers/lib/signed-urls";
import { userObject } from "@workers/objects/client";
import { sql } from "drizzle-orm";
import { hasCompleteEnding, sniffImageType } from "~/shared/image-format";
import { fail, ok, type Result } from "~/shared/result";
import type { Deps } from "./request-deps";

// Two probes. The public one (GET /api/health) only reads: anyone may call it
// as often as they like without writing anything. The deep one writes and
// reads D1, puts and gets R2 and calls a Durable Object that writes its own
// storage; it answers only with dev tools on or the HEALTH_PROBE_SECRET header.

type Check = "ok" | "error";
export type HealthReport = { ok: boolean; checks: Record<string, Check>; failing: string[] };

function report(checks: Record<string, Check>, errors: Record<string, string>): HealthReport {
  for (const [k, v] of Object.entries(errors)) log.error(`health: ${k} failed: ${v}`, { check: k, where: "health" });
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

/**
 * Touches each binding for real: a D1 write and read, an R2 put and get, a Durable Object's storage, the check
 * Worker (`checkWorker`, through its service binding) and its Images binding (`checkImages`); and says whether a
 * provider key is set (`providerKey`). It makes no provider call: a call costs money, so only
 * `npm run provider:smoke` proves the key works (docs/decisions/0151-provider-as-documented.md).
 */
export async function deepHealth(deps: Pick<Deps, "db" | "bucket" | "env" | "clock">): Promise<HealthReport> {
  const now = deps.clock();
  const checks: Record<string, Check> = {
    d1: "error",
    r2: "error",
    durableObject: "error",
    providerKey: deps.env.PROVIDER_API_KEY ? "ok" : "error",
    checkWorker: "error",
    checkImages: "error",
  };
  const errors: Record<string, string> = {};
  if (checks.providerKey === "error") errors.providerKey = "PROVIDER_API_KEY is not set";
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
    // The check Worker through its service binding, and the Images binding it reduces every picture with
    // (workers/checker/health.ts): a check Worker that is down leaves every result unchecked.
    (async () => {
      const res = await deps.env.CHECKER.fetch("https://checker.internal/health", {
        signal: AbortSignal.timeout(5000),
      });
      const body = (await res.json().catch(() => null)) as { images?: string } | null;
      if (body && typeof body.images === "string") checks.checkWorker = "ok";
      else errors.checkWorker = `answered ${res.status}`;
      if (body?.images === "ok") checks.checkImages = "ok";
      else errors.checkImages = "the check Worker's Images binding failed";
    })().catch((e: unknown) => {
      errors.checkWorker = String(e);
      errors.checkImages = "not reached";
    }),
  ]);
  return report(checks, errors);
}

/** Where the provider smoke check's sample images live (content-addressed: the same sample is stored once). */
const SAMPLE_PREFIX = "health/provider-sample/";
const SAMPLE_NAME = /^[0-9a-f]{64}\.(jpg|png)$/;

/**
 * Stores an image the provider smoke check sends (scripts/provider-smoke.ts) and answers a short-lived signed
 * address of it, which the real provider must be able to fetch: the one thing a local run cannot prove.
 */
export async function storeProviderSample(
  deps: Pick<Deps, "bucket" | "env" | "clock">,
  bytes: Uint8Array,
): Promise<Result<{ name: string; imageUrl: string }>> {
  const type = sniffImageType(bytes);
  if (!type || !hasCompleteEnding(type, bytes.subarray(Math.max(0, bytes.length - 16)))) {
    return fail("invalid", "The sample must be a whole JPEG or PNG image.");
  }
  const name = `${encodeHexLowerCase(sha256(bytes))}.${type === "image/png" ? "png" : "jpg"}`;
  await deps.bucket.put(`${SAMPLE_PREFIX}${name}`, bytes, { httpMetadata: { contentType: type } });
  return ok({ name, imageUrl: await signedSampleUrl(deps.env, name, deps.clock()) });
}

/** The stored key of a sample named in a signed address, or null for a name that cannot be one. */
export function providerSampleKey(name: string): string | null {
  return SAMPLE_NAME.test(name) ? `${SAMPLE_PREFIX}${name}` : null;
}
