-- Credits of a refunded or disputed payment that were out in jobs when it came back
-- (docs/decisions/0339-credits-of-a-reversed-payment-do-not-come-back.md): a job that fails afterwards, or a result
-- returned afterwards, gives them back to nobody. `owed` counts them per grant until they are held back.
ALTER TABLE credit_grants ADD COLUMN owed INTEGER NOT NULL DEFAULT 0 CHECK (owed >= 0);
