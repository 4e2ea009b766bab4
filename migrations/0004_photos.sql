-- The photo library: folders, photos (bytes in R2 under photos/{userId}/{photoId}/),
-- and resumable upload sessions. Times are unix epoch milliseconds.

CREATE TABLE folders (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  created_at INTEGER NOT NULL
);
CREATE INDEX folders_user_created ON folders (user_id, created_at);

CREATE TABLE photos (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- Deleting a folder keeps its photos: they become unassigned.
  folder_id TEXT REFERENCES folders (id) ON DELETE SET NULL,
  name TEXT NOT NULL,
  original_key TEXT NOT NULL,
  thumb_key TEXT NOT NULL,
  content_type TEXT NOT NULL CHECK (content_type IN ('image/jpeg', 'image/png')),
  bytes INTEGER NOT NULL CHECK (bytes > 0),
  width INTEGER NOT NULL,
  height INTEGER NOT NULL,
  thumb_width INTEGER NOT NULL,
  thumb_height INTEGER NOT NULL,
  -- The current processed (AI) version, if any. The staging work keeps the
  -- history of versions in its own table and points these at the current one.
  processed_key TEXT,
  processed_thumb_key TEXT,
  processed_content_type TEXT,
  processed_at INTEGER,
  created_at INTEGER NOT NULL,
  trashed_at INTEGER
);
-- The grid: one user's live (or trashed) photos, newest first, paged by (created_at, id).
CREATE INDEX photos_user_trashed_created ON photos (user_id, trashed_at, created_at, id);
CREATE INDEX photos_user_folder_created ON photos (user_id, folder_id, created_at, id);
-- The purge: trashed photos of everyone, oldest first.
CREATE INDEX photos_trashed_at ON photos (trashed_at) WHERE trashed_at IS NOT NULL;

-- One resumable upload: small chunks stored as temporary R2 objects under
-- photos/{userId}/{photoId}/chunks/, joined into one object on completion
-- (docs/decisions/0040-resumable-uploads.md). R2 is the record of which chunks
-- arrived; this row holds what was declared.
CREATE TABLE upload_sessions (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- The photo this upload becomes; its R2 prefix holds the chunks meanwhile.
  photo_id TEXT NOT NULL,
  name TEXT NOT NULL,
  content_type TEXT NOT NULL CHECK (content_type IN ('image/jpeg', 'image/png')),
  declared_bytes INTEGER NOT NULL CHECK (declared_bytes > 0),
  chunk_size INTEGER NOT NULL CHECK (chunk_size > 0),
  chunk_count INTEGER NOT NULL CHECK (chunk_count > 0),
  status TEXT NOT NULL CHECK (status IN ('open', 'completing', 'completed', 'aborted', 'rejected', 'expired')),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX upload_sessions_user_status ON upload_sessions (user_id, status, created_at);
CREATE INDEX upload_sessions_status_updated ON upload_sessions (status, updated_at);
