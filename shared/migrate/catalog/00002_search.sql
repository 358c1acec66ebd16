-- +goose Up
-- unaccent() is only STABLE (its dictionary could change); indexes and
-- generated search columns need an IMMUTABLE wrapper naming the dictionary.
-- +goose StatementBegin
CREATE FUNCTION search_normalize(t TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, coalesce(t, ''))) $$;
-- +goose StatementEnd

ALTER TABLE events ADD COLUMN search_text TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN search_vec TSVECTOR NOT NULL DEFAULT ''::tsvector;

-- The database keeps the search columns current: name and category weigh
-- most, then city and venue, then the description. 'simple' does not stem,
-- so Portuguese and English names match as written; accents are folded.
-- +goose StatementBegin
CREATE FUNCTION events_search_refresh() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    venue_name TEXT;
BEGIN
    SELECT name INTO venue_name FROM venues WHERE id = NEW.venue_id;
    NEW.search_text := search_normalize(NEW.name || ' ' || NEW.city || ' ' || coalesce(venue_name, '') || ' ' || NEW.category);
    NEW.search_vec :=
        setweight(to_tsvector('simple', search_normalize(NEW.name || ' ' || NEW.category)), 'A') ||
        setweight(to_tsvector('simple', search_normalize(NEW.city || ' ' || coalesce(venue_name, ''))), 'B') ||
        setweight(to_tsvector('simple', search_normalize(NEW.description)), 'C');
    RETURN NEW;
END $$;
-- +goose StatementEnd

CREATE TRIGGER events_search BEFORE INSERT OR UPDATE OF name, category, city, description, venue_id ON events
    FOR EACH ROW EXECUTE FUNCTION events_search_refresh();

-- A renamed venue re-indexes its events.
-- +goose StatementBegin
CREATE FUNCTION venues_search_refresh() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE events SET name = name WHERE venue_id = NEW.id;
    RETURN NEW;
END $$;
-- +goose StatementEnd

CREATE TRIGGER venues_search AFTER UPDATE OF name ON venues
    FOR EACH ROW EXECUTE FUNCTION venues_search_refresh();

UPDATE events SET name = name;

CREATE INDEX events_search_vec ON events USING gin (search_vec);
CREATE INDEX events_search_trgm ON events USING gist (search_text gist_trgm_ops);
CREATE INDEX events_category_starts ON events (category, starts_at, id);

-- +goose Down
DROP INDEX events_category_starts, events_search_trgm, events_search_vec;
DROP TRIGGER venues_search ON venues;
DROP FUNCTION venues_search_refresh();
DROP TRIGGER events_search ON events;
DROP FUNCTION events_search_refresh();
ALTER TABLE events DROP COLUMN search_vec, DROP COLUMN search_text;
DROP FUNCTION search_normalize(TEXT);
