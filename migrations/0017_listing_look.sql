-- One look across a listing (issue 33, part 4; docs/decisions/0190-one-look-for-a-listing.md): a folder (a listing)
-- may name one staged version as its look, sent to the provider as the style reference of every later staging of
-- the folder's photos, at the strength chosen (the provider's design_style_image_strength, 0-1).
-- The version disappears with its photo when the photo is deleted for good: the look is then cleared with it.
ALTER TABLE folders ADD COLUMN look_version_id TEXT REFERENCES photo_versions (id) ON DELETE SET NULL;
ALTER TABLE folders ADD COLUMN look_strength REAL CHECK (look_strength IS NULL OR (look_strength > 0 AND look_strength <= 1));
