-- +goose Up
ALTER TABLE payments ADD COLUMN attempt INT NOT NULL DEFAULT 1;
ALTER TABLE payments ADD COLUMN url TEXT;
ALTER TABLE payments ADD COLUMN failure TEXT;
-- One payment attempt in flight per order: a double-clicked checkout
-- reuses it instead of creating a second charge.
CREATE UNIQUE INDEX payments_live ON payments (order_id) WHERE status IN ('queued', 'requires_action', 'processing');
CREATE INDEX payments_psp ON payments (psp_payment_id);

-- +goose Down
DROP INDEX payments_psp, payments_live;
ALTER TABLE payments DROP COLUMN failure, DROP COLUMN url, DROP COLUMN attempt;
