import { isForeignOrigin } from "@workers/http/security";
import { accountSummary, openLiveChannel } from "@workers/services/account";
import { Hono } from "hono";
import type { ApiEnv } from "./types";

// The signed-in user's own data, and the live channel that pushes their
// balance whenever it changes (docs/decisions/0023-live-balance-push.md).
export const me = new Hono<ApiEnv>()
  .get("/", async (c) => {
    const user = c.get("user");
    if (!user) return c.json({ error: "Not signed in." }, 401);
    const summary = await accountSummary(c.get("db"), user.id);
    if (!summary) return c.json({ error: "Not signed in." }, 401);
    c.header("Cache-Control", "no-store");
    return c.json(summary);
  })
  .get("/live", async (c) => {
    const user = c.get("user");
    if (!user) return c.json({ error: "Not signed in." }, 401);
    if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
      return c.json({ error: "Expected a WebSocket upgrade." }, 426);
    }
    // Browsers send cookies with cross-site WebSocket handshakes and CORS does
    // not apply to them: only our own pages may open the channel.
    const origin = c.req.header("Origin");
    if (!origin || isForeignOrigin(origin, c.env.APP_ORIGIN)) {
      return c.json({ error: "Cross-site request refused." }, 403);
    }
    const socket = await openLiveChannel(c.env, user.id);
    if (!socket) return c.json({ error: "Live updates are unavailable." }, 503);
    return new Response(null, { status: 101, webSocket: socket });
  });
