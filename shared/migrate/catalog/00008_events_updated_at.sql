-- +goose Up
-- Each API instance's search index (shared/searchindex) re-reads the events
-- changed since its last read, by updated_at. Every change must move it,
-- including those no statement names it in (a renamed venue re-indexes its
-- events with "SET name = name"), and it must be close to the commit:
-- clock_timestamp(), not now() (the start of a transaction that may be long).
-- +goose StatementBegin
CREATE FUNCTION events_touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.updated_at := clock_timestamp();
    RETURN NEW;
END $$;
-- +goose StatementEnd

CREATE TRIGGER events_touch BEFORE INSERT OR UPDATE ON events
    FOR EACH ROW EXECUTE FUNCTION events_touch();

CREATE INDEX events_updated_at ON events (updated_at);

-- +goose Down
DROP INDEX events_updated_at;
DROP TRIGGER events_touch ON events;
DROP FUNCTION events_touch();
