-- Team API keys (issue 47 item 6; docs/decisions/0295-team-api-keys.md). A team key is a row of api_keys like a
-- personal key (only its SHA-256 kept), whose user_id is the team's runner: a sign-in-less account, one per team, in
-- whose Durable Object the key's jobs run and under which its photos are kept. Expand only: nullable columns.

-- The team the key belongs to (NULL: a personal key). Read on every request, like the key itself.
ALTER TABLE api_keys ADD COLUMN team_id TEXT;
-- The team admin who made it: shown on the team page, never checked (the key outlives their membership).
ALTER TABLE api_keys ADD COLUMN created_by TEXT;
-- The team listing the key's uploads go to, made with the key.
ALTER TABLE api_keys ADD COLUMN folder_id TEXT;
-- Most pool credits the key may spend per billing period, like a member's limit; NULL: none but the pool.
ALTER TABLE api_keys ADD COLUMN credit_limit INTEGER CHECK (credit_limit IS NULL OR credit_limit >= 0);
CREATE INDEX api_keys_team ON api_keys (team_id, created_at);
