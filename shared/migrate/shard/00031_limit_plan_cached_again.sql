-- +goose Up
-- within_limit() as in 00030 (void tickets of paid orders and of tickets
-- transferred in do not count), written as 00029 wrote it: every count in
-- its own statement, no SQL function called. 00030 counted through
-- void_tickets() and tickets_transferred_in(), SQL functions that read
-- tables, which PostgreSQL cannot inline and so parses and plans on every
-- hold (00029: a quarter of a hold's shard CPU); PL/pgSQL plans its own
-- statement once per session. Same snapshot, same result.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION within_limit(lock_key TEXT, account BIGINT, event BIGINT, want INT, max_tickets INT, seen_version BIGINT)
RETURNS BOOLEAN LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    locked TEXT; -- a void result; an assignment is evaluated without a query of its own
    have BIGINT;
    stopped BOOLEAN;
BEGIN
    locked := pg_advisory_xact_lock(hashtextextended(lock_key, 0));
    SELECT coalesce(sum(o.ticket_count - CASE WHEN o.status = 'paid'
                THEN (SELECT count(*) FROM tickets v WHERE v.order_id = o.id AND v.void_at IS NOT NULL) ELSE 0 END), 0)
        + (SELECT count(*) FROM ticket_keys k JOIN tickets t ON t.id = k.ticket_id JOIN orders b ON b.id = t.order_id
           WHERE k.holder_id = account AND k.event_id = event AND b.user_id <> account AND b.status = 'paid' AND t.void_at IS NULL),
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
    SELECT coalesce(sum(o.ticket_count - CASE WHEN o.status = 'paid' THEN void_tickets(o.id) ELSE 0 END), 0)
            + tickets_transferred_in(account, event),
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
