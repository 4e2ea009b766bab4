-- Operations (issue 36, docs/decisions/0183-errors-and-logs.md and 0184-operations-aggregates.md).
--
-- The request that asked for a job: its run, its provider calls and any error report carry the same id.
ALTER TABLE jobs ADD COLUMN request_id TEXT;

-- Counters per hour, kept in the same write that ends a job (or a webhook, or a provider call's job), so the
-- operations page reads a few dozen rows instead of scanning jobs. hour: the hour's start (ms since the epoch);
-- metric: what is counted (job_succeeded, job_failed, job_refused, provider_ms, provider_failure,
-- callback_failed, stripe_webhook_failed); cause: the failure's cause, or for provider_ms the latency bucket's
-- upper bound in ms; '' when there is none.
CREATE TABLE ops_counts (
  hour INTEGER NOT NULL,
  metric TEXT NOT NULL,
  cause TEXT NOT NULL DEFAULT '',
  count INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (hour, metric, cause)
);

-- Each run of the daily cron: when, how long, and which of its tasks failed (NULL when none).
CREATE TABLE cron_runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at INTEGER NOT NULL,
  finished_at INTEGER NOT NULL,
  ok INTEGER NOT NULL,
  failed TEXT,
  request_id TEXT NOT NULL
);

-- A deleted account's purge (its photos and their bytes) is finished: set by the user's object when the last
-- batch is gone. Accounts deleted before this migration count as purged.
ALTER TABLE users ADD COLUMN purged_at INTEGER;
UPDATE users SET purged_at = deleted_at WHERE deleted_at IS NOT NULL;

-- The backlogs the page shows, read through partial indexes that hold only the open rows.
CREATE INDEX jobs_open ON jobs (status) WHERE status IN ('queued', 'running');
CREATE INDEX data_exports_queued ON data_exports (status) WHERE status = 'queued';
CREATE INDEX users_purge_pending ON users (deleted_at) WHERE deleted_at IS NOT NULL AND purged_at IS NULL;
