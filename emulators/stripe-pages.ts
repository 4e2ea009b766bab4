import type { ServerResponse } from "node:http";
import { PLANS } from "../app/shared/catalog.ts";
import { json } from "./http.ts";
import type { PriceObject } from "./stripe-objects.ts";
import type { CheckoutSession, PortalSession, State } from "./stripe-state.ts";

// What the Stripe emulator answers besides JSON: Stripe-shaped errors, and the
// hosted checkout and billing portal pages (plainly marked as an emulator).

export function stripeError(
  res: ServerResponse,
  status: number,
  message: string,
  extra: Record<string, unknown> = {},
): void {
  json(res, status, { error: { type: "invalid_request_error", message, ...extra } });
}

export function missing(res: ServerResponse, what: string, value: string): void {
  stripeError(res, 404, `No such ${what}: '${value}'`, { code: "resource_missing", param: "id" });
}

export function html(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
  res.end(body);
}

export function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { Location: location });
  res.end();
}

export const esc = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
export const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

export function page(title: string, body: string): string {
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

export function checkoutPage(state: State, session: CheckoutSession, p: PriceObject): string {
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

export function portalPage(state: State, ps: PortalSession, notice: string | null): string {
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
