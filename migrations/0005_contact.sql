-- Messages sent through the public contact form (/gallery). Each is also
-- e-mailed to SUPPORT_EMAIL; mailed_at stays NULL when that e-mail failed, so
-- support can find what did not reach the inbox.
CREATE TABLE contact_messages (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT NOT NULL,
  message TEXT NOT NULL,
  -- The signed-in sender, if any; kept when the account is deleted.
  user_id TEXT REFERENCES users (id) ON DELETE SET NULL,
  created_at INTEGER NOT NULL,
  mailed_at INTEGER
);
CREATE INDEX contact_messages_created_at ON contact_messages (created_at);
