-- +goose Up
-- The viewer address a payment attempt was started from (as the API sees
-- it), so the PSP's declines count per address as well as per account
-- (card testing; shared/order's declines).
ALTER TABLE payments ADD COLUMN client_address TEXT;

-- +goose Down
ALTER TABLE payments DROP COLUMN client_address;
