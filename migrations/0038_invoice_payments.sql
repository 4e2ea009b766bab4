-- Which PaymentIntent paid which invoice (docs/decisions/0340-invoice-payments-name-the-payment.md). Since API
-- version 2025-03-31.basil the invoice no longer names its PaymentIntent, and its `payments` list is includable: absent
-- from webhook payloads. Stripe's invoice_payment.paid event brings the pair; a refund or a dispute names only the
-- PaymentIntent, so it finds its invoice, and the credits that invoice granted, through this table.
CREATE TABLE invoice_payments (
  id TEXT PRIMARY KEY,
  invoice_id TEXT NOT NULL,
  payment_intent_id TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX invoice_payments_payment_intent ON invoice_payments (payment_intent_id);
