import {
  addInterval,
  chargeIdOf,
  chargeObject,
  checkoutSessionObject,
  disputeObject,
  type EmittedEventType,
  eventObject,
  type Interval,
  type InvoiceObject,
  type InvoicePayment,
  invoiceObject,
  invoicePaymentsPaid,
  type PriceObject,
  type ProrationLineSpec,
  type SubscriptionObject,
  subscriptionObject,
} from "./stripe-objects.ts";
import { createSeatEngine } from "./stripe-seats.ts";
import type { Delivery, State, StoredEvent, StripeEmulatorOptions } from "./stripe-state.ts";
import { emulatedPrices, id, signPayload, stripeNow } from "./stripe-state.ts";

// What the Stripe emulator does, apart from HTTP: subscriptions paid, renewed,
// switched (with Stripe's proration invoices), cancelled, refunded and
// disputed, each followed by the signed events Stripe would send, in order.

export type Engine = ReturnType<typeof createEngine>;

/** Smart Retries picks its own times; the emulator's next automatic attempt is this long after a failure. */
export const RETRY_AFTER_SECONDS = 3 * 24 * 3600;

export interface InvoiceOptions {
  periodStart: number;
  periodEnd: number;
  prorationCredit?: number;
  quantity?: number;
  prorations?: ProrationLineSpec[];
  periodLine?: boolean;
}

export function createEngine(state: State, opts: StripeEmulatorOptions, save: () => void, origin: () => string) {
  const prices = new Map(emulatedPrices().map((p) => [p.id, p]));
  const webhookUrl = `${opts.appUrl.replace(/\/$/, "")}/api/webhooks/stripe`;
  const nowSeconds = () => stripeNow(state);

  async function deliver(ev: StoredEvent): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const delivery: Delivery = { at: new Date().toISOString(), status: null };
      ev.deliveries.push(delivery);
      try {
        const res = await fetch(webhookUrl, {
          method: "POST",
          headers: {
            "Content-Type": "application/json; charset=utf-8",
            // Signed at the wall clock's time (the app checks it against its own), whatever the test clock says.
            "Stripe-Signature": signPayload(ev.payload, opts.webhookSecret, Math.floor(Date.now() / 1000)),
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

  /**
   * Records events and posts them to the app, one after another, in the order given. A paid invoice's
   * invoice_payment.paid follows its invoice.paid: the invoice event no longer names the PaymentIntent.
   */
  async function emit(items: { type: EmittedEventType; object: unknown; previous?: Record<string, unknown> }[]) {
    // Stripe stamps events with the real time, also for subscriptions on a test clock.
    const created = Math.floor(Date.now() / 1000);
    type Item = (typeof items)[number];
    const all = items.flatMap((item): Item[] =>
      item.type === "invoice.paid"
        ? [
            item,
            ...invoicePaymentsPaid(item.object as InvoiceObject).map((p) => ({
              type: "invoice_payment.paid" as const,
              object: p,
            })),
          ]
        : [item],
    );
    const events = all.map((item) => {
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

  /**
   * A payment attempt for the customer: declined while POST /_emulator/customers/:id/fail-next-payment has
   * declines left (nothing is declined when nothing is due), else paid now.
   */
  function attemptPayment(customer: string, amountDue: number, attemptCount: number): InvoicePayment {
    const declines = state.failNextPayments[customer] ?? 0;
    if (amountDue > 0 && declines > 0) {
      state.failNextPayments[customer] = declines - 1;
      return { paid: false, attemptCount, nextPaymentAttempt: nowSeconds() + RETRY_AFTER_SECONDS };
    }
    return { paid: true, at: nowSeconds(), attemptCount };
  }

  function newInvoice(
    sub: SubscriptionObject,
    p: PriceObject,
    reason: "subscription_create" | "subscription_cycle" | "subscription_update",
    o: InvoiceOptions,
  ): InvoiceObject {
    state.invoiceCounter += 1;
    const invId = id("in");
    const item = sub.items.data[0];
    const spec = {
      id: invId,
      number: `EMU-${String(state.invoiceCounter).padStart(4, "0")}`,
      customer: sub.customer,
      customerEmail: state.customers[sub.customer]?.email ?? null,
      subscriptionId: sub.id,
      subscriptionItemId: item?.id ?? "si_unknown",
      metadata: { ...sub.metadata },
      price: p,
      created: nowSeconds(),
      periodStart: o.periodStart,
      periodEnd: o.periodEnd,
      billingReason: reason,
      prorationCredit: o.prorationCredit ?? 0,
      quantity: o.quantity ?? item?.quantity ?? 1,
      prorations: o.prorations,
      periodLine: o.periodLine,
      hostedUrl: `${origin()}/invoices/${invId}`,
      paymentIntent: `pi_${invId.slice(3)}`,
      startingBalance: state.balances[sub.customer] ?? 0,
    };
    const due = invoiceObject(spec).amount_due;
    const inv = invoiceObject({ ...spec, payment: attemptPayment(sub.customer, due, 1) });
    state.balances[sub.customer] = inv.ending_balance;
    state.invoices[invId] = inv;
    return inv;
  }

  /** The events that follow an invoice's payment attempt: paid, or failed. */
  function invoiceEvents(inv: InvoiceObject): { type: EmittedEventType; object: unknown }[] {
    return inv.status === "paid"
      ? [
          { type: "invoice.paid", object: inv },
          { type: "invoice.payment_succeeded", object: inv },
        ]
      : [{ type: "invoice.payment_failed", object: inv }];
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
      quantity: item.quantity,
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
      quantity: session._extra.quantity ?? 1,
    });
    const inv = newInvoice(sub, p, "subscription_create", { periodStart: start, periodEnd: end });
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
        quantity: session._extra.quantity ?? 1,
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

  /**
   * A new billing period: the renewal Stripe would make at the end of the current one, billing the period ahead
   * and any pending proration items. When the payment is declined the period still starts, the invoice stays open
   * for retries and the subscription turns past_due (docs.stripe.com/billing/subscriptions/overview#failed-payments).
   */
  async function renew(subId: string): Promise<SubscriptionObject | null> {
    const sub = state.subscriptions[subId];
    const item = sub?.items.data[0];
    if (!sub || !item || (sub.status !== "active" && sub.status !== "past_due")) return null;
    const start = item.current_period_end;
    const end = addInterval(start, item.price.recurring.interval as Interval);
    const prorations = state.pendingProrations[subId] ?? [];
    delete state.pendingProrations[subId];
    const inv = newInvoice(sub, item.price, "subscription_cycle", { periodStart: start, periodEnd: end, prorations });
    const status = inv.status === "paid" ? sub.status : "past_due";
    const next = rebuildSubscription(sub, { periodStart: start, periodEnd: end, latestInvoice: inv.id, status });
    const previous: Record<string, unknown> = { items: sub.items, latest_invoice: sub.latest_invoice };
    if (status !== sub.status) previous.status = sub.status;
    const updated = { type: "customer.subscription.updated" as const, object: next, previous };
    // Stripe: a paid renewal's invoice events, then the subscription's new period; a declined one's
    // invoice.payment_failed, then the subscription's update to past_due.
    await emit([...invoiceEvents(inv), updated]);
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
    const items = (params.items as { id?: string; price?: string; quantity?: string }[] | undefined) ?? [];
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
        quantity: item.quantity,
      });
      const inv = newInvoice(base, p, "subscription_update", {
        periodStart: start,
        periodEnd: end,
        prorationCredit: credit,
      });
      const next = rebuildSubscription(base, { latestInvoice: inv.id });
      await emit([
        { type: "customer.subscription.updated", object: next, previous: { items: sub.items } },
        { type: "invoice.paid", object: inv },
      ]);
      return { status: 200, value: next };
    }
    const newQuantity = items[0]?.quantity;
    if (newQuantity !== undefined) {
      const changed = await seats.changeQuantity(sub, params);
      if (changed.status !== 200 || params.cancel_at_period_end === undefined) return changed;
    }
    let next = rebuildSubscription(state.subscriptions[subId] ?? sub, { metadata });
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
      id: chargeIdOf(invoiceId),
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

  /**
   * What a test clock does when it moves: each subscription whose period has ended by the clock's time renews
   * (or ends, when set to cancel at the period's end), period after period.
   */
  async function runClock(): Promise<void> {
    const t = nowSeconds();
    for (const subId of Object.keys(state.subscriptions)) {
      for (let guard = 0; guard < 60; guard++) {
        const sub = state.subscriptions[subId]!;
        const item = sub.items.data[0];
        if (!item || item.current_period_end > t || (sub.status !== "active" && sub.status !== "past_due")) break;
        if (sub.cancel_at_period_end) {
          await cancelNow(subId);
          break;
        }
        await renew(subId);
      }
    }
  }

  const seats = createSeatEngine(state, {
    now: nowSeconds,
    emit,
    newInvoice,
    invoiceEvents,
    attemptPayment,
    rebuildSubscription,
  });

  return {
    prices,
    price,
    now: nowSeconds,
    runClock,
    retryInvoice: seats.retryInvoice,
    deliver,
    emit,
    payCheckout,
    renew,
    setCancelAtPeriodEnd,
    cancelNow,
    updateSubscription,
    moneyBack,
  };
}
