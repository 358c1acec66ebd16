-- +goose Up
-- A message that failed every try the worker allows is set aside (dead)
-- instead of retried forever: an operator sees it (metric, log line,
-- /healthz), fixes the cause and redrives it (docs/payments.md).
ALTER TABLE outbox ADD COLUMN dead_at TIMESTAMPTZ;
DROP INDEX outbox_pending;
CREATE INDEX outbox_pending ON outbox (id) WHERE processed_at IS NULL AND dead_at IS NULL;
CREATE INDEX outbox_dead ON outbox (id) WHERE dead_at IS NOT NULL;

-- +goose Down
DROP INDEX outbox_dead, outbox_pending;
CREATE INDEX outbox_pending ON outbox (id) WHERE processed_at IS NULL;
ALTER TABLE outbox DROP COLUMN dead_at;
