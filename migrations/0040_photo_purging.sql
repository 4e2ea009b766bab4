-- A trashed photo claimed for deletion for good (docs/decisions/0346-a-photo-is-claimed-before-its-bytes-go.md):
-- set before its bytes are deleted, so a restore that lands meanwhile is refused rather than bringing back a photo
-- without bytes. A claimed row left by a deletion cut short is finished by the next empty, or by the daily purge.
ALTER TABLE photos ADD COLUMN purging_at INTEGER;
