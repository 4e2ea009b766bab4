-- What a seat payment's reversal could not take because members' jobs were out at that moment
-- (docs/decisions/0349-team-credits-of-a-reversed-payment-do-not-come-back.md): `owed`, at most what those jobs held,
-- and `held_back`, what has since been kept from credits coming back to the pool (a failed job, a returned result).
ALTER TABLE team_payment_reversals ADD COLUMN owed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE team_payment_reversals ADD COLUMN held_back INTEGER NOT NULL DEFAULT 0;
