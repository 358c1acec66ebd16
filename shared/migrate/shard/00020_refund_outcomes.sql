-- +goose Up
-- A refund_pending order names the charge it gives back (payment_id): only
-- that charge's refund finishes it. Orders pended before this named none;
-- they name their latest charged attempt, as the code used to guess.
UPDATE orders o SET payment_id = (
    SELECT max(p.id) FROM payments p WHERE p.order_id = o.id AND p.psp_payment_id IS NOT NULL AND p.status IN ('succeeded', 'refunded'))
WHERE o.status = 'refund_pending' AND o.payment_id IS NULL;

-- Two more outcomes of a refund attempt: asking (recorded before the PSP
-- is called, outside any transaction, so an answer never goes unrecorded
-- without a trace) and failed (accepted as pending, then failed at the
-- PSP: refund.failed). A failed attempt, like a refused one, is final
-- under its idempotency key: the next attempt asks under a new one.
ALTER TABLE refunds DROP CONSTRAINT refunds_status_check;
ALTER TABLE refunds ADD CONSTRAINT refunds_status_check
    CHECK (status IN ('asking', 'succeeded', 'pending', 'refused', 'unanswered', 'failed'));
CREATE INDEX refunds_psp ON refunds (psp_refund_id) WHERE psp_refund_id IS NOT NULL;

-- A card-testing block expires the open payment pages of the blocked
-- account or address: the address's are found here.
CREATE INDEX payments_open_address ON payments (client_address) WHERE status IN ('requires_action', 'failed');

-- +goose Down
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM refunds WHERE status IN ('asking', 'failed')) THEN
        RAISE EXCEPTION 'refunds are asking or failed: settle them before migrating down';
    END IF;
END $$;
-- +goose StatementEnd
DROP INDEX payments_open_address, refunds_psp;
ALTER TABLE refunds DROP CONSTRAINT refunds_status_check;
ALTER TABLE refunds ADD CONSTRAINT refunds_status_check
    CHECK (status IN ('succeeded', 'pending', 'refused', 'unanswered'));
