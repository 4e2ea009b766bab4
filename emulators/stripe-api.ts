import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { json } from "./http.ts";
import { findRoute, type RouteContext, route } from "./router.ts";
import type { Engine } from "./stripe-engine.ts";
import {
  chargeIdOf,
  checkoutSessionObject,
  paymentIntentObject,
  priceObject,
  withoutIncludable,
} from "./stripe-objects.ts";
import { missing, stripeError } from "./stripe-pages.ts";
import { type Customer, id, type PortalSession, parseStripeForm, type State } from "./stripe-state.ts";

// The slice of Stripe's HTTP API (/v1) our server calls through the real
// `stripe` SDK, as a route table: method + path -> handler. Each handler reads
// Stripe's form-encoded parameters and answers with the emulator's objects
// (checked against the stripe package's types in stripe-objects.ts).

interface ApiContext extends RouteContext {
  /** The request's parameters, decoded from Stripe's form encoding (query for GET/DELETE, body otherwise). */
  form: Record<string, unknown>;
  /** Answers with JSON and remembers the answer for the request's Idempotency-Key. */
  send: (status: number, value: unknown) => void;
}

type ApiHandler = (c: ApiContext) => void | Promise<void>;

export function apiRoutes(state: State, engine: Engine, origin: () => string) {
  const { price, prices } = engine;
  const nowSeconds = engine.now;
  const api = (method: string, pattern: string, handler: ApiHandler) =>
    route(method, pattern, handler as (c: RouteContext) => void | Promise<void>);

  return [
    api("POST", "/v1/customers", ({ form, send }) => {
      const customer: Customer = {
        id: id("cus"),
        object: "customer",
        created: nowSeconds(),
        email: (form.email as string) ?? null,
        name: (form.name as string) ?? null,
        metadata: (form.metadata as Record<string, string>) ?? {},
        livemode: false,
      };
      state.customers[customer.id] = customer;
      send(200, customer);
    }),
    // Stripe's "Update a customer": the parameters sent are set, the others left unchanged; metadata keys merge, and
    // a key sent empty is removed (https://docs.stripe.com/api/customers/update, https://docs.stripe.com/metadata).
    api("POST", "/v1/customers/:id", ({ params, form, res, send }) => {
      const customer = state.customers[params.id!];
      if (!customer) return missing(res, "customer", params.id!);
      if (typeof form.email === "string") customer.email = form.email === "" ? null : form.email;
      if (typeof form.name === "string") customer.name = form.name === "" ? null : form.name;
      const metadata = form.metadata as Record<string, string> | undefined;
      if (metadata) {
        for (const [k, v] of Object.entries(metadata)) {
          if (v === "") delete customer.metadata[k];
          else customer.metadata[k] = v;
        }
      }
      send(200, { ...customer, balance: state.balances[customer.id] ?? 0 });
    }),
    api("GET", "/v1/customers/:id", ({ params, res, send }) => {
      const customer = state.customers[params.id!];
      if (!customer) return missing(res, "customer", params.id!);
      send(200, { ...customer, balance: state.balances[customer.id] ?? 0 });
    }),
    api("GET", "/v1/prices", ({ form, send }) => {
      const keys = (form.lookup_keys as string[] | undefined) ?? [];
      const data = [...prices.values()].filter((p) => keys.length === 0 || keys.includes(p.lookup_key));
      send(200, { object: "list", data, has_more: false, url: "/v1/prices" });
    }),
    api("POST", "/v1/prices", ({ form, res, send }) => {
      const lookupKey = form.lookup_key as string | undefined;
      if (lookupKey && [...prices.values()].some((p) => p.lookup_key === lookupKey)) {
        return stripeError(res, 400, `A price (\`${lookupKey}\`) already uses that lookup key.`);
      }
      const recurring = form.recurring as { interval?: string } | undefined;
      const created = priceObject({
        id: id("price"),
        lookupKey: lookupKey ?? "",
        unitAmount: Number(form.unit_amount),
        interval: recurring?.interval === "year" ? "year" : "month",
        productId: (form.product as string | undefined) ?? id("prod"),
      });
      prices.set(created.id, created);
      send(200, created);
    }),
    api("GET", "/v1/prices/:id", ({ params, res, send }) => {
      const p = price(params.id!);
      return p ? send(200, p) : missing(res, "price", params.id!);
    }),
    api("POST", "/v1/checkout/sessions", ({ form, res, send }) => {
      const customer = form.customer as string | undefined;
      if (!customer || !state.customers[customer]) return missing(res, "customer", customer ?? "");
      const lineItems = (form.line_items as { price?: string; quantity?: string }[] | undefined) ?? [];
      const p = lineItems[0]?.price ? price(lineItems[0].price) : undefined;
      if (!p) return stripeError(res, 400, "line_items[0][price] must be one of the emulator's prices");
      const quantity = Number(lineItems[0]?.quantity ?? "1");
      if (!Number.isInteger(quantity) || quantity < 1) {
        return stripeError(res, 400, "Invalid integer: line_items[0][quantity]", { param: "line_items[0][quantity]" });
      }
      if (form.mode !== "subscription") return stripeError(res, 400, "The emulator only supports mode=subscription");
      if (!form.success_url) return stripeError(res, 400, "Missing required param: success_url.");
      const sessionId = id("cs_test");
      const subData = (form.subscription_data as { metadata?: Record<string, string> } | undefined) ?? {};
      const session = {
        ...checkoutSessionObject({
          id: sessionId,
          url: `${origin()}/c/pay/${sessionId}`,
          customer,
          customerEmail: state.customers[customer]?.email ?? null,
          clientReferenceId: (form.client_reference_id as string) ?? null,
          metadata: (form.metadata as Record<string, string>) ?? {},
          subscriptionMetadata: subData.metadata ?? {},
          price: p,
          quantity,
          successUrl: form.success_url as string,
          cancelUrl: (form.cancel_url as string) ?? null,
          created: nowSeconds(),
          status: "open",
          paymentStatus: "unpaid",
          subscription: null,
          invoice: null,
        }),
        _extra: { subscriptionMetadata: subData.metadata ?? {}, priceId: p.id, quantity },
      };
      state.sessions[sessionId] = session;
      const { _extra, ...publicSession } = session;
      send(200, publicSession);
    }),
    api("GET", "/v1/checkout/sessions/:id", ({ params, res, send }) => {
      const session = state.sessions[params.id!];
      if (!session) return missing(res, "checkout.session", params.id!);
      const { _extra, ...publicSession } = session;
      send(200, publicSession);
    }),
    api("GET", "/v1/subscriptions", ({ form, send }) => {
      const status = (form.status as string | undefined) ?? "active";
      const data = Object.values(state.subscriptions)
        .filter((s) => !form.customer || s.customer === form.customer)
        .filter((s) => status === "all" || s.status === status)
        .sort((x, y) => y.created - x.created);
      send(200, { object: "list", data, has_more: false, url: "/v1/subscriptions" });
    }),
    api("GET", "/v1/subscriptions/:id", ({ params, res, send }) => {
      const sub = state.subscriptions[params.id!];
      return sub ? send(200, sub) : missing(res, "subscription", params.id!);
    }),
    api("POST", "/v1/subscriptions/:id", async ({ params, form, send }) => {
      const { status, value } = await engine.updateSubscription(params.id!, form);
      send(status, value);
    }),
    api("DELETE", "/v1/subscriptions/:id", async ({ params, res, send }) => {
      const sub = await engine.cancelNow(params.id!);
      return sub ? send(200, sub) : missing(res, "subscription", params.id!);
    }),
    api("POST", "/v1/billing_portal/sessions", ({ form, res, send }) => {
      const customer = form.customer as string | undefined;
      if (!customer || !state.customers[customer]) return missing(res, "customer", customer ?? "");
      const flow = form.flow_data as
        | {
            type?: string;
            subscription_cancel?: { subscription?: string };
            after_completion?: { type?: string; redirect?: { return_url?: string } };
          }
        | undefined;
      const psId = id("bps");
      const ps: PortalSession = {
        id: psId,
        object: "billing_portal.session",
        customer,
        return_url: (form.return_url as string) ?? null,
        created: nowSeconds(),
        url: `${origin()}/p/session/${psId}`,
        livemode: false,
        flow: flow?.type
          ? {
              type: flow.type,
              subscription_cancel: flow.subscription_cancel?.subscription
                ? { subscription: flow.subscription_cancel.subscription }
                : undefined,
              after_completion: flow.after_completion ?? null,
            }
          : null,
        afterUrl: flow?.after_completion?.redirect?.return_url ?? null,
      };
      state.portalSessions[psId] = ps;
      const { afterUrl, ...publicSession } = ps;
      send(200, publicSession);
    }),
    api("GET", "/v1/billing_portal/configurations", ({ send }) => {
      const config = {
        id: "bpc_emulator_default",
        object: "billing_portal.configuration",
        is_default: true,
        active: true,
      };
      send(200, { object: "list", data: [config], has_more: false, url: "/v1/billing_portal/configurations" });
    }),
    // `payments` is includable: only a request that names it in expand[] gets it.
    api("GET", "/v1/invoices/:id", ({ params, form, res, send }) => {
      const inv = state.invoices[params.id!];
      if (!inv) return missing(res, "invoice", params.id!);
      const expand = Array.isArray(form.expand) ? form.expand : [];
      send(200, expand.includes("payments") ? inv : withoutIncludable(inv));
    }),
    // A paid invoice's PaymentIntent (a dispute names it, not its customer: ADR 0359).
    api("GET", "/v1/payment_intents/:id", ({ params, res, send }) => {
      const inv = Object.values(state.invoices).find(
        (i) => i.amount_paid > 0 && i.payments.data[0]?.payment.payment_intent === params.id,
      );
      if (!inv) return missing(res, "payment_intent", params.id!);
      send(
        200,
        paymentIntentObject({
          id: params.id!,
          customer: inv.customer,
          amount: inv.amount_paid,
          created: inv.created,
          latestCharge: chargeIdOf(inv.id),
        }),
      );
    }),
    // A manual attempt to pay an open invoice (a declined one answers 402 card_declined, as Stripe does).
    api("POST", "/v1/invoices/:id/pay", async ({ params, send }) => {
      const { status, value } = await engine.retryInvoice(params.id!, false);
      send(status, value);
    }),
  ];
}

/** Stripe's side of a /v1 request: the request log, Idempotency-Key replays, then the route table. */
export function apiHandler(state: State, routes: ReturnType<typeof apiRoutes>, save: () => void) {
  const fingerprint = (path: string, body: Buffer) => createHash("sha256").update(`${path}\n${body}`).digest("hex");

  function logRequest(req: IncomingMessage, path: string) {
    const key = req.headers["idempotency-key"];
    state.requests.push({
      method: req.method ?? "GET",
      path,
      idempotencyKey: typeof key === "string" ? key : null,
      at: new Date().toISOString(),
    });
  }

  /** Stripe's idempotency: the same key with the same request replays the first answer. */
  function replay(req: IncomingMessage, path: string, body: Buffer, res: ServerResponse): boolean {
    const key = req.headers["idempotency-key"];
    if (req.method !== "POST" || typeof key !== "string") return false;
    const stored = state.idempotency[key];
    if (!stored) return false;
    if (stored.fingerprint !== fingerprint(path, body)) {
      stripeError(
        res,
        400,
        "Keys for idempotent requests can only be used with the same parameters they were first used with.",
        { type: "idempotency_error" },
      );
    } else {
      res.setHeader("Idempotent-Replayed", "true");
      json(res, stored.status, stored.body);
    }
    return true;
  }

  function remember(req: IncomingMessage, path: string, body: Buffer, status: number, value: unknown) {
    const key = req.headers["idempotency-key"];
    if (req.method !== "POST" || typeof key !== "string" || status >= 500) return;
    state.idempotency[key] = { fingerprint: fingerprint(path, body), status, body: value };
  }

  return async (req: IncomingMessage, res: ServerResponse, url: URL, body: Buffer) => {
    const path = url.pathname;
    const method = req.method ?? "GET";
    logRequest(req, path);
    if (replay(req, path, body, res)) return;
    const found = findRoute(routes, method, path);
    if (!found) {
      return stripeError(
        res,
        404,
        `Unrecognized request URL (${method}: ${path}). The Stripe emulator does not emulate it.`,
      );
    }
    const form =
      method === "GET" || method === "DELETE"
        ? parseStripeForm(url.searchParams.toString())
        : parseStripeForm(body.toString("utf8"));
    const send = (status: number, value: unknown) => {
      remember(req, path, body, status, value);
      save();
      json(res, status, value);
    };
    const ctx: ApiContext = { req, res, url, body, params: found.params, form, send };
    await found.route.handler(ctx);
  };
}
