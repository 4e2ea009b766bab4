-- Credits follow the money actually paid (docs/decisions/0080-credits-follow-payments.md).
-- A subscription's credit window: when its current window began (a new
-- subscription, a renewal or a yearly plan's new month) and the most plan
-- credits granted in it, so an upgrade grants only the difference and
-- switching back and forth grants nothing.
ALTER TABLE subscriptions ADD COLUMN window_start INTEGER;
ALTER TABLE subscriptions ADD COLUMN window_credits INTEGER NOT NULL DEFAULT 0;

-- What each paid invoice was (Stripe's billing_reason), its total after proration
-- credits and discounts (negative for a downgrade paid for by unused time), the
-- credits it actually granted for its first month, and the PaymentIntent that
-- paid it (a refund or dispute names the PaymentIntent, not the invoice).
ALTER TABLE paid_periods ADD COLUMN billing_reason TEXT;
ALTER TABLE paid_periods ADD COLUMN invoice_total INTEGER;
ALTER TABLE paid_periods ADD COLUMN first_grant INTEGER NOT NULL DEFAULT 0;
ALTER TABLE paid_periods ADD COLUMN payment_intent_id TEXT;
CREATE INDEX paid_periods_payment_intent ON paid_periods (payment_intent_id);
