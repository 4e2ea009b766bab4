import { eq, or, type SQL, sql } from "drizzle-orm";
import { paidPeriods } from "./schema";

// The paid periods a PaymentIntent paid (docs/decisions/0340-invoice-payments-name-the-payment.md). A refund or a
// dispute names only the PaymentIntent. The period names it when its invoice.paid carried the invoice's payments,
// which an event never does since API version 2025-03-31.basil; otherwise invoice_payment.paid recorded the pair in
// invoice_payments. Either event may come first, so the rule asks both.

/** Paid periods whose invoice the PaymentIntent paid. */
export function paidBy(paymentIntentId: string): SQL {
  return or(
    eq(paidPeriods.paymentIntentId, paymentIntentId),
    sql`${paidPeriods.invoiceId} IN (SELECT ip.invoice_id FROM invoice_payments ip WHERE ip.payment_intent_id = ${paymentIntentId})`,
  ) as SQL;
}
