-- MLS-ready output and the agent's data (issue 16; docs/decisions/0110-mls-disclosure-and-original-pages.md,
-- 0111-listing-packs-and-streamed-zips.md, 0112-account-deletion-and-export.md). Times are unix epoch ms.

-- Per-user defaults of the disclosure label burned into downloaded versions.
CREATE TABLE label_settings (
  user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  text TEXT NOT NULL DEFAULT 'Virtually Staged' CHECK (length(text) BETWEEN 1 AND 40),
  corner TEXT NOT NULL DEFAULT 'bottom-right'
    CHECK (corner IN ('top-left', 'top-right', 'bottom-left', 'bottom-right')),
  size TEXT NOT NULL DEFAULT 'medium' CHECK (size IN ('small', 'medium', 'large')),
  tone TEXT NOT NULL DEFAULT 'dark' CHECK (tone IN ('light', 'dark')),
  qr INTEGER NOT NULL DEFAULT 1 CHECK (qr IN (0, 1)),
  updated_at INTEGER NOT NULL
);

-- Public pages of an original next to its staged version: /o/<token>.
-- The token (128 random bits) is the capability; revoking sets revoked_at.
CREATE TABLE original_links (
  token TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  photo_id TEXT NOT NULL REFERENCES photos (id) ON DELETE CASCADE,
  version_id TEXT NOT NULL REFERENCES photo_versions (id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);
CREATE INDEX original_links_version ON original_links (version_id, revoked_at);
CREATE INDEX original_links_user ON original_links (user_id, created_at);

-- Optional listing details of a folder (shown on its photos' original pages and in its pack).
ALTER TABLE folders ADD COLUMN listing_address TEXT CHECK (listing_address IS NULL OR length(listing_address) <= 200);
ALTER TABLE folders ADD COLUMN mls_number TEXT CHECK (mls_number IS NULL OR length(mls_number) <= 40);

-- Account deletion: the row stays (ledger and payments point at it) with personal data erased.
ALTER TABLE users ADD COLUMN deleted_at INTEGER;

-- "Export my data": prepared in the background, mailed as a link valid 24 hours.
CREATE TABLE data_exports (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  status TEXT NOT NULL CHECK (status IN ('queued', 'ready', 'failed')),
  object_key TEXT,
  bytes INTEGER,
  created_at INTEGER NOT NULL,
  ready_at INTEGER,
  expires_at INTEGER
);
CREATE INDEX data_exports_user_created ON data_exports (user_id, created_at);
