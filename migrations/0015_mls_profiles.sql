-- Disclosure that fits the agent's MLS (issue 34; docs/decisions/0170-mls-profiles.md). Times are unix epoch ms.

-- The account's disclosure settings: the MLS profile its listings follow (app/shared/mls-profiles.ts; the list
-- lives in code, so only the id's shape is checked here), and the label's customisation where the profile puts a
-- label on the photo. `text` NULL means the profile's own wording; a text replaces its first line only (the line
-- saying where the original is stays). The old `enabled` switch is gone: an account that had switched the label off
-- is moved to the "link only" profile (nothing on the photo, the disclosure and link in the captions), and the old
-- default text "Virtually Staged" becomes the profile's wording, which also says the photo was altered.
-- SQLite cannot drop a CHECK or a column in place, so the table is rebuilt with its rows.
CREATE TABLE label_settings_new (
  user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  profile TEXT NOT NULL DEFAULT 'california'
    CHECK (length(profile) BETWEEN 1 AND 40 AND profile NOT GLOB '*[^a-z0-9-]*'),
  text TEXT CHECK (text IS NULL OR length(text) BETWEEN 1 AND 60),
  corner TEXT NOT NULL DEFAULT 'bottom-right'
    CHECK (corner IN ('top-left', 'top-right', 'bottom-left', 'bottom-right')),
  size TEXT NOT NULL DEFAULT 'medium' CHECK (size IN ('small', 'medium', 'large')),
  tone TEXT NOT NULL DEFAULT 'dark' CHECK (tone IN ('light', 'dark')),
  qr INTEGER NOT NULL DEFAULT 1 CHECK (qr IN (0, 1)),
  updated_at INTEGER NOT NULL
);
INSERT INTO label_settings_new (user_id, profile, text, corner, size, tone, qr, updated_at)
  SELECT user_id,
         CASE WHEN enabled = 0 THEN 'link-only' ELSE 'california' END,
         CASE WHEN text = 'Virtually Staged' THEN NULL ELSE text END,
         corner, size, tone, qr, updated_at
  FROM label_settings;
DROP TABLE label_settings;
ALTER TABLE label_settings_new RENAME TO label_settings;

-- A listing folder: the MLS profile it follows (NULL: the account's), and its status. While it is active or pending
-- its original pages are not withdrawn, nor its photos trashed, without a warning naming the law. Marked sold (or
-- off market), its pages close by themselves `originals_close_days` days later: `originals_close_at` is that moment,
-- read by the daily cron (workers/services/mls/listing-status.ts) and by the original page itself.
ALTER TABLE folders ADD COLUMN mls_profile TEXT
  CHECK (mls_profile IS NULL OR (length(mls_profile) BETWEEN 1 AND 40 AND mls_profile NOT GLOB '*[^a-z0-9-]*'));
ALTER TABLE folders ADD COLUMN listing_status TEXT NOT NULL DEFAULT 'active'
  CHECK (listing_status IN ('active', 'pending', 'sold'));
ALTER TABLE folders ADD COLUMN sold_at INTEGER;
ALTER TABLE folders ADD COLUMN originals_close_days INTEGER
  CHECK (originals_close_days IS NULL OR originals_close_days BETWEEN 0 AND 365);
ALTER TABLE folders ADD COLUMN originals_close_at INTEGER;
CREATE INDEX folders_originals_close_at ON folders (originals_close_at) WHERE originals_close_at IS NOT NULL;

-- Why an original page was closed: by its owner, or by its listing's closing after it was sold. NULL for pages
-- closed before this (by their owner, or by the account's deletion).
ALTER TABLE original_links ADD COLUMN revoked_reason TEXT
  CHECK (revoked_reason IS NULL OR revoked_reason IN ('owner', 'listing_closed', 'account_deleted'));
CREATE INDEX original_links_photo ON original_links (photo_id, revoked_at);

