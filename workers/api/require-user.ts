import { failureJson } from "@workers/http/result";
import { createMiddleware } from "hono/factory";
import { fail } from "~/shared/result";

import type { ApiEnv } from "./types";

/** A signed-in, verified user, else 401 (API callers get JSON, not a redirect). */
export const requireApiUser = createMiddleware<ApiEnv>(async (c, next) => {
  const user = c.get("user");
  if (!user?.verified) return failureJson(fail("unauthenticated", "User not authenticated"));
  await next();
});
