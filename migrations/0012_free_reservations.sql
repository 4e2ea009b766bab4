-- The free re-roll (issue 15) is a job with a reservation of 0 credits, so the
-- ledger records it with its reason and it is committed or refunded like any
-- other job. 0001 allowed only amount > 0, so every free re-roll failed with a
-- CHECK error (a 500). SQLite cannot change a CHECK: the table is rebuilt with
-- amount >= 0, same columns, rows and index.
-- docs/decisions/0140-batches-variations-rerolls.md

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
