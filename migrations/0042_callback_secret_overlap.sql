-- The callback secret a rotation replaced, still signing beside the new one until `previous_callback_until`
-- (docs/decisions/0350-a-rotated-callback-secret-signs-for-a-day-more.md). A NULL secret with a time set is the
-- derived secret of a key made before secrets were stored.
ALTER TABLE api_keys ADD COLUMN previous_callback_secret TEXT;
ALTER TABLE api_keys ADD COLUMN previous_callback_secret_key TEXT;
ALTER TABLE api_keys ADD COLUMN previous_callback_until INTEGER;
