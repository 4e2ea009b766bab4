import type { PriceObject, ProrationLineSpec } from "./stripe-objects.ts";

// Stripe's proration of a quantity change, as docs.stripe.com/billing/subscriptions/prorations
// documents it: to the second, from the proration date (the time of the change, or the
// update's proration_date) to the end of the current period, over the period's length.
// A change from N to M seats gives two lines: a credit for the unused time on N × the price
// and a debit for the remaining time on M × the price (the 10 USD → 20 USD halfway example:
// −5 USD and +10 USD). Each line is rounded to the cent on its own. Pure: no I/O.

export interface Period {
  start: number;
  end: number;
}

/** The share of the period left at `at` (0 at or after its end, 1 at or before its start). */
export function remainingFraction(period: Period, at: number): number {
  const total = period.end - period.start;
  if (total <= 0) return 0;
  return Math.min(1, Math.max(0, (period.end - at) / total));
}

/** Cents for `quantity` × `unitAmount` over the part of the period left at `at`, rounded to the cent. */
export function prorationAmount(unitAmount: number, quantity: number, period: Period, at: number): number {
  const total = period.end - period.start;
  if (total <= 0) return 0;
  const remaining = Math.min(total, Math.max(0, period.end - at));
  return Math.round((unitAmount * quantity * remaining) / total);
}

/** "28 Nov 2026", as Stripe's proration descriptions show the date. */
function day(seconds: number): string {
  return new Date(seconds * 1000).toLocaleDateString("en-GB", {
    day: "2-digit",
    month: "short",
    year: "numeric",
    timeZone: "UTC",
  });
}

/** The two proration lines of a change from `from` to `to` units of `price` at `at` (none when nothing changes). */
export function quantityProrations(o: {
  price: PriceObject;
  from: number;
  to: number;
  period: Period;
  at: number;
  invoiceItem: () => string;
}): ProrationLineSpec[] {
  if (o.from === o.to) return [];
  const name = o.price.lookup_key;
  const when = day(o.at);
  const line = (sign: -1 | 1, quantity: number, what: string): ProrationLineSpec => ({
    amount: sign * prorationAmount(o.price.unit_amount, quantity, o.period, o.at),
    description: `${what} time on ${quantity} × ${name} after ${when}`,
    quantity,
    periodStart: o.at,
    periodEnd: o.period.end,
    invoiceItem: o.invoiceItem(),
  });
  const lines: ProrationLineSpec[] = [];
  if (o.from > 0) lines.push(line(-1, o.from, "Unused"));
  if (o.to > 0) lines.push(line(1, o.to, "Remaining"));
  return lines;
}
