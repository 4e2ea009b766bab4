-- A free re-roll (docs/decisions/0140-batches-variations-rerolls.md) is a job
-- that costs nothing but is reserved, committed or refunded like any other, so
-- the ledger records it with its reason. Its reservation holds 0 credits, which
-- the original CHECK (amount > 0) refused: the table is rebuilt with amount >= 0.
CREATE TABLE credit_reservations_new (
  key TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  amount INTEGER NOT NULL CHECK (amount >= 0),
  -- JSON [{ "grantId": "...", "amount": n }]: where the credits came from, for refunds.
  allocations TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('held', 'committed', 'refunded')),
  created_at INTEGER NOT NULL,
  settled_at INTEGER
);
INSERT INTO credit_reservations_new (key, user_id, amount, allocations, status, created_at, settled_at)
  SELECT key, user_id, amount, allocations, status, created_at, settled_at FROM credit_reservations;
DROP TABLE credit_reservations;
ALTER TABLE credit_reservations_new RENAME TO credit_reservations;
CREATE INDEX credit_reservations_user_status ON credit_reservations (user_id, status, created_at);
