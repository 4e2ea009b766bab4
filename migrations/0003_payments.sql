-- Payments: the Stripe events we acted on, the subscriptions they describe and
-- the periods they paid for. Written only by the user's Durable Object (the
-- webhook hands it plain data), each event in one D1 batch with its effect.
-- Times are epoch milliseconds. See docs/decisions/0020..0024.

-- Every Stripe event handled, keyed by its id: recorded in the same atomic
-- batch as its effect, so a repeated delivery finds it and does nothing.
CREATE TABLE stripe_events (
  id TEXT PRIMARY KEY,
  type TEXT NOT NULL,
  user_id TEXT REFERENCES users (id) ON DELETE SET NULL,
  -- Stripe's event.created, in milliseconds.
  event_created_at INTEGER NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('applied', 'ignored')),
  processed_at INTEGER NOT NULL
);
CREATE INDEX stripe_events_user ON stripe_events (user_id, processed_at);

-- The latest known state of each Stripe subscription. `state_version` is the
-- event.created (ms) of the subscription event whose state is stored; 0 means
-- the row was inferred from a checkout or an invoice before any subscription
-- event arrived. An older event never overwrites a newer state.
CREATE TABLE subscriptions (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  customer_id TEXT NOT NULL,
  plan_id TEXT NOT NULL,
  interval TEXT NOT NULL CHECK (interval IN ('month', 'year')),
  status TEXT NOT NULL,
  cancel_at_period_end INTEGER NOT NULL DEFAULT 0,
  current_period_start INTEGER,
  current_period_end INTEGER,
  ended_at INTEGER,
  state_version INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX subscriptions_user ON subscriptions (user_id);

-- One paid invoice of a subscription: the period it pays for and the plan
-- credits it buys. Month 0 is granted when the payment is recorded; a yearly
-- period grants again at the start of each following month (the Durable
-- Object's alarm wakes at next_grant_at). Each monthly grant's ledger key is
-- plan:<invoice id>:<month>, so no month is ever granted twice.
CREATE TABLE paid_periods (
  invoice_id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  subscription_id TEXT NOT NULL,
  plan_id TEXT NOT NULL,
  interval TEXT NOT NULL CHECK (interval IN ('month', 'year')),
  credits INTEGER NOT NULL CHECK (credits > 0),
  period_start INTEGER,
  period_end INTEGER,
  months_granted INTEGER NOT NULL DEFAULT 0 CHECK (months_granted BETWEEN 0 AND 12),
  next_grant_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX paid_periods_user_next ON paid_periods (user_id, next_grant_at);
