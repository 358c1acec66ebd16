-- +goose Up
-- Search in milliseconds (issue 18). Typos were answered by trigram KNN over
-- every event's search_text, hundreds of milliseconds at 100,000 events. Now
-- a typed word that is not a known word is corrected against the vocabulary
-- of the catalog (distinct words, not one row per event), and the corrected
-- words go through the GIN full-text index like any other query. A word
-- that is neither known nor correctable matches nothing, so such a query
-- is answered without reading events.
CREATE TABLE search_words (word TEXT PRIMARY KEY);
CREATE INDEX search_words_trgm ON search_words USING gist (word gist_trgm_ops);

-- Every indexed word but numbers (typed exactly) joins the vocabulary.
-- Words are never removed: a stale one can only correct a typo to a word
-- that no longer matches anything.
-- +goose StatementBegin
CREATE FUNCTION search_words_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_words
    SELECT DISTINCT w.lexeme FROM changed, unnest(changed.search_vec) AS w
    WHERE w.lexeme !~ '[0-9]'
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER events_words_insert AFTER INSERT ON events REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION search_words_add();
CREATE TRIGGER events_words_update AFTER UPDATE ON events REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION search_words_add();

INSERT INTO search_words
SELECT DISTINCT w.lexeme FROM events, unnest(events.search_vec) AS w
WHERE w.lexeme !~ '[0-9]'
ON CONFLICT DO NOTHING;

-- Search with a city filter compares folded city names; this lets it walk
-- one city's events in start order (the lower(city) index cannot serve it).
CREATE INDEX events_city_folded_starts ON events (search_normalize(city), starts_at, id);

-- search_query turns what a person typed into a tsquery: words folded like
-- the index; a known word stays as it is; the last word, when some known
-- word starts with it, matches as a prefix (still being typed); any other
-- word is replaced by the nearest known one (trigram similarity at least
-- 0.3). weight 'A' restricts every word to names and categories, '' lets
-- it match any field. NULL when nothing searchable was typed or a word can
-- match nothing.
-- +goose StatementBegin
CREATE FUNCTION search_query(q TEXT, weight TEXT) RETURNS tsquery LANGUAGE sql STABLE PARALLEL SAFE AS $$
    WITH typed AS (
        SELECT t.word, t.n, t.n = max(t.n) OVER () AS last
        FROM regexp_split_to_table(search_normalize(q), '[^[:alnum:]]+') WITH ORDINALITY AS t(word, n)
        WHERE t.word <> ''
    ), fixed AS (
        SELECT n, CASE
            WHEN word ~ '[0-9]' AND last THEN quote_literal(word) || ':*'
            WHEN word ~ '[0-9]' OR EXISTS (SELECT 1 FROM search_words s WHERE s.word = typed.word) THEN quote_literal(word) || ':'
            WHEN last AND EXISTS (SELECT 1 FROM search_words s WHERE s.word LIKE typed.word || '%') THEN quote_literal(word) || ':*'
            ELSE (SELECT quote_literal(s.word) || ':' FROM search_words s WHERE similarity(s.word, typed.word) >= 0.3
                  ORDER BY s.word <-> typed.word LIMIT 1)
        END AS term
        FROM typed
    )
    SELECT CASE WHEN count(*) > 0 AND bool_and(term IS NOT NULL)
        THEN string_agg(rtrim(term || weight, ':'), ' & ' ORDER BY n)::tsquery END
    FROM fixed
$$;
-- +goose StatementEnd

-- +goose Down
DROP INDEX events_city_folded_starts;
DROP FUNCTION search_query(TEXT, TEXT);
DROP TRIGGER events_words_update ON events;
DROP TRIGGER events_words_insert ON events;
DROP FUNCTION search_words_add();
DROP TABLE search_words;
