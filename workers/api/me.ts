import { failureJson } from "@workers/http/result";
import { isForeignOrigin } from "@workers/http/security";
import { accountSummary, openLiveChannel } from "@workers/services/account";
import { Hono } from "hono";
import { fail } from "~/shared/result";
import type { ApiEnv } from "./types";

// The signed-in user's own data, and the live channel that pushes their
// balance whenever it changes (docs/decisions/0023-live-balance-push.md).
const NOT_SIGNED_IN = Object.freeze(fail("unauthenticated", "Not signed in."));

export const me = new Hono<ApiEnv>()
  .get("/", async (c) => {
    const user = c.get("user");
    if (!user) return failureJson(NOT_SIGNED_IN);
    const summary = await accountSummary(c.get("db"), user.id);
    if (!summary) return failureJson(NOT_SIGNED_IN);
    c.header("Cache-Control", "no-store");
    return c.json(summary);
  })
  .get("/live", async (c) => {
    const user = c.get("user");
    if (!user) return failureJson(NOT_SIGNED_IN);
    if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
      return failureJson(fail("upgrade_required", "Expected a WebSocket upgrade."));
    }
    // Browsers send cookies with cross-site WebSocket handshakes and CORS does
    // not apply to them: only our own pages may open the channel.
    const origin = c.req.header("Origin");
    if (!origin || isForeignOrigin(origin, c.env.APP_ORIGIN)) {
      return failureJson(fail("forbidden", "Cross-site request refused."));
    }
    const socket = await openLiveChannel(c.env, user.id);
    if (!socket) return failureJson(fail("unavailable", "Live updates are unavailable."));
    return new Response(null, { status: 101, webSocket: socket });
  });
