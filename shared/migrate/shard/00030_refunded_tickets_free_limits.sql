-- +goose Up
-- Tickets a partial refund gave back (void on an order still paid) stop
-- counting against the per-event limits of the buyer's account, card and
-- cluster of linked accounts (docs/fairness.md), as the tickets of a whole
-- refund (an order no longer paid) do. Without this a fan whose 2 of 6
-- tickets were refunded could buy no more.
-- void_tickets counts an order's void tickets (tickets_order).
CREATE FUNCTION void_tickets(order_id BIGINT) RETURNS BIGINT
LANGUAGE sql STABLE AS $$
    SELECT count(*) FROM tickets t WHERE t.order_id = void_tickets.order_id AND t.void_at IS NOT NULL
$$;

CREATE OR REPLACE FUNCTION tickets_transferred_in(account BIGINT, event BIGINT) RETURNS BIGINT
LANGUAGE sql STABLE AS $$
    SELECT count(*) FROM ticket_keys k JOIN tickets t ON t.id = k.ticket_id JOIN orders o ON o.id = t.order_id
    WHERE k.holder_id = account AND k.event_id = event AND o.user_id <> account AND o.status = 'paid' AND t.void_at IS NULL
$$;

CREATE OR REPLACE FUNCTION cluster_tickets(members BIGINT[], event BIGINT, besides BIGINT) RETURNS BIGINT
LANGUAGE sql STABLE AS $$
    SELECT (SELECT coalesce(sum(o.ticket_count - void_tickets(o.id)), 0) FROM orders o
            WHERE o.user_id = ANY(members) AND o.event_id = event AND o.status = 'paid' AND o.id <> besides)
         + (SELECT count(*) FROM ticket_keys k JOIN tickets t ON t.id = k.ticket_id JOIN orders o ON o.id = t.order_id
            WHERE k.holder_id = ANY(members) AND k.event_id = event AND o.status = 'paid' AND t.void_at IS NULL
              AND NOT o.user_id = ANY(members) AND o.id <> besides)
$$;

-- within_limit() as in 00023, same signature, less the void tickets of
-- paid orders (a pending order has no tickets yet).
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
CREATE OR REPLACE FUNCTION cluster_tickets(members BIGINT[], event BIGINT, besides BIGINT) RETURNS BIGINT
LANGUAGE sql STABLE AS $$
    SELECT (SELECT coalesce(sum(o.ticket_count), 0) FROM orders o
            WHERE o.user_id = ANY(members) AND o.event_id = event AND o.status = 'paid' AND o.id <> besides)
         + (SELECT count(*) FROM ticket_keys k JOIN tickets t ON t.id = k.ticket_id JOIN orders o ON o.id = t.order_id
            WHERE k.holder_id = ANY(members) AND k.event_id = event AND o.status = 'paid'
              AND NOT o.user_id = ANY(members) AND o.id <> besides)
$$;
CREATE OR REPLACE FUNCTION tickets_transferred_in(account BIGINT, event BIGINT) RETURNS BIGINT
LANGUAGE sql STABLE AS $$
    SELECT count(*) FROM ticket_keys k JOIN tickets t ON t.id = k.ticket_id JOIN orders o ON o.id = t.order_id
    WHERE k.holder_id = account AND k.event_id = event AND o.user_id <> account AND o.status = 'paid'
$$;
DROP FUNCTION void_tickets(BIGINT);
