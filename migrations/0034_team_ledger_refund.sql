-- "This result changed the room" on a team job (docs/decisions/0261-this-result-changed-the-room.md, 0270): the
-- credit goes back to the team's pool as a team_ledger row of kind 'refund', naming the member whose job it was
-- (member_id) and the member who returned it (actor_id), keyed `return:<version id>`. 0030 allowed only grant,
-- reserve, commit, release and adjust; SQLite cannot change a CHECK, so the table is rebuilt with 'refund' added:
-- same columns, rows, unique key and index. Nothing references team_ledger.

CREATE TABLE team_ledger_new (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  member_id TEXT,
  kind TEXT NOT NULL CHECK (kind IN ('grant', 'reserve', 'commit', 'release', 'adjust', 'refund')),
  amount INTEGER NOT NULL,
  job_id TEXT,
  reason TEXT NOT NULL,
  idempotency_key TEXT NOT NULL UNIQUE,
  actor_id TEXT,
  created_at INTEGER NOT NULL
);
INSERT INTO team_ledger_new (id, team_id, member_id, kind, amount, job_id, reason, idempotency_key, actor_id, created_at)
  SELECT id, team_id, member_id, kind, amount, job_id, reason, idempotency_key, actor_id, created_at FROM team_ledger;
DROP TABLE team_ledger;
ALTER TABLE team_ledger_new RENAME TO team_ledger;
CREATE INDEX team_ledger_team ON team_ledger (team_id, created_at);
