-- Each API key's own callback signing secret (issue 36 part 4, docs/decisions/0182-signing-keys-rotate.md).
-- Until now a key's secret was derived from SIGNING_SECRET and the key's id, so SIGNING_SECRET could not be rotated
-- without changing every integrator's secret at once. From now on it is stored per key: 256 random bits for a new key
-- or after its owner rotates it, sealed with AES-GCM under a signing key whose id is callback_secret_key.
--
-- Expand only: two nullable columns. Keys made before keep the secret they have (NULL here means "the derived one");
-- a migration cannot compute it (it needs the Worker's SIGNING_SECRET), so the daily maintenance stores it sealed,
-- and until it has, the derivation still answers while SIGNING_SECRET is set.
ALTER TABLE api_keys ADD COLUMN callback_secret TEXT;
ALTER TABLE api_keys ADD COLUMN callback_secret_key TEXT;
