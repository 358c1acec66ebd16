-- +goose Up
-- The presale draw's mail goes through the catalog's outbox: the draw,
-- whoever runs it (the API on the organizer's call, or the sweep
-- function, which reads no address), writes one message per registration
-- in its own transaction, and the fulfil function, which mails orders
-- already, sends each winner its code and each other fan the news, once
-- (docs/fairness.md, "Codes").
GRANT INSERT ON outbox TO catraca_sweep;
GRANT SELECT (event_id, sale_ends_at) ON presales TO catraca_fulfil;
GRANT SELECT (id, event_id, account_id, won, code, mailed_at), UPDATE (mailed_at) ON presale_registrations TO catraca_fulfil;

-- An account's email is verified when its owner opens the link mailed at
-- sign-up: a signal of the waiting room's risk score (docs/accounts.md).
-- The API, which writes accounts, sets it.
ALTER TABLE accounts ADD COLUMN email_verified_at TIMESTAMPTZ;

-- +goose Down
ALTER TABLE accounts DROP COLUMN email_verified_at;
REVOKE UPDATE (mailed_at) ON presale_registrations FROM catraca_fulfil;
REVOKE SELECT (id, event_id, account_id, won, code, mailed_at) ON presale_registrations FROM catraca_fulfil;
REVOKE SELECT (event_id, sale_ends_at) ON presales FROM catraca_fulfil;
REVOKE INSERT ON outbox FROM catraca_sweep;
