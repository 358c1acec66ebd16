-- +goose Up
-- Ids of rows a fan sees (holds, orders, tickets) carry their shard in the
-- low 10 bits, so any API instance can route GET /api/orders/{id} without a
-- lookup table. shard_meta is written once by the migration runner.
CREATE TABLE shard_meta (
    only_row BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
    shard_id INT NOT NULL CHECK (shard_id BETWEEN 1 AND 1023)
);

-- +goose StatementBegin
CREATE FUNCTION shard_id() RETURNS INT LANGUAGE sql STABLE AS
$$ SELECT shard_id FROM shard_meta $$;
-- +goose StatementEnd

CREATE SEQUENCE holds_seq;
CREATE SEQUENCE orders_seq;
CREATE SEQUENCE tickets_seq;

-- One row per sellable seat of an event: labels and price are copied in, as
-- the layout lives in the catalog (no cross-shard foreign keys).
CREATE TABLE event_seats (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id     BIGINT NOT NULL,
    seat_id      BIGINT NOT NULL,
    seat_index   INT NOT NULL,
    section_code TEXT NOT NULL,
    section_rank INT NOT NULL,
    row_label    TEXT NOT NULL,
    row_rank     INT NOT NULL,
    seat_number  INT NOT NULL,
    price_level  TEXT NOT NULL,
    price_cents  INT NOT NULL CHECK (price_cents >= 0),
    status       TEXT NOT NULL DEFAULT 'available' CHECK (status IN ('available', 'held', 'sold', 'blocked')),
    hold_id      BIGINT,
    held_until   TIMESTAMPTZ,
    order_id     BIGINT,
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (event_id, seat_id),
    UNIQUE (event_id, seat_index),
    CHECK ((status = 'held') = (held_until IS NOT NULL))
);
CREATE INDEX event_seats_expiry ON event_seats (held_until) WHERE status = 'held';
CREATE INDEX event_seats_hold ON event_seats (hold_id) WHERE hold_id IS NOT NULL;
CREATE INDEX event_seats_best ON event_seats (event_id, section_rank, row_rank, section_code, row_label, seat_number);

CREATE TABLE ga_pools (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id    BIGINT NOT NULL,
    code        TEXT NOT NULL,
    name        TEXT NOT NULL,
    price_level TEXT NOT NULL,
    price_cents INT NOT NULL CHECK (price_cents >= 0),
    capacity    INT NOT NULL CHECK (capacity >= 0),
    slots       INT NOT NULL CHECK (slots > 0),
    UNIQUE (event_id, code)
);

-- The remaining quantity of a pool is spread over slots so concurrent
-- buyers update different rows (a single counter row serializes them).
CREATE TABLE ga_slots (
    pool_id   BIGINT NOT NULL REFERENCES ga_pools (id),
    slot      INT NOT NULL,
    remaining INT NOT NULL CHECK (remaining >= 0),
    PRIMARY KEY (pool_id, slot)
);

CREATE TABLE holds (
    id              BIGINT PRIMARY KEY DEFAULT nextval('holds_seq') * 1024 + shard_id(),
    event_id        BIGINT NOT NULL,
    account_id      BIGINT NOT NULL,
    status          TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'released', 'expired', 'converted')),
    expires_at      TIMESTAMPTZ NOT NULL,
    extended        BOOLEAN NOT NULL DEFAULT false,
    idempotency_key TEXT NOT NULL,
    request_hash    BYTEA NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (account_id, idempotency_key)
);
CREATE INDEX holds_active_expiry ON holds (expires_at) WHERE status = 'active';
CREATE INDEX holds_account_event ON holds (account_id, event_id) WHERE status = 'active';

-- GA quantities taken by a hold, per slot, so release returns them exactly.
CREATE TABLE hold_ga (
    hold_id  BIGINT NOT NULL REFERENCES holds (id),
    pool_id  BIGINT NOT NULL,
    slot     INT NOT NULL,
    quantity INT NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (hold_id, pool_id, slot)
);

CREATE TABLE orders (
    id              BIGINT PRIMARY KEY DEFAULT nextval('orders_seq') * 1024 + shard_id(),
    event_id        BIGINT NOT NULL,
    user_id         BIGINT NOT NULL,
    hold_id         BIGINT NOT NULL REFERENCES holds (id),
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'paid', 'cancelled', 'expired', 'refunded')),
    ticket_count    INT NOT NULL CHECK (ticket_count > 0),
    total_cents     BIGINT NOT NULL CHECK (total_cents >= 0),
    currency        TEXT NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    paid_at         TIMESTAMPTZ
);
CREATE INDEX orders_user ON orders (user_id, created_at DESC);
CREATE INDEX orders_user_event ON orders (user_id, event_id) WHERE status IN ('pending', 'paid');

CREATE TABLE order_items (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    order_id      BIGINT NOT NULL REFERENCES orders (id),
    event_seat_id BIGINT REFERENCES event_seats (id),
    pool_id       BIGINT REFERENCES ga_pools (id),
    quantity      INT NOT NULL CHECK (quantity > 0),
    label         TEXT NOT NULL,
    price_level   TEXT NOT NULL,
    price_cents   INT NOT NULL CHECK (price_cents >= 0),
    CHECK ((event_seat_id IS NULL) <> (pool_id IS NULL))
);
CREATE INDEX order_items_order ON order_items (order_id);

CREATE TABLE payments (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    order_id        BIGINT NOT NULL REFERENCES orders (id),
    psp_payment_id  TEXT UNIQUE,
    idempotency_key TEXT NOT NULL UNIQUE,
    status          TEXT NOT NULL CHECK (status IN ('queued', 'requires_action', 'processing', 'succeeded', 'failed', 'refunded')),
    amount_cents    BIGINT NOT NULL,
    currency        TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX payments_order ON payments (order_id);

CREATE TABLE webhook_events (
    psp_event_id TEXT PRIMARY KEY,
    type         TEXT NOT NULL,
    received_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE tickets (
    id            BIGINT PRIMARY KEY DEFAULT nextval('tickets_seq') * 1024 + shard_id(),
    order_id      BIGINT NOT NULL REFERENCES orders (id),
    event_id      BIGINT NOT NULL,
    order_item_id BIGINT NOT NULL REFERENCES order_items (id),
    code          TEXT NOT NULL UNIQUE,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX tickets_order ON tickets (order_id);

CREATE TABLE outbox (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    topic        TEXT NOT NULL,
    payload      JSONB NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    processed_at TIMESTAMPTZ
);
CREATE INDEX outbox_pending ON outbox (id) WHERE processed_at IS NULL;

-- +goose Down
DROP TABLE outbox, tickets, webhook_events, payments, order_items, orders, hold_ga, holds, ga_slots, ga_pools, event_seats;
DROP SEQUENCE tickets_seq, orders_seq, holds_seq;
DROP FUNCTION shard_id();
DROP TABLE shard_meta;
