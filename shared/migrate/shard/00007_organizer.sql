-- +goose NO TRANSACTION
-- +goose Up
-- The organizer console reads an event's orders (control-room totals,
-- CSV exports in id order). Built concurrently: orders may be large and
-- busy when this is deployed.
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_event ON orders (event_id, id);

-- Refunds an organizer asked for, each attempt kept: what the PSP said,
-- including a refusal, stays visible on the order.
CREATE TABLE IF NOT EXISTS refunds (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    order_id     BIGINT NOT NULL,
    payment_id   BIGINT NOT NULL,
    requested_by BIGINT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('succeeded', 'refused')),
    psp_refund_id TEXT,
    failure      TEXT,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS refunds_order ON refunds (order_id);

-- +goose Down
DROP TABLE IF EXISTS refunds;
DROP INDEX CONCURRENTLY IF EXISTS orders_event;
