-- +goose Up
-- Set by the admission controller the first time it publishes an event's
-- waiting room to Redis: a room missing from Redis after that was lost.
ALTER TABLE events ADD COLUMN room_published_at TIMESTAMPTZ;

-- +goose Down
ALTER TABLE events DROP COLUMN room_published_at;
