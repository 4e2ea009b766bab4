-- Accounts: single-use links sent by e-mail (address verification, password
-- reset). Only the SHA-256 of the token is stored; the token itself lives in
-- the e-mail. A link is spent by one conditional UPDATE (used_at IS NULL AND
-- expires_at > now), so two clicks can never both succeed.
CREATE TABLE email_tokens (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  purpose TEXT NOT NULL CHECK (purpose IN ('verify_email', 'reset_password')),
  -- The address the link was sent to: a link is void once the account's e-mail differs.
  email TEXT NOT NULL,
  -- Where to go after signing in (e.g. a checkout chosen before sign-up); a same-origin path.
  redirect_to TEXT,
  expires_at INTEGER NOT NULL,
  used_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX email_tokens_user_purpose ON email_tokens (user_id, purpose);
CREATE INDEX email_tokens_expires_at ON email_tokens (expires_at);
