-- The public API (docs/decisions/0120-public-api.md): keys that act as their
-- user, the answers of POSTs sent with an Idempotency-Key, and the callbacks a
-- job sent through the API asked for. Times are unix epoch milliseconds.

-- A key's secret is shown once; only its SHA-256 is kept (as for sessions).
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  -- The first characters of the key, so the owner can tell keys apart.
  prefix TEXT NOT NULL,
  name TEXT NOT NULL,
  scopes TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL,
  last_used_at INTEGER,
  revoked_at INTEGER
);
CREATE INDEX api_keys_user ON api_keys (user_id, created_at);

-- The first answer to a POST sent with an Idempotency-Key, replayed to retries.
-- A row with no status is claimed by a request still running.
CREATE TABLE api_idempotency (
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  status INTEGER,
  response TEXT,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, key)
);
CREATE INDEX api_idempotency_created ON api_idempotency (created_at);

-- One row per job that named a callback URL: 'waiting' while the job runs,
-- 'pending' once it reached a final state (the user's Durable Object alarm
-- delivers it), then 'delivered' or 'failed' (gave up after 24 hours).
CREATE TABLE api_callbacks (
  job_id TEXT PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  api_key_id TEXT NOT NULL,
  url TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('waiting', 'pending', 'delivered', 'failed')),
  payload TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at INTEGER,
  last_attempt_at INTEGER,
  last_status INTEGER,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  finished_at INTEGER,
  delivered_at INTEGER
);
CREATE INDEX api_callbacks_user_status ON api_callbacks (user_id, status, next_at);
