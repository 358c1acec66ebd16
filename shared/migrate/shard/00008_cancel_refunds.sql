-- +goose Up
-- The refunds an event's cancellation asks for, one row per paid order:
-- asked once (asked counts how often: a failed refund may be asked again),
-- then refunded (the PSP's refund webhook) or failed (the PSP refused it or
-- never answered, as recorded by the outbox worker).
CREATE TABLE cancel_refunds (
    order_id   BIGINT PRIMARY KEY REFERENCES orders (id),
    event_id   BIGINT NOT NULL,
    status     TEXT NOT NULL DEFAULT 'asked' CHECK (status IN ('asked', 'refunded', 'failed')),
    asked      INT NOT NULL DEFAULT 1,
    failure    TEXT,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX cancel_refunds_failed ON cancel_refunds (event_id) WHERE status = 'failed';

-- A cancelled event's refund progress in one row: counted once by the
-- cancellation, then kept by the transactions that refund an order or
-- record a failed refund (the console polls it every second).
CREATE TABLE cancel_refund_counts (
    event_id BIGINT PRIMARY KEY,
    total    INT NOT NULL,
    refunded INT NOT NULL,
    failed   INT NOT NULL,
    CHECK (refunded >= 0 AND failed >= 0 AND refunded + failed <= total)
);

-- A message whose handler failed waits before its next try; attempts and
-- the last error tell the worker when to give a refund up.
ALTER TABLE outbox ADD COLUMN attempts INT NOT NULL DEFAULT 0,
    ADD COLUMN retry_at TIMESTAMPTZ, ADD COLUMN last_error TEXT;

-- +goose Down
ALTER TABLE outbox DROP COLUMN attempts, DROP COLUMN retry_at, DROP COLUMN last_error;
DROP TABLE cancel_refund_counts, cancel_refunds;
