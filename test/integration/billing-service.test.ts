import { users } from "@db/schema";
import { subscriptionObject } from "@emulators/stripe-objects";
import { db, makeUser } from "@test/support/factories";
import { deliverOk, priceFor, SubscriptionStory } from "@test/support/stripe";
import { createStripe } from "@workers/adapters/stripe";
import {
  ALREADY_ON_PLAN_MESSAGE,
  type BillingDeps,
  NO_BILLING_ACCOUNT_MESSAGE,
  openBillingPortal,
  startCheckout,
} from "@workers/services/billing";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";

// The calls our pages make to Stripe, through the real SDK with a recording
// fetch in place of the network.

interface Call {
  method: string;
  path: string;
  query: URLSearchParams;
  form: URLSearchParams;
  idempotencyKey: string | null;
}

function fakeStripe(opts: { liveSubscription?: ReturnType<typeof subscriptionObject> } = {}) {
  const calls: Call[] = [];
  const fetcher = async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    const form = new URLSearchParams(req.method === "POST" ? new TextDecoder().decode(await req.arrayBuffer()) : "");
    calls.push({
      method: req.method,
      path: url.pathname,
      query: url.searchParams,
      form,
      idempotencyKey: req.headers.get("Idempotency-Key"),
    });
    const ok = (body: unknown) => Response.json(body, { headers: { "Request-Id": "req_test" } });
    if (url.pathname === "/v1/customers") return ok({ id: "cus_new", object: "customer" });
    if (url.pathname === "/v1/prices") {
      const key = url.searchParams.get("lookup_keys[0]") ?? "";
      const [planId, period] = key.split("_") as ["popular", "monthly" | "yearly"];
      return ok({ object: "list", data: [priceFor(planId, period === "yearly" ? "year" : "month")], has_more: false });
    }
    if (url.pathname === "/v1/subscriptions") {
      return ok({ object: "list", data: opts.liveSubscription ? [opts.liveSubscription] : [], has_more: false });
    }
    if (url.pathname === "/v1/checkout/sessions") {
      return ok({ id: "cs_test_1", object: "checkout.session", url: "https://checkout.example/cs_test_1" });
    }
    if (url.pathname.startsWith("/v1/subscriptions/")) return ok(opts.liveSubscription);
    if (url.pathname === "/v1/billing_portal/sessions") {
      return ok({ id: "bps_1", object: "billing_portal.session", url: "https://portal.example/bps_1" });
    }
    return Response.json({ error: { type: "invalid_request_error", message: "unexpected" } }, { status: 404 });
  };
  const deps: BillingDeps = {
    stripe: createStripe({ STRIPE_SECRET_KEY: "sk_test_fake", STRIPE_API_URL: "http://stripe.test" }, fetcher),
    db,
    origin: "https://app.example",
  };
  return { calls, deps };
}

const userOf = async () => {
  const u = await makeUser();
  return { id: u.id, email: u.email, name: "Agent" };
};

describe("starting a checkout", { timeout: 30_000 }, () => {
  it("creates the customer first, then a subscription Checkout Session, with an idempotency key on every POST", async () => {
    const user = await userOf();
    const { calls, deps } = fakeStripe();
    const result = await startCheckout(deps, user, "Popular plan", "year");
    expect(result).toEqual({ ok: true, url: "https://checkout.example/cs_test_1" });
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      "POST /v1/customers",
      "GET /v1/prices",
      "GET /v1/subscriptions",
      "POST /v1/checkout/sessions",
    ]);
    for (const c of calls.filter((c) => c.method === "POST")) expect(c.idempotencyKey, c.path).toBeTruthy();
    expect(calls[0]!.idempotencyKey).toBe(`customer:${user.id}`);
    expect(calls[0]!.form.get("email")).toBe(user.email);
    expect(calls[1]!.query.get("lookup_keys[0]")).toBe("popular_yearly");
    const session = calls[3]!.form;
    expect(Object.fromEntries(session)).toMatchObject({
      mode: "subscription",
      customer: "cus_new",
      client_reference_id: user.id,
      "line_items[0][price]": "price_popular_yearly",
      "line_items[0][quantity]": "1",
      "metadata[userId]": user.id,
      "metadata[planId]": "popular",
      "metadata[interval]": "year",
      "subscription_data[metadata][planId]": "popular",
      success_url: "https://app.example/dashboard?checkout=success",
    });
    const row = await db.query.users.findFirst({ where: eq(users.id, user.id) });
    expect(row?.stripeCustomerId).toBe("cus_new");

    const again = fakeStripe();
    await startCheckout(again.deps, user, "popular", "month");
    expect(again.calls.map((c) => c.path)).not.toContain("/v1/customers");
  });

  it("switches an existing subscription to the new price instead of starting a second one", async () => {
    const user = await userOf();
    await db.update(users).set({ stripeCustomerId: "cus_existing" }).where(eq(users.id, user.id));
    const t = Math.floor(Date.now() / 1000);
    const live = subscriptionObject({
      id: "sub_live",
      customer: "cus_existing",
      itemId: "si_live",
      price: priceFor("popular", "month"),
      status: "active",
      created: t,
      periodStart: t,
      periodEnd: t + 30 * 86400,
      metadata: {},
    });
    const { calls, deps } = fakeStripe({ liveSubscription: live });
    expect(await startCheckout(deps, user, "popular", "month")).toEqual({
      ok: false,
      code: "conflict",
      error: ALREADY_ON_PLAN_MESSAGE,
    });
    const result = await startCheckout(deps, user, "professional", "year");
    expect(result).toMatchObject({ ok: true, url: "/billing?changed=1" });
    const update = calls.find((c) => c.method === "POST" && c.path === "/v1/subscriptions/sub_live")!;
    expect(update.idempotencyKey).toMatch(/^switch:sub_live:price_professional_yearly:/);
    expect(Object.fromEntries(update.form)).toMatchObject({
      "items[0][id]": "si_live",
      "items[0][price]": "price_professional_yearly",
      "billing_cycle_anchor[type]": "now",
      proration_behavior: "always_invoice",
      "metadata[planId]": "professional",
    });
    expect(calls.some((c) => c.path === "/v1/checkout/sessions")).toBe(false);
  });
});

describe("the billing portal", { timeout: 30_000 }, () => {
  it("needs a Stripe customer", async () => {
    const user = await userOf();
    const { deps, calls } = fakeStripe();
    expect(await openBillingPortal(deps, user, "manage")).toEqual({
      ok: false,
      code: "conflict",
      error: NO_BILLING_ACCOUNT_MESSAGE,
    });
    expect(calls).toEqual([]);
  });

  it("opens on payment details, or straight on cancelling the current plan", async () => {
    const user = await userOf();
    const story = new SubscriptionStory(user.id, "popular", "month");
    await db.update(users).set({ stripeCustomerId: story.customer }).where(eq(users.id, user.id));
    await deliverOk(story.checkout().created);
    const { deps, calls } = fakeStripe();
    expect(await openBillingPortal(deps, user, "manage")).toEqual({ ok: true, url: "https://portal.example/bps_1" });
    expect(await openBillingPortal(deps, user, "cancel")).toMatchObject({ ok: true });
    const [manage, cancel] = calls;
    expect(manage!.form.get("customer")).toBe(story.customer);
    expect(manage!.form.get("return_url")).toBe("https://app.example/billing");
    expect(manage!.form.has("flow_data[type]")).toBe(false);
    expect(Object.fromEntries(cancel!.form)).toMatchObject({
      "flow_data[type]": "subscription_cancel",
      "flow_data[subscription_cancel][subscription]": story.subscriptionId,
      "flow_data[after_completion][redirect][return_url]": "https://app.example/billing?canceled=1",
    });
    expect(manage!.idempotencyKey).not.toBe(cancel!.idempotencyKey);
  });
});
