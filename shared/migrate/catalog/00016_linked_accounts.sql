-- +goose Up
-- Linked accounts (docs/fairness.md): the signals that tie accounts to one
-- person, the clusters they make, the organizer's blocks and the audit log
-- of what organizers did about them.

-- The device cookie (catraca_device: a random id the API sets at sign-up
-- and log-in, nothing read from the browser) each account was seen with.
CREATE TABLE account_devices (
    account    BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    device     TEXT NOT NULL CHECK (length(device) BETWEEN 16 AND 64),
    first_seen TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_seen  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (account, device)
);
CREATE INDEX account_devices_device ON account_devices (device);

-- The provider's fingerprint of each card an account paid with.
CREATE TABLE account_cards (
    account     BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    fingerprint TEXT NOT NULL,
    first_seen  TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_seen   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (account, fingerprint)
);
CREATE INDEX account_cards_fingerprint ON account_cards (fingerprint);

-- Tickets one account transferred to another (a payout).
CREATE TABLE account_transfers (
    from_account BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    to_account   BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    tickets      INT NOT NULL DEFAULT 1,
    last_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (from_account, to_account)
);
CREATE INDEX account_transfers_to ON account_transfers (to_account);

-- Connected components of the links above (union-find kept flat): an
-- account with no row is a cluster of its own, whose id is the account's.
-- A cluster's id is the smallest account id in it.
CREATE TABLE account_clusters (
    account    BIGINT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    cluster_id BIGINT NOT NULL
);
CREATE INDEX account_clusters_cluster ON account_clusters (cluster_id);

-- Accounts an organizer blocked: no log-in, no hold, no checkout.
CREATE TABLE account_blocks (
    account    BIGINT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    blocked_by BIGINT NOT NULL REFERENCES accounts (id),
    blocked_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    reason     TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 500)
);

-- Accounts over the purchase velocity threshold (the latest count).
CREATE TABLE account_flags (
    account    BIGINT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    purchases  INT NOT NULL,
    signal     TEXT NOT NULL,
    flagged_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Every organizer action on linked accounts: who, what, when, and the
-- evidence shown when it was taken.
CREATE TABLE fairness_audit (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         TIMESTAMPTZ NOT NULL DEFAULT now(),
    actor      BIGINT NOT NULL REFERENCES accounts (id),
    action     TEXT NOT NULL CHECK (action IN ('block', 'unblock', 'void')),
    account    BIGINT NOT NULL,
    order_id   BIGINT,
    reason     TEXT NOT NULL,
    evidence   JSONB NOT NULL DEFAULT '{}'
);
CREATE INDEX fairness_audit_actor ON fairness_audit (actor, id);

-- The API records devices and transfers, reads clusters, blocks and
-- writes the audit; the payment functions record cards and flags and
-- read clusters.
GRANT SELECT, INSERT, UPDATE ON account_devices, account_cards, account_transfers, account_clusters,
    account_flags TO catraca_api;
GRANT SELECT, INSERT, DELETE ON account_blocks TO catraca_api;
GRANT SELECT, INSERT ON fairness_audit TO catraca_api;
GRANT SELECT, INSERT, UPDATE ON account_cards, account_clusters, account_flags
    TO catraca_pspwebhook, catraca_reconcile, catraca_pspqueue, catraca_fulfil;
GRANT SELECT ON account_devices, account_transfers TO catraca_pspwebhook, catraca_reconcile, catraca_pspqueue, catraca_fulfil;

-- +goose Down
DROP TABLE fairness_audit, account_flags, account_blocks, account_clusters, account_transfers, account_cards, account_devices;
