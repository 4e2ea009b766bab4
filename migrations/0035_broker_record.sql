-- The broker's record (issue 47 item 5; docs/decisions/0285-the-brokers-record.md). Times are unix epoch ms.

-- One row for each photo that left a team listing: the MLS download, each photo of a listing pack, the public API's
-- download, and an original page published or withdrawn. Append-only: the product has no statement that updates or
-- deletes a row. No foreign keys: a folder, photo, member or account that goes away leaves the row as it was, with
-- the names it had at the time. `record_key` is the R2 copy of the bytes that left (teams/<teamId>/record/...),
-- `original_key` the copy of the unaltered original; both live outside every user's prefix, so no purge reaches them.
CREATE TABLE team_exports (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL,
  folder_id TEXT NOT NULL,
  folder_name TEXT NOT NULL,
  photo_id TEXT NOT NULL,
  photo_name TEXT NOT NULL,
  -- NULL: the unaltered original left (a pack photo with nothing altered, or a result left out of it).
  version_id TEXT,
  version_kind TEXT,
  via TEXT NOT NULL CHECK (via IN ('mls_download', 'listing_pack', 'api_download', 'page_published', 'page_withdrawn')),
  -- The member (or, for a team key, the team's runner account of ADR 0295, with the key in key_id).
  member_id TEXT NOT NULL,
  member_name TEXT NOT NULL,
  key_id TEXT,
  mls_profile TEXT NOT NULL,
  label_text TEXT,
  caption TEXT,
  content_sha256 TEXT,
  record_key TEXT,
  original_key TEXT,
  -- The pack a row belongs to (one id for every photo of one pack).
  pack_id TEXT,
  at INTEGER NOT NULL
);
CREATE INDEX team_exports_team_at ON team_exports (team_id, at);
CREATE INDEX team_exports_folder_at ON team_exports (team_id, folder_id, at);
