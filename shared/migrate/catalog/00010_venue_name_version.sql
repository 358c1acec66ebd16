-- +goose Up
-- An event shows its venue's name (venue_name), so renaming the venue is a
-- change of each of its events: their version moves (their ETag with it)
-- and changed records it, as for the event's own columns (00009). The
-- statement bumps the version itself, which events_version then keeps;
-- "name = name" still re-indexes the events for search (00002).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION venues_search_refresh() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE events SET name = name, version = version + 1,
        changed = changed || jsonb_build_object('venue_name', version + 1)
    WHERE venue_id = NEW.id;
    RETURN NEW;
END $$;
-- +goose StatementEnd
DROP TRIGGER venues_search ON venues;
CREATE TRIGGER venues_search AFTER UPDATE OF name ON venues
    FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name) EXECUTE FUNCTION venues_search_refresh();

-- +goose Down
DROP TRIGGER venues_search ON venues;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION venues_search_refresh() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE events SET name = name WHERE venue_id = NEW.id;
    RETURN NEW;
END $$;
-- +goose StatementEnd
CREATE TRIGGER venues_search AFTER UPDATE OF name ON venues
    FOR EACH ROW EXECUTE FUNCTION venues_search_refresh();
