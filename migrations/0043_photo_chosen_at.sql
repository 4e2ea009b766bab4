-- When the photo's owner last chose the version it shows (chose one, or kept a refused result). A job's result
-- becomes the shown version only when the job was asked for after that choice
-- (docs/decisions/0360-a-chosen-version-stands.md). NULL: never chosen, every new result is shown.
ALTER TABLE photos ADD COLUMN chosen_at INTEGER;
