import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { bearer, json, listen } from "./http.ts";
import { findRoute, route } from "./router.ts";
import { apiHandler, apiRoutes } from "./stripe-api.ts";
import { createEngine } from "./stripe-engine.ts";
import { checkoutPage, dollars, esc, html, page, portalPage, redirect } from "./stripe-pages.ts";
import { emptyState, type State, type StripeEmulatorOptions } from "./stripe-state.ts";

// The Stripe emulator: the slice of Stripe's HTTP API our server calls through
// the real `stripe` SDK (customers, prices by lookup key, Checkout Sessions,
// subscriptions, Billing Portal sessions), a hosted checkout page where a
// tester pays or cancels, a billing portal page, and real signed webhook
// events posted to the app. See docs/decisions/0022-stripe-emulator.md.
//
// Files: stripe-state.ts (what it keeps), stripe-objects.ts (Stripe's object
// shapes, checked against the stripe package's types), stripe-engine.ts (what
// happens to subscriptions and which events follow), stripe-api.ts (the /v1
// route table), stripe-pages.ts (hosted pages); this file wires them to HTTP
// and holds the route table of the hosted pages and the test controls.

export { emulatedPrices, parseStripeForm, type StripeEmulatorOptions, signPayload } from "./stripe-state.ts";

type MoneyBack = "refund" | "dispute" | "dispute-won" | "dispute-lost";

export async function startStripeEmulator(opts: StripeEmulatorOptions) {
  const state: State =
    opts.storeFile && existsSync(opts.storeFile)
      ? { ...emptyState(), ...JSON.parse(readFileSync(opts.storeFile, "utf8")) }
      : emptyState();
  const save = () => {
    if (!opts.storeFile) return;
    state.requests = state.requests.slice(-500);
    state.events = state.events.slice(-500);
    mkdirSync(dirname(opts.storeFile), { recursive: true });
    writeFileSync(opts.storeFile, JSON.stringify(state));
  };
  let origin = `http://127.0.0.1:${opts.port}`;
  const engine = createEngine(state, opts, save, () => origin);
  const api = apiHandler(
    state,
    apiRoutes(state, engine, () => origin),
    save,
  );
  const notFound = (what: string) => page("Not found", `<h1>${what}</h1>`);

  const portalAction = (action: string) =>
    route("POST", `/p/session/:id/${action}`, async ({ res, params, body }) => {
      const ps = state.portalSessions[params.id!];
      if (!ps) return html(res, 404, notFound("This portal link is not valid."));
      const subId = new URLSearchParams(body.toString("utf8")).get("subscription") ?? "";
      const sub = state.subscriptions[subId];
      if (action !== "payment-method" && (!sub || sub.customer !== ps.customer)) {
        return html(res, 404, notFound("This subscription was not found."));
      }
      const back = (notice: string) => redirect(res, `/p/session/${ps.id}?notice=${encodeURIComponent(notice)}`);
      switch (action) {
        case "cancel":
          await engine.setCancelAtPeriodEnd(subId, true);
          if (ps.flow?.type === "subscription_cancel") {
            ps.flow = null;
            save();
            return redirect(res, ps.afterUrl ?? ps.return_url ?? opts.appUrl);
          }
          return back("Your plan will be cancelled at the end of the billing period.");
        case "resume":
          await engine.setCancelAtPeriodEnd(subId, false);
          return back("Your plan will renew.");
        case "end-now":
          await engine.cancelNow(subId);
          return back("The subscription has ended.");
        case "renew":
          await engine.renew(subId);
          return back("A new billing period has started and was paid.");
        default:
          return back("Payment method updated (emulated).");
      }
    });

  const subscriptionControl = (action: "renew" | "cancel-at-period-end" | "end-now") =>
    route("POST", `/_emulator/subscriptions/:id/${action}`, async ({ res, params }) => {
      const subId = params.id!;
      const sub =
        action === "renew"
          ? await engine.renew(subId)
          : action === "end-now"
            ? await engine.cancelNow(subId)
            : await engine.setCancelAtPeriodEnd(subId, true);
      return sub ? json(res, 200, sub) : json(res, 404, { error: "no such active subscription" });
    });

  // A paid invoice's money coming back: a (partial) refund, or a dispute opened and then won or lost.
  const moneyControl = (what: MoneyBack) =>
    route("POST", `/_emulator/invoices/:id/${what}`, async ({ res, params, body }) => {
      const found = await engine.moneyBack(params.id!, what, body);
      return found ? json(res, 200, found) : json(res, 404, { error: "no such paid invoice" });
    });

  const siteRoutes = [
    route("GET", "/favicon.ico", ({ res }) => {
      res.writeHead(204).end();
    }),
    // The hosted checkout page.
    route("GET", "/c/pay/:id", ({ res, params }) => {
      const session = state.sessions[params.id!];
      if (!session) return html(res, 404, notFound("This checkout link is not valid."));
      if (session.status !== "open") {
        return html(
          res,
          410,
          page(
            "Checkout",
            `<h1>This checkout has ended.</h1><a class="link secondary" href="${esc(session.success_url)}">Return to Stagewise</a>`,
          ),
        );
      }
      return html(res, 200, checkoutPage(state, session, engine.price(session._extra.priceId)!));
    }),
    route("POST", "/c/pay/:id/pay", async ({ res, params }) => {
      const session = state.sessions[params.id!];
      if (!session) return html(res, 404, notFound("This checkout link is not valid."));
      const next = await engine.payCheckout(session.id);
      return redirect(res, next ?? session.success_url);
    }),
    route("POST", "/c/pay/:id/cancel", ({ res, params }) => {
      const session = state.sessions[params.id!];
      if (!session) return html(res, 404, notFound("This checkout link is not valid."));
      return redirect(res, session.cancel_url ?? opts.appUrl);
    }),
    // The billing portal.
    route("GET", "/p/session/:id", ({ res, params, url }) => {
      const ps = state.portalSessions[params.id!];
      if (!ps) return html(res, 404, notFound("This portal link is not valid."));
      return html(res, 200, portalPage(state, ps, url.searchParams.get("notice")));
    }),
    ...["cancel", "resume", "end-now", "renew", "payment-method"].map(portalAction),
    route("GET", "/invoices/:id", ({ res, params }) => {
      const inv = state.invoices[params.id!];
      if (!inv) return html(res, 404, notFound("Invoice not found."));
      return html(
        res,
        200,
        page(
          `Invoice ${inv.number}`,
          `<h1>Invoice ${esc(inv.number)}</h1><p class="price">${dollars(inv.amount_paid)}</p><p class="muted">Paid ${new Date(inv.created * 1000).toUTCString()}</p>`,
        ),
      );
    }),
    // Test controls (no equivalent in Stripe; tests and the portal page use them).
    route("GET", "/_emulator/events", ({ res, url }) => {
      const type = url.searchParams.get("type");
      return json(
        res,
        200,
        state.events
          .filter((e) => !type || e.type === type)
          .map((e) => ({ ...e, payload: JSON.parse(e.payload) as unknown })),
      );
    }),
    route("GET", "/_emulator/requests", ({ res }) => json(res, 200, state.requests)),
    // Stripe's time, like a test clock: GET reads it; POST {"frozen_time": t} freezes it at t (never backwards),
    // {"frozen_time": null} returns to the wall clock.
    route("GET", "/_emulator/clock", ({ res }) => json(res, 200, { now: engine.now(), ...state.clock })),
    route("POST", "/_emulator/clock", async ({ res, body }) => {
      const asked = (JSON.parse(body.toString("utf8") || "{}") as { frozen_time?: unknown }).frozen_time;
      if (asked !== null && (typeof asked !== "number" || !Number.isInteger(asked) || asked < engine.now())) {
        return json(res, 400, {
          error: "frozen_time must be whole Unix seconds, not before the clock's time, or null",
        });
      }
      state.clock = { frozenTime: asked as number | null };
      save();
      await engine.runClock();
      return json(res, 200, { now: engine.now(), ...state.clock });
    }),
    // The customer's next payment(s) are declined (body {"count": n}, default 1): a renewal's, a seat change's, a retry's.
    route("POST", "/_emulator/customers/:id/fail-next-payment", ({ res, params, body }) => {
      if (!state.customers[params.id!]) return json(res, 404, { error: "no such customer" });
      const count = Number((JSON.parse(body.toString("utf8") || "{}") as { count?: unknown }).count ?? 1);
      if (!Number.isInteger(count) || count < 0) return json(res, 400, { error: "count must be a whole number" });
      state.failNextPayments[params.id!] = count;
      save();
      return json(res, 200, { customer: params.id, declines: count });
    }),
    // Smart Retries' next automatic attempt on an open invoice, now.
    route("POST", "/_emulator/invoices/:id/retry", async ({ res, params }) => {
      const { status, value } = await engine.retryInvoice(params.id!, true);
      return json(res, status, value);
    }),
    ...(["renew", "cancel-at-period-end", "end-now"] as const).map(subscriptionControl),
    ...(["refund", "dispute", "dispute-won", "dispute-lost"] as const).map(moneyControl),
    route("POST", "/_emulator/events/:id/resend", async ({ res, params }) => {
      const ev = state.events.find((e) => e.id === params.id);
      if (!ev) return json(res, 404, { error: "no such event" });
      await engine.deliver(ev);
      return json(res, 200, { id: ev.id, deliveries: ev.deliveries });
    }),
  ];

  const server = await listen("stripe", opts.port, async (req, body, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const path = url.pathname;
    if (path.startsWith("/v1/")) {
      if (bearer(req) !== opts.secretKey) {
        return json(res, 401, {
          error: { type: "invalid_request_error", message: "Invalid API Key provided (Stripe emulator)." },
        });
      }
      return api(req, res, url, body);
    }
    const found = findRoute(siteRoutes, req.method ?? "GET", path);
    if (found) return found.route.handler({ req, res, url, body, params: found.params });
    return json(res, 404, {
      error: { type: "invalid_request_error", message: `Unrecognized request URL (${req.method}: ${path}).` },
    });
  });
  const address = server.address();
  if (address && typeof address === "object") origin = `http://127.0.0.1:${address.port}`;
  return server;
}
