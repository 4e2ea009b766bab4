import { Hono } from "hono";
import { seedDemoUsers } from "../services/seed";
import type { ApiEnv } from "./types";

export const devApi = new Hono<ApiEnv>().post("/seed", async (c) => {
  const seeded = await seedDemoUsers(c.get("db"), c.env);
  return c.json({ ok: true, users: seeded });
});
