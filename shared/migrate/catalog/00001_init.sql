-- +goose Up
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS unaccent;

CREATE TABLE accounts (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email         TEXT NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
    password_hash TEXT NOT NULL,
    name          TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    role          TEXT NOT NULL DEFAULT 'fan' CHECK (role IN ('fan', 'organizer')),
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX accounts_email_key ON accounts (lower(email));

CREATE TABLE venues (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       TEXT NOT NULL,
    city       TEXT NOT NULL,
    country    TEXT NOT NULL DEFAULT 'BR',
    timezone   TEXT NOT NULL DEFAULT 'America/Sao_Paulo',
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- A layout version is immutable once written: changes make a new version.
CREATE TABLE venue_layouts (
    venue_id   BIGINT NOT NULL REFERENCES venues (id),
    version    INT NOT NULL CHECK (version > 0),
    width      INT NOT NULL,
    height     INT NOT NULL,
    seat_count INT NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (venue_id, version)
);

CREATE TABLE layout_sections (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    venue_id    BIGINT NOT NULL,
    version     INT NOT NULL,
    code        TEXT NOT NULL,
    name        TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('seated', 'standing')),
    rank        INT NOT NULL DEFAULT 100,   -- lower is better (best-available order)
    price_level TEXT NOT NULL,
    capacity    INT NOT NULL DEFAULT 0,     -- standing sections only
    shape       JSONB NOT NULL DEFAULT '[]', -- polygon [[x,y],...] for the map
    FOREIGN KEY (venue_id, version) REFERENCES venue_layouts (venue_id, version),
    UNIQUE (venue_id, version, code)
);

CREATE TABLE layout_seats (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    section_id BIGINT NOT NULL REFERENCES layout_sections (id),
    seat_index INT NOT NULL,            -- dense 0..n-1 per layout: the availability bit
    row_label  TEXT NOT NULL,
    row_rank   INT NOT NULL,            -- lower is closer to the stage
    number     INT NOT NULL,
    x          REAL NOT NULL,
    y          REAL NOT NULL,
    UNIQUE (section_id, row_label, number)
);
CREATE INDEX layout_seats_section ON layout_seats (section_id, seat_index);

CREATE TABLE events (
    id                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    venue_id          BIGINT NOT NULL REFERENCES venues (id),
    layout_version    INT NOT NULL,
    shard_id          INT NOT NULL CHECK (shard_id > 0),
    name              TEXT NOT NULL,
    category          TEXT NOT NULL DEFAULT 'music',
    city              TEXT NOT NULL,
    description       TEXT NOT NULL DEFAULT '',
    starts_at         TIMESTAMPTZ NOT NULL,
    sale_starts_at    TIMESTAMPTZ NOT NULL,
    sale_ends_at      TIMESTAMPTZ NOT NULL,
    status            TEXT NOT NULL DEFAULT 'draft'
                      CHECK (status IN ('draft', 'scheduled', 'on_sale', 'closed', 'cancelled', 'sold_out')),
    currency          TEXT NOT NULL DEFAULT 'BRL',
    max_per_account   INT NOT NULL DEFAULT 6 CHECK (max_per_account > 0),
    max_per_hold      INT NOT NULL DEFAULT 6 CHECK (max_per_hold > 0),
    hold_ttl_seconds  INT NOT NULL DEFAULT 480 CHECK (hold_ttl_seconds > 0),
    hold_cap_seconds  INT NOT NULL DEFAULT 900 CHECK (hold_cap_seconds >= hold_ttl_seconds),
    -- waiting room
    waiting_room          BOOLEAN NOT NULL DEFAULT false,
    prequeue_opens_at     TIMESTAMPTZ,
    queue_ceiling         INT NOT NULL DEFAULT 1000 CHECK (queue_ceiling > 0),
    active_ttl_seconds    INT NOT NULL DEFAULT 600 CHECK (active_ttl_seconds > 0),
    admission_ttl_seconds INT NOT NULL DEFAULT 900 CHECK (admission_ttl_seconds > 0),
    created_by        BIGINT REFERENCES accounts (id),
    created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    FOREIGN KEY (venue_id, layout_version) REFERENCES venue_layouts (venue_id, version),
    CHECK (sale_ends_at > sale_starts_at)
);
CREATE INDEX events_starts ON events (starts_at, id);
CREATE INDEX events_city_starts ON events (lower(city), starts_at, id);

CREATE TABLE event_price_levels (
    event_id    BIGINT NOT NULL REFERENCES events (id),
    code        TEXT NOT NULL,
    name        TEXT NOT NULL,
    price_cents INT NOT NULL CHECK (price_cents >= 0),
    PRIMARY KEY (event_id, code)
);

-- +goose Down
DROP TABLE event_price_levels, events, layout_seats, layout_sections, venue_layouts, venues, accounts;
