-- +goose Up
-- within_limit() is a hold's per-account limit check: it takes the
-- account's limit lock on the event (the key is shardstore.LimitLockKey),
-- then counts the tickets the account has there: paid orders, and pending
-- ones whose hold is live. A VOLATILE function's query takes its own
-- snapshot, after the lock, so the count sees every earlier holder's
-- commit even though the statement calling it (the whole hold, one
-- statement) took its snapshot before waiting for the lock; in that
-- statement's own snapshot the count could miss a hold that committed
-- while it waited. true, or the statement fails with CT002 and a message
-- for the buyer.
-- +goose StatementBegin
CREATE FUNCTION within_limit(lock_key TEXT, account BIGINT, event BIGINT, want INT, max_tickets INT) RETURNS BOOLEAN
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    locked TEXT; -- a void result; an assignment is evaluated without a query of its own
    have BIGINT;
BEGIN
    locked := pg_advisory_xact_lock(hashtextextended(lock_key, 0));
    SELECT coalesce(sum(o.ticket_count), 0) INTO have
    FROM orders o JOIN holds h ON h.id = o.hold_id
    WHERE o.user_id = account AND h.event_id = event
      AND (o.status = 'paid' OR (o.status = 'pending' AND h.status = 'active' AND h.expires_at > now()));
    IF have + want > max_tickets THEN
        RAISE EXCEPTION USING ERRCODE = 'CT002', MESSAGE = 'you have ' || have || ' of ' || max_tickets
            || ' tickets for this event, so ' || CASE WHEN max_tickets > have THEN 'at most ' || (max_tickets - have) || ' more' ELSE 'no more' END;
    END IF;
    RETURN true;
END $$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION within_limit(TEXT, BIGINT, BIGINT, INT, INT);
