-- +goose Up
-- Least privilege (docs/database.md, "Who logs in as whom"): each deployed
-- function logs in as its own role with only the grants its code uses;
-- the migrations run as the owner. The roles are the cluster's: this is
-- catalog migration 00015's block, which tolerates roles that exist.
-- shard_id(), the default of every id, reads shard_meta as its caller:
-- whoever inserts reads it. SELECT … FOR UPDATE needs UPDATE, and an
-- UPDATE's WHERE needs SELECT. No function deletes but the API's door
-- staff revocations; none writes shard_meta, alters or truncates.
-- +goose StatementBegin
DO $roles$
DECLARE
    r TEXT;
BEGIN
    FOREACH r IN ARRAY ARRAY['catraca_api', 'catraca_admit', 'catraca_sweep', 'catraca_pspwebhook',
                             'catraca_pspqueue', 'catraca_fulfil', 'catraca_reconcile'] LOOP
        BEGIN
            EXECUTE format('CREATE ROLE %I LOGIN', r);
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL; -- created by another database's migration
        END;
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'rds_iam') THEN
            EXECUTE format('GRANT rds_iam TO %I', r);
        END IF;
    END LOOP;
END
$roles$;
-- +goose StatementEnd

GRANT SELECT ON shard_meta TO catraca_api, catraca_admit, catraca_sweep, catraca_pspwebhook,
    catraca_pspqueue, catraca_fulfil, catraca_reconcile;

-- The API: holds (the takes, best available, releases), checkouts, the
-- organizer's console and refunds, the door (check-ins, staff, ticket
-- keys, transfers), and fulfilment of what a request completes at once.
GRANT SELECT, INSERT, UPDATE ON event_seats, ga_pools, ga_slots, holds, orders, order_items, payments, tickets,
    outbox, entry_settings, ticket_keys, checkins, refunds, cancel_refunds, cancel_refund_counts, event_status
    TO catraca_api;
GRANT SELECT, INSERT ON checkin_conflicts, ticket_transfers TO catraca_api;
GRANT SELECT, INSERT, UPDATE, DELETE ON door_staff TO catraca_api; -- a grant made again updates (ON CONFLICT)
GRANT SELECT ON webhook_events TO catraca_api;
GRANT USAGE ON SEQUENCE holds_seq, orders_seq, tickets_seq TO catraca_api;

-- The takes and the limit check are the API's: nobody else calls them.
REVOKE EXECUTE ON FUNCTION hold_take_seats, hold_take_ga_one, hold_take_ga_many,
    within_limit(TEXT, BIGINT, BIGINT, INT, INT), within_limit(TEXT, BIGINT, BIGINT, INT, INT, BIGINT) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION hold_take_seats, hold_take_ga_one, hold_take_ga_many,
    within_limit(TEXT, BIGINT, BIGINT, INT, INT), within_limit(TEXT, BIGINT, BIGINT, INT, INT, BIGINT) TO catraca_api;

-- The admission controller counts what an event can still sell (reader).
GRANT SELECT ON event_seats, ga_pools, ga_slots, holds, orders, order_items TO catraca_admit;

-- The sweeper ends expired holds: frees their seats and places, cancels
-- their payments and orders, and queues what that tells buyers.
GRANT SELECT, UPDATE ON event_seats, ga_slots, holds, orders, payments TO catraca_sweep;
GRANT SELECT ON ga_pools, order_items, event_status TO catraca_sweep;
GRANT INSERT, SELECT (id) ON outbox TO catraca_sweep; -- Enqueue returns the id

-- The PSP consumer creates each order's payment at the PSP and extends
-- the hold it pays for.
GRANT SELECT, INSERT, UPDATE ON payments TO catraca_pspqueue;
GRANT SELECT, UPDATE ON holds, event_seats, ga_slots, orders TO catraca_pspqueue;
GRANT SELECT ON ga_pools, order_items, tickets, event_status TO catraca_pspqueue;
GRANT INSERT, SELECT (id) ON outbox TO catraca_pspqueue;

-- The webhook and the reconciler apply the PSP's events: record them,
-- settle payments, sell holds, issue tickets, refund what cannot be sold.
GRANT SELECT, INSERT ON webhook_events TO catraca_pspwebhook, catraca_reconcile;
GRANT SELECT, UPDATE ON payments, orders, order_items, holds, event_seats, ga_slots
    TO catraca_pspwebhook, catraca_reconcile;
GRANT SELECT, INSERT, UPDATE ON tickets, cancel_refunds, cancel_refund_counts TO catraca_pspwebhook, catraca_reconcile;
-- A refund's confirmation or failure settles its attempt (refund.failed,
-- charge.refunded: docs/payments.md).
GRANT SELECT, UPDATE ON refunds TO catraca_pspwebhook, catraca_reconcile;
GRANT SELECT ON ga_pools, event_status, ticket_keys, entry_settings TO catraca_pspwebhook, catraca_reconcile;
GRANT INSERT, SELECT (id) ON outbox TO catraca_pspwebhook, catraca_reconcile;
GRANT USAGE ON SEQUENCE tickets_seq TO catraca_pspwebhook, catraca_reconcile;

-- Fulfilment delivers the outbox: mails, refunds at the PSP, copies of
-- events (their seats, pools, prices and status) and their cancellation.
GRANT SELECT, INSERT, UPDATE ON outbox, event_seats, ga_pools, ga_slots, event_status, refunds,
    cancel_refunds, cancel_refund_counts TO catraca_fulfil;
GRANT SELECT, UPDATE ON holds, orders, payments TO catraca_fulfil;
GRANT SELECT ON order_items, tickets, ticket_keys TO catraca_fulfil;

-- +goose Down
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM catraca_api, catraca_admit, catraca_sweep, catraca_pspwebhook,
    catraca_pspqueue, catraca_fulfil, catraca_reconcile;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM catraca_api, catraca_pspwebhook, catraca_reconcile;
GRANT EXECUTE ON FUNCTION hold_take_seats, hold_take_ga_one, hold_take_ga_many,
    within_limit(TEXT, BIGINT, BIGINT, INT, INT), within_limit(TEXT, BIGINT, BIGINT, INT, INT, BIGINT) TO PUBLIC;
REVOKE ALL ON FUNCTION hold_take_seats, hold_take_ga_one, hold_take_ga_many,
    within_limit(TEXT, BIGINT, BIGINT, INT, INT), within_limit(TEXT, BIGINT, BIGINT, INT, INT, BIGINT) FROM catraca_api;
