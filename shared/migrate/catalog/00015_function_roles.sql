-- +goose Up
-- Least privilege (docs/database.md, "Who logs in as whom"): each deployed
-- function logs in as its own role with only the grants its code uses;
-- the migrations run as the owner (the cluster's master user, or postgres
-- locally), which owns every table and keeps every other right. Roles
-- are the cluster's, shared by its databases: the same block runs in
-- every migration that needs them and tolerates a role that exists (or
-- that a concurrent migration of a sibling database creates). On Aurora
-- the roles log in by IAM through RDS Proxy (rds_iam); elsewhere (the
-- tests' PostgreSQL trusts loopback) that role does not exist.
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

-- The API serves fans and organizers: accounts (log-ins need the password
-- hashes), the catalog it edits, and the catalog's outbox it writes (and
-- marks delivered when it delivers at once). Triggers on events write
-- search_words as the role that changes events.
GRANT SELECT, INSERT, UPDATE ON accounts, venues, venue_layouts, layout_sections, layout_seats,
    events, event_price_levels, outbox TO catraca_api;
GRANT SELECT, INSERT ON search_words TO catraca_api;

-- Every function finds an event's shard and reads events (the router,
-- event.Directory).
GRANT SELECT ON events, venues, venue_layouts, layout_sections, event_price_levels
    TO catraca_admit, catraca_sweep, catraca_pspwebhook, catraca_pspqueue, catraca_fulfil, catraca_reconcile;

-- The admission controller marks a room published (the one column it
-- writes; the change triggers the search words' refresh).
GRANT UPDATE (room_published_at) ON events TO catraca_admit;
GRANT SELECT, INSERT ON search_words TO catraca_admit;

-- The sweep function builds the search index's snapshot (searchindex,
-- which reads events and their search words).
GRANT SELECT ON search_words TO catraca_sweep;

-- Orders mail their buyers: the address, never the password hash.
GRANT SELECT (id, email) ON accounts TO catraca_pspwebhook, catraca_pspqueue, catraca_fulfil, catraca_reconcile;

-- Fulfilment delivers the catalog's outbox (copies of events to shards).
GRANT SELECT ON layout_seats TO catraca_fulfil;
GRANT SELECT, UPDATE ON outbox TO catraca_fulfil;

-- +goose Down
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM catraca_api, catraca_admit, catraca_sweep, catraca_pspwebhook,
    catraca_pspqueue, catraca_fulfil, catraca_reconcile;
