-- +goose Up
-- The payment that paid an order: a refund or dispute of that payment at the
-- PSP undoes the sale; one of a duplicate or foreign charge does not.
ALTER TABLE orders ADD COLUMN payment_id BIGINT;
UPDATE orders o SET payment_id = (SELECT min(p.id) FROM payments p WHERE p.order_id = o.id AND p.status IN ('succeeded', 'refunded'))
WHERE o.status = 'paid';

-- A ticket of an order refunded at the PSP is void, not deleted: its code
-- stays recognisable at the gate as refused.
ALTER TABLE tickets ADD COLUMN void_at TIMESTAMPTZ;

-- Releasing or expiring a hold cancels its payment at the PSP.
ALTER TABLE payments DROP CONSTRAINT payments_status_check;
ALTER TABLE payments ADD CONSTRAINT payments_status_check
    CHECK (status IN ('queued', 'requires_action', 'processing', 'succeeded', 'failed', 'canceled', 'refunded'));

-- +goose Down
ALTER TABLE payments DROP CONSTRAINT payments_status_check;
UPDATE payments SET status = 'failed' WHERE status = 'canceled';
ALTER TABLE payments ADD CONSTRAINT payments_status_check
    CHECK (status IN ('queued', 'requires_action', 'processing', 'succeeded', 'failed', 'refunded'));
ALTER TABLE tickets DROP COLUMN void_at;
ALTER TABLE orders DROP COLUMN payment_id;
