-- +goose Up
-- Money owed is never lost silently. An order whose charge is being given
-- back reads refund_pending (not refunded) until the PSP confirms; its
-- payment_id names the charge being given back. Every refund attempt, the
-- console's and the outbox's (requested_by 0), is a refunds row: refused,
-- unanswered (the PSP never answered), pending (accepted, not yet done) or
-- succeeded. attempt numbers the PSP idempotency key: a retry after a
-- refusal asks under a new one, a retry of an unanswered call under the
-- same one.
ALTER TABLE orders DROP CONSTRAINT orders_status_check;
ALTER TABLE orders ADD CONSTRAINT orders_status_check
    CHECK (status IN ('pending', 'paid', 'cancelled', 'expired', 'refund_pending', 'refunded'));
ALTER TABLE refunds DROP CONSTRAINT refunds_status_check;
ALTER TABLE refunds ADD CONSTRAINT refunds_status_check
    CHECK (status IN ('succeeded', 'pending', 'refused', 'unanswered'));
ALTER TABLE refunds ADD COLUMN attempt INT NOT NULL DEFAULT 1;

-- +goose Down
-- Going down would forget money still owed (refund_pending orders, refunds
-- pending or unanswered): refuse while there is any.
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM orders WHERE status = 'refund_pending')
       OR EXISTS (SELECT 1 FROM refunds WHERE status IN ('pending', 'unanswered')) THEN
        RAISE EXCEPTION 'refunds are pending or unanswered: settle them before migrating down';
    END IF;
END $$;
-- +goose StatementEnd
ALTER TABLE refunds DROP COLUMN attempt;
ALTER TABLE refunds DROP CONSTRAINT refunds_status_check;
ALTER TABLE refunds ADD CONSTRAINT refunds_status_check CHECK (status IN ('succeeded', 'refused'));
ALTER TABLE orders DROP CONSTRAINT orders_status_check;
ALTER TABLE orders ADD CONSTRAINT orders_status_check
    CHECK (status IN ('pending', 'paid', 'cancelled', 'expired', 'refunded'));
