-- Shared listings (issue 47 item 4; docs/decisions/0280-shared-team-listings.md). Times are unix epoch ms.

-- Who made a version: the member whose job produced it. `user_id` stays the photo's owner (the scope every read of a
-- photo's versions filters by); NULL for versions made before this column, which were all made by that owner.
ALTER TABLE photo_versions ADD COLUMN created_by TEXT;
