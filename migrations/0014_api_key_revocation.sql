-- Credentials end with the account's trust (issue 36, docs/decisions/0153-credentials-end-with-the-accounts-trust.md).
-- Why a key was revoked, so its owner is told: by the owner, by a password reset, by an admin's "sign out
-- everywhere", by an admin on that key alone, or by the account's deletion. NULL for keys revoked before this.
ALTER TABLE api_keys ADD COLUMN revoked_reason TEXT
  CHECK (revoked_reason IN ('owner', 'password_reset', 'sessions_revoked', 'admin', 'account_deleted'));

-- An admin may revoke one API key of a user: a new audit action. SQLite cannot change a CHECK in place, so the
-- table is rebuilt with the same columns, rows and indexes.
CREATE TABLE audit_log_new (
  id TEXT PRIMARY KEY,
  -- The admin who acted; NULL for the command-line bootstrap (npm run admin:grant).
  actor_id TEXT,
  actor_email TEXT NOT NULL,
  action TEXT NOT NULL CHECK (action IN (
    'credits.grant', 'credits.remove', 'verification.resend', 'sessions.revoke', 'role.grant', 'role.remove',
    'api_key.revoke'
  )),
  target_user_id TEXT NOT NULL,
  reason TEXT NOT NULL CHECK (length(reason) > 0),
  details TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL
);
INSERT INTO audit_log_new (id, actor_id, actor_email, action, target_user_id, reason, details, created_at)
  SELECT id, actor_id, actor_email, action, target_user_id, reason, details, created_at FROM audit_log;
DROP TABLE audit_log;
ALTER TABLE audit_log_new RENAME TO audit_log;
CREATE INDEX audit_log_target ON audit_log (target_user_id, created_at);
CREATE INDEX audit_log_created ON audit_log (created_at);
