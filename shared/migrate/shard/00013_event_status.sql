-- +goose Up
-- An event's status as the organizer's last change left it, copied from
-- the catalog: the sale path reads events through a cache of about 2 s,
-- so without this copy a hold (or a checkout) in the seconds after a sale
-- was closed or cancelled went through. version is the catalog event's
-- version at the change, and a copy only replaces an older one. A hold
-- passes the version of the event it read, and only a change newer than
-- that refuses it: a copy that arrives late, or never (a crash between the
-- catalog's commit and this write), cannot keep refusing holds that the
-- catalog allows.
CREATE TABLE event_status (
    event_id BIGINT PRIMARY KEY,
    status   TEXT NOT NULL,
    version  BIGINT NOT NULL
);

-- within_limit() as in 00011, for a hold that read version seen_version of
-- its event: after the account's lock, in the same query as the count, it
-- refuses (CT004) a hold of a sale closed or cancelled at a later version. The query
-- runs in a snapshot taken after the lock, so a stop committed before the
-- hold's statement got the lock refuses it.
-- +goose StatementBegin
CREATE FUNCTION within_limit(lock_key TEXT, account BIGINT, event BIGINT, want INT, max_tickets INT, seen_version BIGINT)
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

-- +goose Down
DROP FUNCTION within_limit(TEXT, BIGINT, BIGINT, INT, INT, BIGINT);
DROP TABLE event_status;
