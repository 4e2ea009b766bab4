import { createHash, createHmac, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname } from "node:path";
import { PLANS } from "../app/shared/catalog.ts";
import { bearer, json, listen } from "./http.ts";
import {
  addInterval,
  type CheckoutSessionObject,
  chargeObject,
  checkoutSessionObject,
  disputeObject,
  eventObject,
  type Interval,
  type InvoiceObject,
  invoiceObject,
  type PriceObject,
  priceObject,
  type SubscriptionObject,
  subscriptionObject,
} from "./stripe-objects.ts";

// The Stripe emulator: the slice of Stripe's HTTP API our server calls through
// the real `stripe` SDK (customers, prices by lookup key, Checkout Sessions,
// subscriptions, Billing Portal sessions), a hosted checkout page where a
// tester pays or cancels, a billing portal page, and real signed webhook
// events posted to the app. See docs/decisions/0022-stripe-emulator.md.

interface Customer {
  id: string;
  object: "customer";
  created: number;
  email: string | null;
  name: string | null;
  metadata: Record<string, string>;
  livemode: false;
}

interface PortalSession {
  id: string;
  object: "billing_portal.session";
  customer: string;
  return_url: string | null;
  created: number;
  url: string;
  livemode: false;
  flow: null | { type: string; subscription_cancel?: { subscription: string }; after_completion?: unknown };
  /** Where to go once the flow is done (flow_data.after_completion.redirect.return_url). */
  afterUrl: string | null;
}

interface Delivery {
  at: string;
  status: number | null;
  error?: string;
}

interface StoredEvent {
  id: string;
  type: string;
  created: number;
  payload: string;
  deliveries: Delivery[];
}

interface SessionExtra {
  subscriptionMetadata: Record<string, string>;
  priceId: string;
}

interface State {
  customers: Record<string, Customer>;
  sessions: Record<string, CheckoutSessionObject & { _extra: SessionExtra }>;
  subscriptions: Record<string, SubscriptionObject>;
  invoices: Record<string, InvoiceObject>;
  portalSessions: Record<string, PortalSession>;
  events: StoredEvent[];
  idempotency: Record<string, { fingerprint: string; status: number; body: unknown }>;
  requests: { method: string; path: string; idempotencyKey: string | null; at: string }[];
  invoiceCounter: number;
  /** The charge behind each paid invoice, with what was refunded and any dispute. */
  charges: Record<string, { id: string; invoice: string; amountRefunded: number; dispute: string | null }>;
}

const emptyState = (): State => ({
  customers: {},
  sessions: {},
  subscriptions: {},
  invoices: {},
  portalSessions: {},
  events: [],
  idempotency: {},
  requests: [],
  invoiceCounter: 0,
  charges: {},
});

function id(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString("base64url").replace(/[-_]/g, "x")}`;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The catalogue's prices, as the seeding script would create them in Stripe (one per lookup key). */
export function emulatedPrices(): PriceObject[] {
  return PLANS.flatMap((plan) =>
    (["month", "year"] as const).map((interval) =>
      priceObject({
        id: `price_${plan.lookupKeys[interval]}`,
        lookupKey: plan.lookupKeys[interval],
        unitAmount: (interval === "month" ? plan.price : plan.yearlyPrice) * 100,
        interval,
        productId: `prod_${plan.id}`,
      }),
    ),
  );
}

/**
 * Parses Stripe's form encoding (`metadata[userId]=u&line_items[0][price]=p`)
 * into nested objects and arrays.
 */
export function parseStripeForm(encoded: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [rawKey, value] of new URLSearchParams(encoded)) {
    const parts = rawKey.split("[").map((p) => p.replace(/\]$/, ""));
    let node: Record<string, unknown> | unknown[] = root;
    parts.forEach((part, i) => {
      const last = i === parts.length - 1;
      const key: string | number = Array.isArray(node) ? Number(part) : part;
      const container = node as Record<string | number, unknown>;
      if (last) container[key] = value;
      else {
        if (container[key] === undefined) container[key] = /^\d+$/.test(parts[i + 1] ?? "") ? [] : {};
        node = container[key] as Record<string, unknown> | unknown[];
      }
    });
  }
  return root;
}

function stripeError(res: ServerResponse, status: number, message: string, extra: Record<string, unknown> = {}): void {
  json(res, status, { error: { type: "invalid_request_error", message, ...extra } });
}

function missing(res: ServerResponse, what: string, value: string): void {
  stripeError(res, 404, `No such ${what}: '${value}'`, { code: "resource_missing", param: "id" });
}

function html(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
  res.end(body);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { Location: location });
  res.end();
}

const esc = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · Stripe emulator</title>
<style>
body{font-family:system-ui,sans-serif;margin:0;background:#f6f9fc;color:#1a1f36}
.banner{background:#b45309;color:#fff;padding:.75rem 1rem;text-align:center;font-weight:600}
main{max-width:28rem;margin:2rem auto;background:#fff;border-radius:12px;padding:1.5rem;box-shadow:0 2px 8px rgba(0,0,0,.08)}
h1{font-size:1.25rem;margin:0 0 .25rem}.muted{color:#4f566b;font-size:.9rem}.price{font-size:2rem;font-weight:700;margin:.75rem 0}
label{display:block;font-size:.85rem;margin:.75rem 0 .25rem}input{width:100%;box-sizing:border-box;padding:.6rem;border:1px solid #cbd2d9;border-radius:6px;font-size:1rem}
button,.link{display:block;width:100%;box-sizing:border-box;margin-top:1rem;padding:.75rem;border-radius:6px;font-size:1rem;font-weight:600;cursor:pointer;text-align:center;text-decoration:none}
.pay{background:#635bff;color:#fff;border:0}.secondary{background:#fff;color:#1a1f36;border:1px solid #cbd2d9}.danger{background:#b91c1c;color:#fff;border:0}
.card{border:1px solid #e3e8ee;border-radius:8px;padding:1rem;margin-top:1rem}.note{background:#ecfdf5;border:1px solid #a7f3d0;padding:.75rem;border-radius:6px;margin-top:1rem}
</style></head><body>
<div class="banner" role="note">Stripe emulator: test mode. No real payment is taken and no card is charged.</div>
<main>${body}</main></body></html>`;
}

export interface StripeEmulatorOptions {
  port: number;
  secretKey: string;
  webhookSecret: string;
  /** The app's origin; events go to {appUrl}/api/webhooks/stripe. */
  appUrl: string;
  /** Where state is kept between starts (omit to keep it in memory). */
  storeFile?: string;
}

export function signPayload(payload: string, secret: string, timestamp = nowSeconds()): string {
  const signature = createHmac("sha256", secret).update(`${timestamp}.${payload}`).digest("hex");
  return `t=${timestamp},v1=${signature}`;
}

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
  const prices = new Map(emulatedPrices().map((p) => [p.id, p]));
  let origin = `http://127.0.0.1:${opts.port}`;
  const webhookUrl = `${opts.appUrl.replace(/\/$/, "")}/api/webhooks/stripe`;

  async function deliver(ev: StoredEvent): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const delivery: Delivery = { at: new Date().toISOString(), status: null };
      ev.deliveries.push(delivery);
      try {
        const res = await fetch(webhookUrl, {
          method: "POST",
          headers: {
            "Content-Type": "application/json; charset=utf-8",
            "Stripe-Signature": signPayload(ev.payload, opts.webhookSecret),
            "User-Agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks) emulator",
          },
          body: ev.payload,
        });
        delivery.status = res.status;
        await res.arrayBuffer();
        if (res.ok) break;
      } catch (err) {
        delivery.error = String(err);
      }
      if (attempt < 2) await new Promise((r) => setTimeout(r, 200 * 4 ** attempt));
    }
    save();
  }

  /** Records events and posts them to the app, one after another, in the order given. */
  async function emit(items: { type: string; object: unknown; previous?: Record<string, unknown> }[]) {
    const created = nowSeconds();
    const events = items.map((item) => {
      const evId = id("evt");
      const ev: StoredEvent = {
        id: evId,
        type: item.type,
        created,
        payload: JSON.stringify(eventObject(evId, item.type, item.object, created, item.previous), null, 2),
        deliveries: [],
      };
      state.events.push(ev);
      return ev;
    });
    save();
    for (const ev of events) await deliver(ev);
  }

  function price(priceId: string): PriceObject | undefined {
    return prices.get(priceId);
  }

  function newInvoice(
    sub: SubscriptionObject,
    p: PriceObject,
    reason: "subscription_create" | "subscription_cycle" | "subscription_update",
    periodStart: number,
    periodEnd: number,
    prorationCredit = 0,
  ): InvoiceObject {
    state.invoiceCounter += 1;
    const invId = id("in");
    const item = sub.items.data[0];
    const inv = invoiceObject({
      id: invId,
      number: `EMU-${String(state.invoiceCounter).padStart(4, "0")}`,
      customer: sub.customer,
      customerEmail: state.customers[sub.customer]?.email ?? null,
      subscriptionId: sub.id,
      subscriptionItemId: item?.id ?? "si_unknown",
      metadata: { ...sub.metadata },
      price: p,
      created: nowSeconds(),
      periodStart,
      periodEnd,
      billingReason: reason,
      prorationCredit,
      hostedUrl: `${origin}/invoices/${invId}`,
      paymentIntent: `pi_${invId.slice(3)}`,
    });
    state.invoices[invId] = inv;
    return inv;
  }

  function rebuildSubscription(sub: SubscriptionObject, changes: Partial<Parameters<typeof subscriptionObject>[0]>) {
    const item = sub.items.data[0]!;
    const next = subscriptionObject({
      id: sub.id,
      customer: sub.customer,
      itemId: item.id,
      price: item.price,
      status: sub.status,
      created: sub.created,
      periodStart: item.current_period_start,
      periodEnd: item.current_period_end,
      metadata: sub.metadata,
      cancelAtPeriodEnd: sub.cancel_at_period_end,
      canceledAt: sub.canceled_at,
      endedAt: sub.ended_at,
      latestInvoice: sub.latest_invoice,
      ...changes,
    });
    state.subscriptions[sub.id] = next;
    return next;
  }

  async function payCheckout(sessionId: string): Promise<string | null> {
    const session = state.sessions[sessionId];
    if (session?.status !== "open") return null;
    const p = price(session._extra.priceId)!;
    const start = nowSeconds();
    const end = addInterval(start, p.recurring.interval as Interval);
    const subId = id("sub");
    let sub = subscriptionObject({
      id: subId,
      customer: session.customer,
      itemId: id("si"),
      price: p,
      status: "active",
      created: start,
      periodStart: start,
      periodEnd: end,
      metadata: session._extra.subscriptionMetadata,
    });
    const inv = newInvoice(sub, p, "subscription_create", start, end);
    sub = rebuildSubscription(sub, { latestInvoice: inv.id });
    const completed = {
      ...checkoutSessionObject({
        id: session.id,
        url: null,
        customer: session.customer,
        customerEmail: state.customers[session.customer]?.email ?? null,
        clientReferenceId: session.client_reference_id,
        metadata: session.metadata,
        subscriptionMetadata: session._extra.subscriptionMetadata,
        price: p,
        successUrl: session.success_url,
        cancelUrl: session.cancel_url,
        created: session.created,
        status: "complete",
        paymentStatus: "paid",
        subscription: subId,
        invoice: inv.id,
      }),
      _extra: session._extra,
    };
    state.sessions[session.id] = completed;
    const { _extra, ...publicSession } = completed;
    await emit([
      { type: "customer.subscription.created", object: sub },
      { type: "invoice.paid", object: inv },
      { type: "invoice.payment_succeeded", object: inv },
      { type: "checkout.session.completed", object: publicSession },
    ]);
    return session.success_url.replace("{CHECKOUT_SESSION_ID}", session.id);
  }

  /** A new billing period: the renewal Stripe would make at the end of the current one. */
  async function renew(subId: string): Promise<SubscriptionObject | null> {
    const sub = state.subscriptions[subId];
    const item = sub?.items.data[0];
    if (!sub || !item || sub.status !== "active") return null;
    const start = item.current_period_end;
    const end = addInterval(start, item.price.recurring.interval as Interval);
    const inv = newInvoice(sub, item.price, "subscription_cycle", start, end);
    const next = rebuildSubscription(sub, { periodStart: start, periodEnd: end, latestInvoice: inv.id });
    await emit([
      { type: "invoice.paid", object: inv },
      {
        type: "customer.subscription.updated",
        object: next,
        previous: { items: sub.items, latest_invoice: sub.latest_invoice },
      },
    ]);
    return next;
  }

  async function setCancelAtPeriodEnd(subId: string, cancel: boolean): Promise<SubscriptionObject | null> {
    const sub = state.subscriptions[subId];
    if (sub?.status !== "active" || sub.cancel_at_period_end === cancel) return sub ?? null;
    const next = rebuildSubscription(sub, { cancelAtPeriodEnd: cancel, canceledAt: cancel ? nowSeconds() : null });
    await emit([
      {
        type: "customer.subscription.updated",
        object: next,
        previous: { cancel_at_period_end: sub.cancel_at_period_end, cancel_at: sub.cancel_at },
      },
    ]);
    return next;
  }

  async function cancelNow(subId: string): Promise<SubscriptionObject | null> {
    const sub = state.subscriptions[subId];
    if (!sub) return null;
    if (sub.status === "canceled") return sub;
    const t = nowSeconds();
    const next = rebuildSubscription(sub, { status: "canceled", canceledAt: sub.canceled_at ?? t, endedAt: t });
    await emit([{ type: "customer.subscription.deleted", object: next }]);
    return next;
  }

  /** POST /v1/subscriptions/:id — plan switches (new price, billing cycle reset now), cancel flags, metadata. */
  async function updateSubscription(
    subId: string,
    params: Record<string, unknown>,
  ): Promise<{ status: number; value: unknown }> {
    const fail = (status: number, message: string, extra: Record<string, unknown> = {}) => ({
      status,
      value: { error: { type: "invalid_request_error", message, ...extra } },
    });
    const sub = state.subscriptions[subId];
    if (!sub) return fail(404, `No such subscription: '${subId}'`, { code: "resource_missing" });
    const item = sub.items.data[0]!;
    const items = (params.items as { id?: string; price?: string }[] | undefined) ?? [];
    const metadata = { ...sub.metadata, ...((params.metadata as Record<string, string>) ?? {}) };
    const newPriceId = items[0]?.price;
    if (newPriceId && newPriceId !== item.price.id) {
      const p = price(newPriceId);
      if (!p) return fail(404, `No such price: '${newPriceId}'`, { code: "resource_missing" });
      if (sub.status !== "active") return fail(400, "This subscription is not active.");
      const anchor = params.billing_cycle_anchor as { type?: string } | string | undefined;
      const resetNow = anchor === "now" || (typeof anchor === "object" && anchor?.type === "now");
      const t = nowSeconds();
      const start = resetNow ? t : item.current_period_start;
      const end = resetNow ? addInterval(t, p.recurring.interval as Interval) : item.current_period_end;
      // Credit for the unused part of the old period.
      const total = item.current_period_end - item.current_period_start;
      const unused = Math.max(0, item.current_period_end - t);
      const credit = total > 0 ? Math.round((item.price.unit_amount * unused) / total) : 0;
      const base = subscriptionObject({
        id: sub.id,
        customer: sub.customer,
        itemId: item.id,
        price: p,
        status: sub.status,
        created: sub.created,
        periodStart: start,
        periodEnd: end,
        metadata,
        cancelAtPeriodEnd: params.cancel_at_period_end === "true",
        latestInvoice: sub.latest_invoice,
      });
      const inv = newInvoice(base, p, "subscription_update", start, end, credit);
      const next = rebuildSubscription(base, { latestInvoice: inv.id });
      await emit([
        { type: "customer.subscription.updated", object: next, previous: { items: sub.items } },
        { type: "invoice.paid", object: inv },
      ]);
      return { status: 200, value: next };
    }
    let next = rebuildSubscription(sub, { metadata });
    if (params.cancel_at_period_end !== undefined) {
      next = (await setCancelAtPeriodEnd(subId, params.cancel_at_period_end === "true")) ?? next;
    }
    return { status: 200, value: next };
  }

  async function moneyBack(
    invoiceId: string,
    what: "refund" | "dispute" | "dispute-won" | "dispute-lost",
    body: Buffer,
  ): Promise<unknown> {
    const inv = state.invoices[invoiceId];
    const pi = inv?.payments.data[0]?.payment.payment_intent;
    if (!inv || !pi || inv.amount_paid <= 0) return null;
    state.charges[invoiceId] ??= {
      id: `ch_${invoiceId.slice(3)}`,
      invoice: invoiceId,
      amountRefunded: 0,
      dispute: null,
    };
    const c = state.charges[invoiceId];
    const charge = () =>
      chargeObject({
        id: c.id,
        customer: inv.customer,
        paymentIntent: pi,
        amount: inv.amount_paid,
        amountRefunded: c.amountRefunded,
        created: inv.created,
      });
    if (what === "refund") {
      const asked = Number(
        (JSON.parse(body.toString("utf8") || "{}") as { amount?: number }).amount ?? inv.amount_paid,
      );
      c.amountRefunded = Math.min(inv.amount_paid, c.amountRefunded + Math.max(1, Math.round(asked)));
      const object = charge();
      await emit([{ type: "charge.refunded", object }]);
      return object;
    }
    const dispute = (status: "needs_response" | "won" | "lost") =>
      disputeObject({
        id: c.dispute!,
        charge: c.id,
        paymentIntent: pi,
        amount: inv.amount_paid,
        status,
        created: nowSeconds(),
      });
    if (what === "dispute") {
      c.dispute ??= `dp_${invoiceId.slice(3)}`;
      const object = dispute("needs_response");
      await emit([{ type: "charge.dispute.created", object }]);
      return object;
    }
    if (!c.dispute) return null;
    const object = dispute(what === "dispute-won" ? "won" : "lost");
    await emit([{ type: "charge.dispute.closed", object }]);
    return object;
  }

  function checkoutPage(session: CheckoutSessionObject & { _extra: SessionExtra }): string {
    const p = price(session._extra.priceId)!;
    const plan = PLANS.find((pl) => pl.lookupKeys.month === p.lookup_key || pl.lookupKeys.year === p.lookup_key);
    const email = state.customers[session.customer]?.email ?? "";
    return page(
      "Checkout",
      `<p class="muted">Stagewise (emulated merchant)</p>
<h1>Subscribe to ${esc(plan?.name ?? p.lookup_key ?? "plan")}</h1>
<p class="price">${dollars(p.unit_amount)} <span class="muted">per ${esc(p.recurring.interval)}</span></p>
<p class="muted">${plan ? `${plan.credits} credits every month` : ""}</p>
<form method="post" action="/c/pay/${esc(session.id)}/pay">
<label for="email">Email</label><input id="email" value="${esc(email)}" readonly>
<label for="card">Card number</label><input id="card" value="4242 4242 4242 4242" readonly>
<button class="pay" type="submit">Pay</button>
</form>
<form method="post" action="/c/pay/${esc(session.id)}/cancel"><button class="secondary" type="submit">Cancel</button></form>`,
    );
  }

  function portalPage(ps: PortalSession, notice: string | null): string {
    const subs = Object.values(state.subscriptions).filter((s) => s.customer === ps.customer);
    const live = subs.filter((s) => s.status === "active");
    const returnLink = ps.return_url
      ? `<a class="link secondary" href="${esc(ps.return_url)}">Return to Stagewise</a>`
      : "";
    if (ps.flow?.type === "subscription_cancel") {
      const subId = ps.flow.subscription_cancel?.subscription ?? "";
      const sub = state.subscriptions[subId];
      const item = sub?.items.data[0];
      return page(
        "Cancel plan",
        `<h1>Cancel your plan</h1>
${sub && item ? `<p>Your ${esc(item.price.lookup_key ?? "")} plan will stay active until ${new Date(item.current_period_end * 1000).toUTCString()}. Credits you have already received stay until they expire.</p>` : "<p>This subscription was not found.</p>"}
<form method="post" action="/p/session/${esc(ps.id)}/cancel"><input type="hidden" name="subscription" value="${esc(subId)}"><button class="danger" type="submit">Cancel plan</button></form>
${returnLink}`,
      );
    }
    const rows = live
      .map((s) => {
        const item = s.items.data[0]!;
        const ends = new Date(item.current_period_end * 1000).toUTCString();
        return `<div class="card"><strong>${esc(item.price.lookup_key ?? "")}</strong> · ${dollars(item.price.unit_amount)} per ${esc(item.price.recurring.interval)}
<p class="muted">${s.cancel_at_period_end ? `Cancels on ${ends}` : `Renews on ${ends}`}</p>
<form method="post" action="/p/session/${esc(ps.id)}/${s.cancel_at_period_end ? "resume" : "cancel"}"><input type="hidden" name="subscription" value="${esc(s.id)}">
<button class="${s.cancel_at_period_end ? "secondary" : "danger"}" type="submit">${s.cancel_at_period_end ? "Renew plan" : "Cancel plan"}</button></form>
<form method="post" action="/p/session/${esc(ps.id)}/end-now"><input type="hidden" name="subscription" value="${esc(s.id)}">
<button class="secondary" type="submit">Emulator: end subscription now</button></form>
<form method="post" action="/p/session/${esc(ps.id)}/renew"><input type="hidden" name="subscription" value="${esc(s.id)}">
<button class="secondary" type="submit">Emulator: start next billing period now</button></form></div>`;
      })
      .join("");
    return page(
      "Billing portal",
      `<h1>Billing portal</h1><p class="muted">${esc(state.customers[ps.customer]?.email ?? ps.customer)}</p>
${notice ? `<p class="note" role="status">${esc(notice)}</p>` : ""}
<div class="card"><strong>Payment method</strong><p class="muted">Visa ending in 4242 (emulated)</p>
<form method="post" action="/p/session/${esc(ps.id)}/payment-method"><button class="secondary" type="submit">Update payment method</button></form></div>
${rows || `<p class="muted">No active subscription.</p>`}
${returnLink}`,
    );
  }

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
    const fingerprint = createHash("sha256").update(`${path}\n${body}`).digest("hex");
    if (stored.fingerprint !== fingerprint) {
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
    state.idempotency[key] = {
      fingerprint: createHash("sha256").update(`${path}\n${body}`).digest("hex"),
      status,
      body: value,
    };
  }

  async function api(req: IncomingMessage, path: string, url: URL, body: Buffer, res: ServerResponse) {
    const params =
      req.method === "GET" || req.method === "DELETE"
        ? parseStripeForm(url.searchParams.toString())
        : parseStripeForm(body.toString("utf8"));
    const send = (status: number, value: unknown) => {
      remember(req, path, body, status, value);
      save();
      json(res, status, value);
    };
    const seg = path.split("/").filter(Boolean); // ["v1", ...]
    const [, a, b, c] = seg;

    if (a === "customers" && req.method === "POST" && !b) {
      const customer: Customer = {
        id: id("cus"),
        object: "customer",
        created: nowSeconds(),
        email: (params.email as string) ?? null,
        name: (params.name as string) ?? null,
        metadata: (params.metadata as Record<string, string>) ?? {},
        livemode: false,
      };
      state.customers[customer.id] = customer;
      return send(200, customer);
    }
    if (a === "customers" && req.method === "GET" && b) {
      const customer = state.customers[b];
      return customer ? send(200, customer) : missing(res, "customer", b);
    }
    if (a === "prices" && req.method === "GET" && !b) {
      const keys = (params.lookup_keys as string[] | undefined) ?? [];
      const data = [...prices.values()].filter((p) => keys.length === 0 || keys.includes(p.lookup_key));
      return send(200, { object: "list", data, has_more: false, url: "/v1/prices" });
    }
    if (a === "prices" && req.method === "POST" && !b) {
      const lookupKey = params.lookup_key as string | undefined;
      if (lookupKey && [...prices.values()].some((p) => p.lookup_key === lookupKey)) {
        return stripeError(res, 400, `A price (\`${lookupKey}\`) already uses that lookup key.`);
      }
      const recurring = params.recurring as { interval?: string } | undefined;
      const created = priceObject({
        id: id("price"),
        lookupKey: lookupKey ?? "",
        unitAmount: Number(params.unit_amount),
        interval: recurring?.interval === "year" ? "year" : "month",
        productId: (params.product as string | undefined) ?? id("prod"),
      });
      prices.set(created.id, created);
      return send(200, created);
    }
    if (a === "prices" && req.method === "GET" && b) {
      const p = price(b);
      return p ? send(200, p) : missing(res, "price", b);
    }
    if (a === "checkout" && b === "sessions" && req.method === "POST" && !c) {
      const customer = params.customer as string | undefined;
      if (!customer || !state.customers[customer]) return missing(res, "customer", customer ?? "");
      const lineItems = (params.line_items as { price?: string; quantity?: string }[] | undefined) ?? [];
      const p = lineItems[0]?.price ? price(lineItems[0].price) : undefined;
      if (!p) return stripeError(res, 400, "line_items[0][price] must be one of the emulator's prices");
      if (params.mode !== "subscription") return stripeError(res, 400, "The emulator only supports mode=subscription");
      if (!params.success_url) return stripeError(res, 400, "Missing required param: success_url.");
      const sessionId = id("cs_test");
      const subData = (params.subscription_data as { metadata?: Record<string, string> } | undefined) ?? {};
      const session = {
        ...checkoutSessionObject({
          id: sessionId,
          url: `${origin}/c/pay/${sessionId}`,
          customer,
          customerEmail: state.customers[customer]?.email ?? null,
          clientReferenceId: (params.client_reference_id as string) ?? null,
          metadata: (params.metadata as Record<string, string>) ?? {},
          subscriptionMetadata: subData.metadata ?? {},
          price: p,
          successUrl: params.success_url as string,
          cancelUrl: (params.cancel_url as string) ?? null,
          created: nowSeconds(),
          status: "open",
          paymentStatus: "unpaid",
          subscription: null,
          invoice: null,
        }),
        _extra: { subscriptionMetadata: subData.metadata ?? {}, priceId: p.id },
      };
      state.sessions[sessionId] = session;
      const { _extra, ...publicSession } = session;
      return send(200, publicSession);
    }
    if (a === "checkout" && b === "sessions" && req.method === "GET" && c) {
      const session = state.sessions[c];
      if (!session) return missing(res, "checkout.session", c);
      const { _extra, ...publicSession } = session;
      return send(200, publicSession);
    }
    if (a === "subscriptions" && req.method === "GET" && !b) {
      const status = (params.status as string | undefined) ?? "active";
      const data = Object.values(state.subscriptions)
        .filter((s) => !params.customer || s.customer === params.customer)
        .filter((s) => status === "all" || s.status === status)
        .sort((x, y) => y.created - x.created);
      return send(200, { object: "list", data, has_more: false, url: "/v1/subscriptions" });
    }
    if (a === "subscriptions" && req.method === "GET" && b) {
      const sub = state.subscriptions[b];
      return sub ? send(200, sub) : missing(res, "subscription", b);
    }
    if (a === "subscriptions" && req.method === "POST" && b) {
      const { status, value } = await updateSubscription(b, params);
      return send(status, value);
    }
    if (a === "subscriptions" && req.method === "DELETE" && b) {
      const sub = await cancelNow(b);
      return sub ? send(200, sub) : missing(res, "subscription", b);
    }
    if (a === "billing_portal" && b === "sessions" && req.method === "POST") {
      const customer = params.customer as string | undefined;
      if (!customer || !state.customers[customer]) return missing(res, "customer", customer ?? "");
      const flow = params.flow_data as
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
        return_url: (params.return_url as string) ?? null,
        created: nowSeconds(),
        url: `${origin}/p/session/${psId}`,
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
      return send(200, publicSession);
    }
    if (a === "billing_portal" && b === "configurations" && req.method === "GET") {
      const config = {
        id: "bpc_emulator_default",
        object: "billing_portal.configuration",
        is_default: true,
        active: true,
      };
      return send(200, { object: "list", data: [config], has_more: false, url: "/v1/billing_portal/configurations" });
    }
    if (a === "invoices" && req.method === "GET" && b) {
      const inv = state.invoices[b];
      return inv ? send(200, inv) : missing(res, "invoice", b);
    }
    return stripeError(
      res,
      404,
      `Unrecognized request URL (${req.method}: ${path}). The Stripe emulator does not emulate it.`,
    );
  }

  const server = await listen("stripe", opts.port, async (req, body, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const path = url.pathname;
    const form = () => new URLSearchParams(body.toString("utf8"));

    if (path === "/favicon.ico") {
      res.writeHead(204).end();
      return;
    }
    if (path.startsWith("/v1/")) {
      if (bearer(req) !== opts.secretKey) {
        return json(res, 401, {
          error: { type: "invalid_request_error", message: "Invalid API Key provided (Stripe emulator)." },
        });
      }
      logRequest(req, path);
      if (replay(req, path, body, res)) return;
      return api(req, path, url, body, res);
    }

    // The hosted checkout page.
    const pay = /^\/c\/pay\/([\w-]+)(?:\/(pay|cancel))?$/.exec(path);
    if (pay?.[1]) {
      const session = state.sessions[pay[1]];
      if (!session) return html(res, 404, page("Not found", "<h1>This checkout link is not valid.</h1>"));
      if (req.method === "GET" && !pay[2]) {
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
        return html(res, 200, checkoutPage(session));
      }
      if (req.method === "POST" && pay[2] === "pay") {
        const next = await payCheckout(session.id);
        return next ? redirect(res, next) : redirect(res, session.success_url);
      }
      if (req.method === "POST" && pay[2] === "cancel") return redirect(res, session.cancel_url ?? opts.appUrl);
    }

    // The billing portal.
    const portal = /^\/p\/session\/([\w-]+)(?:\/([\w-]+))?$/.exec(path);
    if (portal?.[1]) {
      const ps = state.portalSessions[portal[1]];
      if (!ps) return html(res, 404, page("Not found", "<h1>This portal link is not valid.</h1>"));
      if (req.method === "GET" && !portal[2]) {
        return html(res, 200, portalPage(ps, url.searchParams.get("notice")));
      }
      if (req.method === "POST") {
        const subId = form().get("subscription") ?? "";
        const sub = state.subscriptions[subId];
        if (portal[2] !== "payment-method" && (!sub || sub.customer !== ps.customer)) {
          return html(res, 404, page("Not found", "<h1>This subscription was not found.</h1>"));
        }
        const back = (notice: string) => `/p/session/${ps.id}?notice=${encodeURIComponent(notice)}`;
        switch (portal[2]) {
          case "cancel":
            await setCancelAtPeriodEnd(subId, true);
            if (ps.flow?.type === "subscription_cancel") {
              ps.flow = null;
              save();
              return redirect(res, ps.afterUrl ?? ps.return_url ?? opts.appUrl);
            }
            return redirect(res, back("Your plan will be cancelled at the end of the billing period."));
          case "resume":
            await setCancelAtPeriodEnd(subId, false);
            return redirect(res, back("Your plan will renew."));
          case "end-now":
            await cancelNow(subId);
            return redirect(res, back("The subscription has ended."));
          case "renew":
            await renew(subId);
            return redirect(res, back("A new billing period has started and was paid."));
          case "payment-method":
            return redirect(res, back("Payment method updated (emulated)."));
        }
      }
    }

    const invoicePage = /^\/invoices\/([\w-]+)$/.exec(path);
    if (invoicePage?.[1] && req.method === "GET") {
      const inv = state.invoices[invoicePage[1]];
      if (!inv) return html(res, 404, page("Not found", "<h1>Invoice not found.</h1>"));
      return html(
        res,
        200,
        page(
          `Invoice ${inv.number}`,
          `<h1>Invoice ${esc(inv.number)}</h1><p class="price">${dollars(inv.amount_paid)}</p><p class="muted">Paid ${new Date(inv.created * 1000).toUTCString()}</p>`,
        ),
      );
    }

    // Test controls (no equivalent in Stripe; tests and the portal page use them).
    if (path === "/_emulator/events" && req.method === "GET") {
      const type = url.searchParams.get("type");
      return json(
        res,
        200,
        state.events
          .filter((e) => !type || e.type === type)
          .map((e) => ({ ...e, payload: JSON.parse(e.payload) as unknown })),
      );
    }
    if (path === "/_emulator/requests" && req.method === "GET") return json(res, 200, state.requests);
    const control = /^\/_emulator\/subscriptions\/([\w-]+)\/(renew|cancel-at-period-end|end-now)$/.exec(path);
    if (control?.[1] && req.method === "POST") {
      const sub =
        control[2] === "renew"
          ? await renew(control[1])
          : control[2] === "end-now"
            ? await cancelNow(control[1])
            : await setCancelAtPeriodEnd(control[1], true);
      return sub ? json(res, 200, sub) : json(res, 404, { error: "no such active subscription" });
    }
    // A paid invoice's money coming back: a (partial) refund, or a dispute opened and then won or lost.
    const money = /^\/_emulator\/invoices\/([\w-]+)\/(refund|dispute|dispute-won|dispute-lost)$/.exec(path);
    if (money?.[1] && req.method === "POST") {
      const found = await moneyBack(money[1], money[2] as "refund" | "dispute" | "dispute-won" | "dispute-lost", body);
      return found ? json(res, 200, found) : json(res, 404, { error: "no such paid invoice" });
    }
    const resend = /^\/_emulator\/events\/([\w-]+)\/resend$/.exec(path);
    if (resend?.[1] && req.method === "POST") {
      const ev = state.events.find((e) => e.id === resend[1]);
      if (!ev) return json(res, 404, { error: "no such event" });
      await deliver(ev);
      return json(res, 200, { id: ev.id, deliveries: ev.deliveries });
    }
    return json(res, 404, {
      error: { type: "invalid_request_error", message: `Unrecognized request URL (${req.method}: ${path}).` },
    });
  });
  const address = server.address();
  if (address && typeof address === "object") origin = `http://127.0.0.1:${address.port}`;
  return server;
}
