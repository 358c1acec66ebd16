-- +goose Up
-- The catalog's outbox, the shards' outbox table as migrated to shard
-- 00010 (same columns, the same worker): a message written in the
-- transaction whose change it announces. Its one topic, event.status,
-- copies an organizer's status or sale-end change to the event's shard,
-- so a copy that fails after the catalog committed is retried until it
-- lands instead of waiting for the next change.
CREATE TABLE outbox (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    topic        TEXT NOT NULL,
    payload      JSONB NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    processed_at TIMESTAMPTZ,
    attempts     INT NOT NULL DEFAULT 0,
    retry_at     TIMESTAMPTZ,
    last_error   TEXT,
    dead_at      TIMESTAMPTZ
);
CREATE INDEX outbox_pending ON outbox (id) WHERE processed_at IS NULL AND dead_at IS NULL;
CREATE INDEX outbox_dead ON outbox (id) WHERE dead_at IS NOT NULL;

-- +goose Down
DROP TABLE outbox;
