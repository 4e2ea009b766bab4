-- Staging a whole listing (issue 15): batches of jobs, variations, re-rolls.
-- docs/decisions/0140-batches-variations-rerolls.md

-- A batch: many photos started in one step, one job (and one reservation) per
-- photo. It is server state, so its progress list survives the tab.
CREATE TABLE batches (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  folder_id TEXT,
  design_style TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX batches_user_created ON batches (user_id, created_at);

-- The batch a job belongs to (null for a single job).
ALTER TABLE jobs ADD COLUMN batch_id TEXT;
-- Variations: every job of one request carries the id of the first (the lead),
-- which makes the one provider call (num_images = the group's size) for all.
ALTER TABLE jobs ADD COLUMN group_id TEXT;
-- Queue order inside the user's Durable Object: higher first (Professional = 1).
ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
-- Credits the job costs: 1, or 0 for the free re-roll.
ALTER TABLE jobs ADD COLUMN cost INTEGER NOT NULL DEFAULT 1;
-- The staging job this one re-rolls (same choices, new seed).
ALTER TABLE jobs ADD COLUMN reroll_of TEXT;
-- The failed job this one retries.
ALTER TABLE jobs ADD COLUMN retry_of TEXT;
CREATE INDEX jobs_batch ON jobs (batch_id);
CREATE INDEX jobs_group ON jobs (group_id);
CREATE INDEX jobs_reroll_of ON jobs (reroll_of);
