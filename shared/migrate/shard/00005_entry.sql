-- +goose Up
-- Entry day (shared/entry). The tickets table keeps its issue-time code for
-- de-duplication only; what a gate checks is derived from ticket_keys.

-- One row per ticket that has been shown, bundled or transferred: whose it
-- is now and which key signs its codes. A transfer bumps generation, which
-- derives a new key and voids every code of the old one.
CREATE TABLE ticket_keys (
    ticket_id   BIGINT PRIMARY KEY REFERENCES tickets (id),
    event_id    BIGINT NOT NULL,
    key_id      TEXT NOT NULL,
    generation  INT NOT NULL DEFAULT 1 CHECK (generation > 0),
    holder_id   BIGINT NOT NULL,
    holder_name TEXT NOT NULL,
    transfers   INT NOT NULL DEFAULT 0 CHECK (transfers >= 0),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX ticket_keys_holder ON ticket_keys (holder_id);

CREATE TABLE ticket_transfers (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ticket_id  BIGINT NOT NULL REFERENCES tickets (id),
    from_id    BIGINT NOT NULL,
    to_id      BIGINT NOT NULL,
    generation INT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Per-event entry settings an organizer changes; no row means the defaults.
CREATE TABLE entry_settings (
    event_id          BIGINT PRIMARY KEY,
    doors_open_at     TIMESTAMPTZ,
    static_codes      BOOLEAN NOT NULL DEFAULT false,
    transfers_allowed BOOLEAN NOT NULL DEFAULT true,
    max_transfers     INT NOT NULL DEFAULT 1 CHECK (max_transfers >= 0),
    updated_at        TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Door staff an organizer granted for one event.
CREATE TABLE door_staff (
    event_id   BIGINT NOT NULL,
    account_id BIGINT NOT NULL,
    name       TEXT NOT NULL,
    granted_by BIGINT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, account_id)
);

-- One admission per ticket: the primary key is what makes two gates
-- scanning the same ticket at the same instant admit it once.
CREATE TABLE checkins (
    ticket_id   BIGINT PRIMARY KEY REFERENCES tickets (id),
    event_id    BIGINT NOT NULL,
    gate        TEXT NOT NULL,
    scan_id     TEXT NOT NULL,
    staff_id    BIGINT NOT NULL,
    scanned_at  TIMESTAMPTZ NOT NULL,
    offline     BOOLEAN NOT NULL DEFAULT false,
    recorded_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX checkins_event ON checkins (event_id);

-- Offline admissions of a ticket already admitted elsewhere, found at sync.
CREATE TABLE checkin_conflicts (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id    BIGINT NOT NULL,
    ticket_id   BIGINT NOT NULL REFERENCES tickets (id),
    scan_id     TEXT NOT NULL UNIQUE,
    gate        TEXT NOT NULL,
    scanned_at  TIMESTAMPTZ NOT NULL,
    first_gate  TEXT NOT NULL,
    first_at    TIMESTAMPTZ NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX checkin_conflicts_event ON checkin_conflicts (event_id, id);

-- +goose Down
DROP TABLE checkin_conflicts, checkins, door_staff, entry_settings, ticket_transfers, ticket_keys;
