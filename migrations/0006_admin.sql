-- Admin console: an audit row for every admin action, and the indexes that keep
-- the users table quick to search and sort at 50,000 users.

CREATE TABLE audit_log (
  id TEXT PRIMARY KEY,
  -- The admin who acted; NULL for the command-line bootstrap (npm run admin:grant).
  actor_id TEXT,
  actor_email TEXT NOT NULL,
  action TEXT NOT NULL CHECK (action IN (
    'credits.grant', 'credits.remove', 'verification.resend', 'sessions.revoke', 'role.grant', 'role.remove'
  )),
  target_user_id TEXT NOT NULL,
  reason TEXT NOT NULL CHECK (length(reason) > 0),
  details TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL
);
CREATE INDEX audit_log_target ON audit_log (target_user_id, created_at);
CREATE INDEX audit_log_created ON audit_log (created_at);

CREATE INDEX users_credits ON users (credits, id);
CREATE INDEX users_last_active ON users (coalesce(last_active_at, 0), id);
CREATE INDEX users_created_id ON users (created_at, id);
CREATE INDEX users_role ON users (role) WHERE role = 'admin';
