-- A refunded or disputed payment for a team's seats (docs/decisions/0343-seat-payments-reversed-from-the-pool.md):
-- what it granted, what the refund or dispute made due (cumulative over partial refunds), and what the pool gave
-- back (never more than it held). A dispute won restores `taken` once (restored_at).
CREATE TABLE team_payment_reversals (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  payment_intent_id TEXT NOT NULL,
  cause TEXT NOT NULL CHECK (cause IN ('refund', 'dispute')),
  granted INTEGER NOT NULL CHECK (granted >= 0),
  due INTEGER NOT NULL CHECK (due >= 0),
  taken INTEGER NOT NULL CHECK (taken >= 0 AND taken <= due),
  restored_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX team_payment_reversals_payment ON team_payment_reversals (team_id, payment_intent_id);
