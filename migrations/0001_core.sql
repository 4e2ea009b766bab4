-- Core tables: people, their sessions, and the credit ledger.
-- Times are unix epoch milliseconds (INTEGER). Ids are random text.

CREATE TABLE users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL,
  name TEXT NOT NULL,
  password_hash TEXT,
  email_verified_at INTEGER,
  role TEXT NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin')),
  google_sub TEXT,
  -- Plan, set only by verified payment webhooks.
  plan TEXT,
  plan_credits INTEGER NOT NULL DEFAULT 0,
  plan_price_cents INTEGER NOT NULL DEFAULT 0,
  plan_interval TEXT CHECK (plan_interval IN ('month', 'year')),
  plan_features TEXT NOT NULL DEFAULT '[]',
  next_payment_at INTEGER,
  stripe_customer_id TEXT,
  stripe_subscription_id TEXT,
  -- Cached balance: always equals SUM(credit_ledger.amount) for the user.
  -- Written only by the user's Durable Object.
  credits INTEGER NOT NULL DEFAULT 0 CHECK (credits >= 0),
  signup_credits_granted INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  last_active_at INTEGER
);
CREATE UNIQUE INDEX users_email_unique ON users (email);
CREATE UNIQUE INDEX users_google_sub_unique ON users (google_sub) WHERE google_sub IS NOT NULL;
CREATE UNIQUE INDEX users_stripe_customer_unique ON users (stripe_customer_id) WHERE stripe_customer_id IS NOT NULL;
CREATE INDEX users_created_at ON users (created_at);

CREATE TABLE sessions (
  -- SHA-256 (hex) of the random token in the cookie; the token itself is never stored.
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  expires_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  user_agent TEXT
);
CREATE INDEX sessions_user_id ON sessions (user_id);
CREATE INDEX sessions_expires_at ON sessions (expires_at);

-- A grant of credits (signup trial, plan payment, admin). Spending takes from
-- the grant that expires first; `remaining` is what is left of it.
CREATE TABLE credit_grants (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  source TEXT NOT NULL CHECK (source IN ('signup', 'plan', 'admin')),
  amount INTEGER NOT NULL CHECK (amount > 0),
  remaining INTEGER NOT NULL CHECK (remaining >= 0 AND remaining <= amount),
  expires_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX credit_grants_user_expiry ON credit_grants (user_id, expires_at);

-- Credits held for an AI job between reserve and commit/refund.
CREATE TABLE credit_reservations (
  key TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  amount INTEGER NOT NULL CHECK (amount > 0),
  -- JSON [{ "grantId": "...", "amount": n }]: where the credits came from, for refunds.
  allocations TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('held', 'committed', 'refunded')),
  created_at INTEGER NOT NULL,
  settled_at INTEGER
);
CREATE INDEX credit_reservations_user_status ON credit_reservations (user_id, status, created_at);

-- Append-only. SUM(amount) per user equals users.credits.
CREATE TABLE credit_ledger (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('grant', 'reserve', 'commit', 'refund', 'expire', 'adjust')),
  amount INTEGER NOT NULL,
  grant_id TEXT,
  reservation_key TEXT,
  reason TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  actor_id TEXT,
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX credit_ledger_idempotency ON credit_ledger (idempotency_key);
CREATE INDEX credit_ledger_user_created ON credit_ledger (user_id, created_at);

-- Written by GET /api/health to prove D1 accepts writes.
CREATE TABLE health_checks (
  id TEXT PRIMARY KEY,
  checked_at INTEGER NOT NULL
);
