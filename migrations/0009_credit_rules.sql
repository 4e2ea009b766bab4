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

-- A refunded or disputed payment takes back the unspent credits of its grants
-- (docs/decisions/0081-refunds-and-disputes.md): one row per refund or dispute,
-- with what the payment granted, what it should take back, what was taken and
-- what had already been spent. A dispute won gives back what it took.
CREATE TABLE payment_reversals (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  payment_intent_id TEXT NOT NULL,
  cause TEXT NOT NULL CHECK (cause IN ('refund', 'dispute')),
  granted INTEGER NOT NULL CHECK (granted >= 0),
  due INTEGER NOT NULL CHECK (due >= 0),
  taken INTEGER NOT NULL CHECK (taken >= 0),
  already_spent INTEGER NOT NULL CHECK (already_spent >= 0),
  restored_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX payment_reversals_user ON payment_reversals (user_id, created_at);
CREATE INDEX payment_reversals_payment ON payment_reversals (payment_intent_id);
