-- +goose Up
-- An event's version, for optimistic concurrency over HTTP (its ETag, a
-- write's If-Match): every change of what organizers see of an event bumps
-- it, whoever writes it (the edit form, the control room, an operator).
-- changed records at which version each of those columns last changed, so
-- a stale write can be told what changed since the version it read.
ALTER TABLE events ADD COLUMN version BIGINT NOT NULL DEFAULT 1,
    ADD COLUMN changed JSONB NOT NULL DEFAULT '{}';

-- The columns compared are listed: a generated or bookkeeping column
-- (search_vec, room_published_at, updated_at) is no change of the event.
-- +goose StatementBegin
CREATE FUNCTION events_version() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    fields JSONB;
BEGIN
    IF NEW.version <> OLD.version THEN
        RETURN NEW; -- bumped by the statement itself (price levels)
    END IF;
    SELECT coalesce(jsonb_object_agg(n.key, OLD.version + 1), '{}') INTO fields
    FROM jsonb_each(to_jsonb(NEW)) n
    WHERE n.key = ANY (ARRAY['name', 'city', 'category', 'description', 'starts_at', 'sale_starts_at', 'sale_ends_at',
            'status', 'max_per_account', 'max_per_hold', 'hold_ttl_seconds', 'waiting_room', 'prequeue_opens_at',
            'queue_ceiling', 'active_ttl_seconds', 'admission_ttl_seconds', 'admission_paused'])
        AND n.value IS DISTINCT FROM to_jsonb(OLD) -> n.key;
    IF fields <> '{}' THEN
        NEW.version := OLD.version + 1;
        NEW.changed := OLD.changed || fields;
    END IF;
    RETURN NEW;
END $$;
-- +goose StatementEnd
CREATE TRIGGER events_version BEFORE UPDATE ON events FOR EACH ROW EXECUTE FUNCTION events_version();

-- A price level's change is a change of its event.
-- +goose StatementBegin
CREATE FUNCTION event_prices_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE events SET version = version + 1, changed = changed || jsonb_build_object('price_levels', version + 1)
    WHERE id = NEW.event_id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER event_prices_version AFTER UPDATE ON event_price_levels FOR EACH ROW
    WHEN (OLD IS DISTINCT FROM NEW) EXECUTE FUNCTION event_prices_version();

-- +goose Down
DROP TRIGGER event_prices_version ON event_price_levels;
DROP FUNCTION event_prices_version();
DROP TRIGGER events_version ON events;
DROP FUNCTION events_version();
ALTER TABLE events DROP COLUMN version, DROP COLUMN changed;
