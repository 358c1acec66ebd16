-- +goose Up
-- Box office refunds: every refund attempt keeps how much it gives back,
-- why (a reason from a short list, and the organizer's own words), and,
-- for a partial refund, which tickets it gives back. tickets is NULL for a
-- refund of the whole order (the console's, a cancellation's, a charge the
-- order could not keep): the column also tells the two idempotency key
-- schemes apart (docs/payments.md, 10). The per-function roles already
-- hold table-wide grants on refunds and tickets (00022), which cover new
-- columns: no grant is needed.
ALTER TABLE refunds
    ADD COLUMN amount_cents BIGINT CHECK (amount_cents > 0),
    ADD COLUMN tickets BIGINT[] CHECK (cardinality(tickets) > 0),
    ADD COLUMN reason TEXT CHECK (reason IN ('customer_request', 'duplicate_purchase', 'event_changed', 'fraud', 'other')),
    ADD COLUMN note TEXT CHECK (length(note) <= 500);

-- +goose Down
-- Going down would forget which tickets were given back: refuse while a
-- partial refund exists.
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM refunds WHERE tickets IS NOT NULL) THEN
        RAISE EXCEPTION 'partial refunds exist: their tickets would be forgotten';
    END IF;
END $$;
-- +goose StatementEnd
ALTER TABLE refunds DROP COLUMN note, DROP COLUMN reason, DROP COLUMN tickets, DROP COLUMN amount_cents;
