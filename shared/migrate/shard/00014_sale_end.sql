-- +goose Up
-- The sale's end as the organizer's last change left it, copied with the
-- status (same version rule): moved to now, sales stop now rather than
-- when the sale path's cache of the event expires. NULL for copies written
-- before this migration (or by an app that predates it): no end known.
ALTER TABLE event_status ADD COLUMN sale_ends_at TIMESTAMPTZ;

-- within_limit() as in 00013, same signature (a rolling deploy's old and
-- new app call the same function), refusing too (CT004) a hold of a sale
-- whose end, copied at a later version than the hold read, has passed.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION within_limit(lock_key TEXT, account BIGINT, event BIGINT, want INT, max_tickets INT, seen_version BIGINT)
RETURNS BOOLEAN LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    locked TEXT; -- a void result; an assignment is evaluated without a query of its own
    have BIGINT;
    stopped BOOLEAN;
BEGIN
    locked := pg_advisory_xact_lock(hashtextextended(lock_key, 0));
    SELECT coalesce(sum(o.ticket_count), 0),
        EXISTS (SELECT 1 FROM event_status s WHERE s.event_id = event AND s.version > seen_version
            AND (s.status IN ('closed', 'cancelled') OR s.sale_ends_at <= now()))
    INTO have, stopped
    FROM orders o JOIN holds h ON h.id = o.hold_id
    WHERE o.user_id = account AND h.event_id = event
      AND (o.status = 'paid' OR (o.status = 'pending' AND h.status = 'active' AND h.expires_at > now()));
    IF stopped THEN
        RAISE EXCEPTION USING ERRCODE = 'CT004', MESSAGE = 'sales are closed';
    END IF;
    IF have + want > max_tickets THEN
        RAISE EXCEPTION USING ERRCODE = 'CT002', MESSAGE = 'you have ' || have || ' of ' || max_tickets
            || ' tickets for this event, so ' || CASE WHEN max_tickets > have THEN 'at most ' || (max_tickets - have) || ' more' ELSE 'no more' END;
    END IF;
    RETURN true;
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION within_limit(lock_key TEXT, account BIGINT, event BIGINT, want INT, max_tickets INT, seen_version BIGINT)
RETURNS BOOLEAN LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    locked TEXT; -- a void result; an assignment is evaluated without a query of its own
    have BIGINT;
    stopped BOOLEAN;
BEGIN
    locked := pg_advisory_xact_lock(hashtextextended(lock_key, 0));
    SELECT coalesce(sum(o.ticket_count), 0),
        EXISTS (SELECT 1 FROM event_status s WHERE s.event_id = event AND s.version > seen_version
            AND s.status IN ('closed', 'cancelled'))
    INTO have, stopped
    FROM orders o JOIN holds h ON h.id = o.hold_id
    WHERE o.user_id = account AND h.event_id = event
      AND (o.status = 'paid' OR (o.status = 'pending' AND h.status = 'active' AND h.expires_at > now()));
    IF stopped THEN
        RAISE EXCEPTION USING ERRCODE = 'CT004', MESSAGE = 'sales are closed';
    END IF;
    IF have + want > max_tickets THEN
        RAISE EXCEPTION USING ERRCODE = 'CT002', MESSAGE = 'you have ' || have || ' of ' || max_tickets
            || ' tickets for this event, so ' || CASE WHEN max_tickets > have THEN 'at most ' || (max_tickets - have) || ' more' ELSE 'no more' END;
    END IF;
    RETURN true;
END $$;
-- +goose StatementEnd
ALTER TABLE event_status DROP COLUMN sale_ends_at;
