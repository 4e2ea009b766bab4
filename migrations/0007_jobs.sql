-- AI jobs (staging, sky replacement, furniture removal) and the versions they
-- produce. A job's credit is a reservation keyed by the job id, created in the
-- same batch as the job row. Times are unix epoch milliseconds.

CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  photo_id TEXT NOT NULL REFERENCES photos (id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('stage', 'sky', 'removal')),
  params TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
  error TEXT,
  version_id TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER
);
CREATE INDEX jobs_user_created ON jobs (user_id, created_at);
CREATE INDEX jobs_photo_created ON jobs (photo_id, created_at);
CREATE INDEX jobs_status_started ON jobs (status, started_at);

-- Every result of a photo is kept ("unlimited revisions"); photos.processed_*
-- points at the newest.
CREATE TABLE photo_versions (
  id TEXT PRIMARY KEY,
  photo_id TEXT NOT NULL REFERENCES photos (id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  job_id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL CHECK (kind IN ('stage', 'sky', 'removal')),
  params TEXT NOT NULL DEFAULT '{}',
  key TEXT NOT NULL,
  thumb_key TEXT NOT NULL,
  content_type TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  width INTEGER NOT NULL,
  height INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX photo_versions_photo_created ON photo_versions (photo_id, created_at);
