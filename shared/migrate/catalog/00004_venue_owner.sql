-- +goose Up
-- The organizer who imported a venue: only they add layout versions to it.
-- Venues imported before (or by an operator) get the creator of their first
-- event, if any; without an owner only an operator adds versions.
ALTER TABLE venues ADD COLUMN created_by BIGINT REFERENCES accounts (id);
UPDATE venues v SET created_by = (SELECT e.created_by FROM events e WHERE e.venue_id = v.id ORDER BY e.id LIMIT 1);

-- +goose Down
ALTER TABLE venues DROP COLUMN created_by;
