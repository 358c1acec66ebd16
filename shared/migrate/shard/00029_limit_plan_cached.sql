-- +goose Up
-- within_limit() as in 00023, same signature and result, with the count of
-- tickets transferred in written into its statement instead of calling
-- tickets_transferred_in(): PostgreSQL cannot inline a SQL function whose
-- body reads tables, so it parsed and planned that function's join on every
-- call, in every hold (a quarter of a hold's CPU on the shard, in both
-- statement modes), while PL/pgSQL plans its own statements once per
-- session. The subquery reads the caller's snapshot, as the STABLE function
-- did. CREATE OR REPLACE keeps the grants of 00022.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION within_limit(lock_key TEXT, account BIGINT, event BIGINT, want INT, max_tickets INT, seen_version BIGINT)
RETURNS BOOLEAN LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    locked TEXT; -- a void result; an assignment is evaluated without a query of its own
    have BIGINT;
    stopped BOOLEAN;
BEGIN
    locked := pg_advisory_xact_lock(hashtextextended(lock_key, 0));
    SELECT coalesce(sum(o.ticket_count), 0)
        + (SELECT count(*) FROM ticket_keys k JOIN tickets t ON t.id = k.ticket_id JOIN orders b ON b.id = t.order_id
           WHERE k.holder_id = account AND k.event_id = event AND b.user_id <> account AND b.status = 'paid'),
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
    SELECT coalesce(sum(o.ticket_count), 0) + tickets_transferred_in(account, event),
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
