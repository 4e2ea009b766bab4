import { createMiddleware } from "hono/factory";

import type { ApiEnv } from "./types";

/** A signed-in, verified user, else 401 (API callers get JSON, not a redirect). */
export const requireApiUser = createMiddleware<ApiEnv>(async (c, next) => {
  const user = c.get("user");
  if (!user?.verified) return c.json({ error: "User not authenticated" }, 401);
  await next();
});
