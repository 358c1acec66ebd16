-- +goose Up
-- The shard's copy of an event's status takes only the catalog's event
-- states (events.status, catalog 00001), as every other status column
-- does; shardstore's states test keeps both in step with event.Status.
ALTER TABLE event_status ADD CONSTRAINT event_status_status_check
    CHECK (status IN ('draft', 'scheduled', 'on_sale', 'closed', 'cancelled', 'sold_out'));

-- +goose Down
ALTER TABLE event_status DROP CONSTRAINT event_status_status_check;
