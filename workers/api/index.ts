import { createDb } from "@db/client";
import { devToolsEnabled } from "@workers/http/context";
import { resolveCurrentUser, secureCookies } from "@workers/services/current-user";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import { adminApi } from "./admin";
import { devApi } from "./dev";
import { health } from "./health";
import { jobsApi } from "./jobs";
import { me } from "./me";
import { photosApi } from "./photos";
import type { ApiEnv } from "./types";
import { uploadsApi } from "./uploads";
import { webhooks } from "./webhooks";

export const api = new Hono<ApiEnv>().basePath("/api");

async function drain(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<void> {
  if (!body) return;
  const reader = body.getReader();
  let seen = 0;
  try {
    while (seen < maxBytes) {
      const { done, value } = await reader.read();
      if (done) return;
      seen += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // the client went away: nothing to answer
  }
}

// JSON endpoints take small bodies; photo bytes go through the upload routes,
// which check their own sizes.
const JSON_BODY_LIMIT = 64 * 1024;
api.use(async (c, next) => {
  if (c.req.path.startsWith("/api/uploads") || c.req.path.startsWith("/api/webhooks")) return next();
  return bodyLimit({
    maxSize: JSON_BODY_LIMIT,
    onError: async (c) => {
      // Read (and drop) what the client is still sending, up to a bound, so it
      // gets the 413 instead of a connection reset mid-upload.
      await drain(c.req.raw.body, 16 * 1024 * 1024);
      return c.json({ error: `The request body is larger than ${JSON_BODY_LIMIT / 1024} KB.` }, 413);
    },
  })(c, next);
});

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
api.route("/admin", adminApi);
api.route("/uploads", uploadsApi);
api.route("/photos", photosApi);
api.route("/", jobsApi);
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
