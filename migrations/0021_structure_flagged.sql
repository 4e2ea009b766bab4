-- Three outcomes of the structure check (issue 43, docs/decisions/0215-flag-when-unsure.md): a result may now be
-- flagged ("Check the walls and windows": delivered and charged), and a flagged result goes into an MLS download or a
-- listing pack only once its owner confirms they checked it.
--
-- structure_verdict keeps the four values of 0019 (its CHECK cannot change without rebuilding photo_versions, which
-- original_links and folders reference: ADR 0180). A flagged result is stored there as 'passed' (what a release
-- without flags makes of it) with structure_flagged saying why it is flagged: 'score' (the check's score is in the
-- kind's marking band) or 'daily_limit' (the check refused it, but the owner's free refusals of the day were spent,
-- so it was delivered and charged). structure_outcome is what the code reads: the one verdict, computed on read.
ALTER TABLE photo_versions ADD COLUMN structure_flagged TEXT
  CHECK (structure_flagged IN ('score', 'daily_limit'));
ALTER TABLE photo_versions ADD COLUMN structure_outcome TEXT GENERATED ALWAYS AS (
  CASE WHEN structure_verdict = 'passed' AND structure_flagged IN ('score', 'daily_limit') THEN 'flagged'
  ELSE structure_verdict END
) VIRTUAL;
-- Where the check saw the room change: a JSON array of short phrases ("upper left"); NULL when it said nothing.
ALTER TABLE photo_versions ADD COLUMN structure_reasons TEXT;
-- "I checked the walls and windows": when and by whom (the owner's user id) a flagged result was confirmed.
ALTER TABLE photo_versions ADD COLUMN structure_confirmed_at INTEGER;
ALTER TABLE photo_versions ADD COLUMN structure_confirmed_by TEXT;
-- A user's refused results of a day are counted from these rows (the daily limit on free refusals).
CREATE INDEX photo_versions_user_created ON photo_versions (user_id, created_at);
