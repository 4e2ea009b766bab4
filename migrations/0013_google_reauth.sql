-- Google re-authentication before deleting an account (issue 16; docs/decisions/0112-account-deletion-and-export.md).
-- A session that leaves for Google to confirm a deletion remembers the SHA-256 of the OAuth state it sent and
-- when (reauth_state, reauth_state_at): the callback honours that purpose only for this session and this state,
-- once. A confirmed return records reauth_at: the proof deleteAccount accepts for 5 minutes, once.
ALTER TABLE sessions ADD COLUMN reauth_state TEXT;
ALTER TABLE sessions ADD COLUMN reauth_state_at INTEGER;
ALTER TABLE sessions ADD COLUMN reauth_at INTEGER;
