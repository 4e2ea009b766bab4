-- The broker's record expires (issue 47 item 5; docs/decisions/0316-the-brokers-record-expires.md). The daily cron
-- deletes a kept copy only when no remaining row names it: these indexes answer "does any row still name this key"
-- without reading the whole record.
CREATE INDEX team_exports_record_key ON team_exports (record_key) WHERE record_key IS NOT NULL;
CREATE INDEX team_exports_original_key ON team_exports (original_key) WHERE original_key IS NOT NULL;
