-- Brokerages and teams (issue 47; docs/decisions/0270-team-credit-pool.md). Times are unix epoch ms.

-- A team: its name, its seats (what the subscription's quantity pays for), its credit pool and whether a failed
-- renewal froze it. `credits` is a cache of SUM(team_ledger.amount), written only by the team's Durable Object
-- (workers/objects/team-object.ts); the CHECK turns a wrong computation into a failed batch, never a negative pool.
CREATE TABLE teams (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 80),
  owner_id TEXT NOT NULL,
  seats INTEGER NOT NULL DEFAULT 1 CHECK (seats >= 1),
  credits INTEGER NOT NULL DEFAULT 0 CHECK (credits >= 0),
  -- The billing period the per-member limits count in: spending since this moment.
  period_start INTEGER NOT NULL,
  -- Set by invoice.payment_failed: no new team job starts until a payment succeeds. Nothing is taken away.
  frozen_at INTEGER,
  default_mls_profile TEXT,
  -- How long the broker's record keeps the bytes that left, in days (at least the listing's active period).
  retention_days INTEGER NOT NULL DEFAULT 1095 CHECK (retention_days >= 30),
  stripe_customer_id TEXT,
  stripe_subscription_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

-- Who belongs to a team and as what. A removed member keeps the row (removed_at set) so the ledger and the broker's
-- record still name them; every team route reads `removed_at IS NULL`.
CREATE TABLE team_members (
  team_id TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  user_id TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('owner', 'team_admin', 'agent')),
  -- Most credits of the pool this member may spend per billing period; NULL: no limit but the pool.
  credit_limit INTEGER CHECK (credit_limit IS NULL OR credit_limit >= 0),
  joined_at INTEGER NOT NULL,
  removed_at INTEGER,
  PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user ON team_members (user_id, removed_at);

-- An invitation by e-mail: only the SHA-256 of its token is kept; valid 7 days, used once, bound to the address.
CREATE TABLE team_invitations (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('team_admin', 'agent')),
  token_hash TEXT NOT NULL UNIQUE,
  invited_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  accepted_at INTEGER,
  accepted_by TEXT,
  revoked_at INTEGER
);
CREATE INDEX team_invitations_team ON team_invitations (team_id, accepted_at, revoked_at, expires_at);

-- A team job's credit, keyed by the job's id: held when the team's object took it, then committed or released once
-- the job's own (0-credit) reservation in its member's object settled. The member is named on every row.
CREATE TABLE team_reservations (
  job_id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  member_id TEXT NOT NULL,
  amount INTEGER NOT NULL CHECK (amount >= 0),
  status TEXT NOT NULL CHECK (status IN ('held', 'committed', 'released')),
  -- The team's period_start when it was taken: what the member's limit counts.
  period_start INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  settled_at INTEGER
);
CREATE INDEX team_reservations_team ON team_reservations (team_id, status, created_at);
CREATE INDEX team_reservations_member ON team_reservations (team_id, member_id, period_start);

-- The pool's append-only ledger: grant, reserve, commit, release, adjust; each row names the member (NULL for a
-- grant or an adjustment by billing) and has a unique idempotency key.
CREATE TABLE team_ledger (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  member_id TEXT,
  kind TEXT NOT NULL CHECK (kind IN ('grant', 'reserve', 'commit', 'release', 'adjust')),
  amount INTEGER NOT NULL,
  job_id TEXT,
  reason TEXT NOT NULL,
  idempotency_key TEXT NOT NULL UNIQUE,
  actor_id TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX team_ledger_team ON team_ledger (team_id, created_at);

-- A folder that belongs to a team (a shared listing); NULL: the owner's personal folder.
ALTER TABLE folders ADD COLUMN team_id TEXT;
CREATE INDEX folders_team ON folders (team_id);
-- A job that spends a team's pool (its member's own reservation is then 0 credits).
ALTER TABLE jobs ADD COLUMN team_id TEXT;
