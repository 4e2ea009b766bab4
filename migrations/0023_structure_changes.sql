-- The structure check's change map and the agent's recourse (issue 43, items 5 and 7;
-- docs/decisions/0260-change-map-with-the-version.md, 0261-this-result-changed-the-room.md).
--
-- structure_map_key: the R2 key of the version's change map (a gray PNG at the check's analysis size, beside the
-- version's bytes under the photo's prefix, so it goes with the photo). NULL when the check did not run or stored no
-- map (a version made before this release, or an unchecked one).
ALTER TABLE photo_versions ADD COLUMN structure_map_key TEXT;

-- "This result changed the room": one row per version whose credit went back (the primary key makes it once per
-- version). No foreign key: the month's count must not drop when the photo is deleted. candidate_prefix is the R2
-- prefix (candidates/<user>/<version>/) of the pair kept, with the agent's consent, as a candidate for the labelled
-- set; NULL without consent. The rows and the copies go when the account is purged.
CREATE TABLE structure_recourses (
  version_id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  photo_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  verdict TEXT NOT NULL,
  score REAL,
  candidate_prefix TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX structure_recourses_user_created ON structure_recourses (user_id, created_at);

-- When the version's credit went back through "This result changed the room" (NULL: not returned). The row above is
-- the record; this column is what the version's views read.
ALTER TABLE photo_versions ADD COLUMN structure_returned_at INTEGER;
