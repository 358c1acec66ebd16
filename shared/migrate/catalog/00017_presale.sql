-- +goose Up
-- Verified-fan presale (docs/fairness.md, "The verified-fan presale"): an
-- event's registration window, its committed draw and the codes it hands
-- out. The catalog holds them because registrations are per account (a
-- catalog row) and their number is small next to the sale's.
CREATE TABLE presales (
    event_id               BIGINT PRIMARY KEY REFERENCES events (id),
    registration_opens_at  TIMESTAMPTZ NOT NULL,
    registration_closes_at TIMESTAMPTZ NOT NULL,
    codes                  INT         NOT NULL CHECK (codes > 0),
    -- The presale is the first part of the event's sale, from its
    -- sale_starts_at to here: only code holders may join the room.
    sale_ends_at           TIMESTAMPTZ NOT NULL,
    -- seed is secret until the draw; commitment = hex SHA-256(seed) is
    -- public from the moment the registration is created.
    seed                   BYTEA       NOT NULL CHECK (length(seed) = 32),
    commitment             TEXT        NOT NULL,
    drawn_at               TIMESTAMPTZ,
    created_by             BIGINT      NOT NULL REFERENCES accounts (id),
    created_at             TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK (registration_opens_at < registration_closes_at),
    CHECK (registration_closes_at < sale_ends_at)
);

CREATE TABLE presale_registrations (
    -- Public and non-identifying: random, published with the draw.
    id            TEXT        PRIMARY KEY,
    event_id      BIGINT      NOT NULL REFERENCES presales (event_id),
    account_id    BIGINT      NOT NULL REFERENCES accounts (id),
    -- The cluster of linked accounts the account belongs to (the account
    -- itself until clusters exist): one registration per cluster.
    cluster_id    BIGINT      NOT NULL,
    registered_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    won           BOOLEAN,
    code          TEXT        UNIQUE,
    mailed_at     TIMESTAMPTZ,
    redeemed_at   TIMESTAMPTZ,
    UNIQUE (event_id, account_id),
    UNIQUE (event_id, cluster_id)
);

-- The API opens registrations, registers fans, draws on the organizer's
-- action and redeems codes; the sweep function draws when nobody did.
GRANT SELECT, INSERT, UPDATE ON presales, presale_registrations TO catraca_api;
GRANT SELECT, UPDATE ON presales, presale_registrations TO catraca_sweep;
-- The sweep draws without a mailer (it reads no address: the winners
-- are mailed at the organizer's next draw call, by the API).

-- +goose Down
DROP TABLE presale_registrations;
DROP TABLE presales;
