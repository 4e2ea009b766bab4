import { Hono } from "hono";
import type { ApiEnv } from "./types";

// Every /api/admin route needs a signed-in, verified admin. Anyone else gets
// the same 404 as an unknown path, so the API does not reveal it exists.
export const adminApi = new Hono<ApiEnv>();

adminApi.use(async (c, next) => {
  const user = c.get("user");
  if (!user?.verified || user.role !== "admin") return c.json({ error: "Not found." }, 404);
  await next();
});

// Lets the admin screen (and tests) check access; the admin issue adds the real endpoints.
adminApi.get("/", (c) => c.json({ ok: true, admin: c.get("user")?.email }));
