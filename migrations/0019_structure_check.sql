-- The structure check on every result (issue 33, docs/decisions/0160-structure-check.md and 0162): what it said of
-- each version. 'passed': the architecture is the source's; 'refused': it changed walls, windows or doors, and the
-- job was not charged (the version stays visible, labelled); 'kept': refused, then kept by its owner for a credit
-- ("Keep it anyway"), and never exported as staging; 'unchecked': the check could not run (the result was charged as
-- any other). NULL for versions made before the check. The score is the check's (fails above 1).
ALTER TABLE photo_versions ADD COLUMN structure_verdict TEXT
  CHECK (structure_verdict IN ('passed', 'refused', 'kept', 'unchecked'));
ALTER TABLE photo_versions ADD COLUMN structure_score REAL;
