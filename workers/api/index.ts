import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { createDb } from "../../db/client";
import { devToolsEnabled } from "../context";
import { resolveCurrentUser, secureCookies } from "../services/current-user";
import { devApi } from "./dev";
import { health } from "./health";
import { me } from "./me";
import type { ApiEnv } from "./types";
import { webhooks } from "./webhooks";

export const api = new Hono<ApiEnv>().basePath("/api");

api.use(async (c, next) => {
  const db = createDb(c.env.DB);
  c.set("db", db);
  const { user, setCookie } = await resolveCurrentUser(db, c.req.raw, {
    secureCookies: secureCookies(c.env, c.req.raw),
    waitUntil: (p) => c.executionCtx.waitUntil(p),
  });
  c.set("user", user);
  await next();
  if (setCookie) c.res.headers.append("Set-Cookie", setCookie);
});

api.route("/health", health);
api.route("/me", me);
api.route("/webhooks", webhooks);

// Development-only endpoints (seeding). Mounted only when the local
// configuration turns dev tools on; a deployed worker answers 404.
api.use("/dev/*", async (c, next) => {
  if (!devToolsEnabled(c.env)) return c.json({ error: "Not found." }, 404);
  await next();
});
api.route("/dev", devApi);

api.notFound((c) => c.json({ error: "Not found." }, 404));

api.onError((err, c) => {
  if (err instanceof HTTPException) return c.json({ error: err.message }, err.status);
  console.error("api error", err);
  return c.json({ error: "Something went wrong on our side. Please try again." }, 500);
});
