import { failureJson } from "@workers/http/result";
import { photoAccess } from "@workers/services/teams/access";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { NOT_FOUND } from "~/shared/result";
import type { ApiEnv } from "./types";

/**
 * The owner scope to read the route's photo under (docs/decisions/0280-shared-team-listings.md): the signed-in user
 * for their own photo, the uploader for a photo of a team listing they are an active member of; null (404) for
 * anything else. The reads after it filter by this id as they always did.
 */
export async function photoOwner(c: Context<ApiEnv>, photoId: string): Promise<string | null> {
  return (await photoAccess(c.get("db"), c.get("user")!.id, photoId))?.ownerId ?? null;
}

/**
 * 404 for a photo route on a photo the user may not reach: a removed member's own upload in a team listing included,
 * so nothing they send can change it (the routes after this still act on the user's own rows only).
 */
export const requireReachablePhoto = createMiddleware<ApiEnv>(async (c, next) => {
  if (!(await photoOwner(c, c.req.param("id") ?? ""))) return failureJson(NOT_FOUND);
  await next();
});
