import { healthChecks } from "@db/schema";
import { userObject } from "@workers/objects/user-object";
import { Hono } from "hono";
import type { ApiEnv } from "./types";

type Check = "ok" | "error";

// Touches each binding for real: a D1 write and read, an R2 put and get, and an
// RPC into a Durable Object that writes its own storage.
export const health = new Hono<ApiEnv>().get("/", async (c) => {
  const db = c.get("db");
  const now = Date.now();
  const checks: Record<"d1" | "r2" | "durableObject", Check> = { d1: "error", r2: "error", durableObject: "error" };
  const errors: Record<string, string> = {};

  await Promise.all([
    (async () => {
      // RETURNING reads back what this very statement wrote, so concurrent
      // probes cannot make each other fail.
      const [row] = await db
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
      await c.env.PHOTOS.put(key, String(now));
      const obj = await c.env.PHOTOS.get(key);
      if ((await obj?.text()) === String(now)) checks.r2 = "ok";
      await c.env.PHOTOS.delete(key);
    })().catch((e: unknown) => {
      errors.r2 = String(e);
    }),
    (async () => {
      const res = await userObject(c.env, "__health__").ping();
      if (res.ok) checks.durableObject = "ok";
    })().catch((e: unknown) => {
      errors.durableObject = String(e);
    }),
  ]);

  const failing = Object.entries(checks)
    .filter(([, v]) => v !== "ok")
    .map(([k]) => k);
  for (const [k, v] of Object.entries(errors)) console.error(`health: ${k} failed: ${v}`);
  c.header("Cache-Control", "no-store");
  return c.json({ ok: failing.length === 0, checks, failing }, failing.length === 0 ? 200 : 503);
});
