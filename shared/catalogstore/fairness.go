package catalogstore

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// The steps below are shared/fairness's (catalog 00016): the signals that
// link accounts, the clusters they make, velocity flags, blocks and the
// audit log. The rules (which signal links, how clusters merge, when an
// account is flagged) stay in fairness.

// RecordDevice notes that account used device (or refreshes when it last
// did); inserted tells a first sighting.
func RecordDevice(ctx context.Context, db DB, account int64, device string) (inserted bool, err error) {
	err = db.QueryRow(ctx, `INSERT INTO account_devices (account, device) VALUES ($1, $2)
			ON CONFLICT (account, device) DO UPDATE SET last_seen = now()
			RETURNING xmax = 0`, account, device).Scan(&inserted)
	return inserted, err
}

// AccountsByDevice returns the accounts seen with device.
func AccountsByDevice(ctx context.Context, db Reader, device string) ([]int64, error) {
	rows, _ := db.Query(ctx, `SELECT account FROM account_devices WHERE device = $1`, device)
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// RecentDevices returns the devices account used within window (an
// interval, as time.Duration.String writes it).
func RecentDevices(ctx context.Context, db Reader, account int64, window string) ([]string, error) {
	rows, _ := db.Query(ctx, `SELECT device FROM account_devices WHERE account = $1 AND last_seen > now() - $2::interval`,
		account, window)
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// RecordCard notes that account paid with the card of fingerprint (or
// refreshes when it last did); inserted tells a first payment.
func RecordCard(ctx context.Context, db DB, account int64, fingerprint string) (inserted bool, err error) {
	err = db.QueryRow(ctx, `INSERT INTO account_cards (account, fingerprint) VALUES ($1, $2)
			ON CONFLICT (account, fingerprint) DO UPDATE SET last_seen = now()
			RETURNING xmax = 0`, account, fingerprint).Scan(&inserted)
	return inserted, err
}

// AccountsByCard returns the accounts that paid with the card of fingerprint.
func AccountsByCard(ctx context.Context, db Reader, fingerprint string) ([]int64, error) {
	rows, _ := db.Query(ctx, `SELECT account FROM account_cards WHERE fingerprint = $1`, fingerprint)
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// RecordTransfer counts a ticket transferred from one account to another.
func RecordTransfer(ctx context.Context, db DB, from, to int64) error {
	_, err := db.Exec(ctx, `INSERT INTO account_transfers (from_account, to_account) VALUES ($1, $2)
			ON CONFLICT (from_account, to_account) DO UPDATE SET tickets = account_transfers.tickets + 1, last_at = now()`, from, to)
	return err
}

// LockClusters takes the transaction-scoped advisory lock named key (the
// caller's tx holds it until it ends).
func LockClusters(ctx context.Context, tx DB, key string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key)
	return err
}

// ClusterRoots returns the distinct cluster ids of accounts (an account
// in no cluster is its own).
func ClusterRoots(ctx context.Context, db Reader, accounts []int64) ([]int64, error) {
	rows, _ := db.Query(ctx, `SELECT DISTINCT coalesce(c.cluster_id, a) FROM unnest($1::bigint[]) a
		LEFT JOIN account_clusters c ON c.account = a`, accounts)
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// MoveClusters puts every account of the clusters roots into cluster root.
func MoveClusters(ctx context.Context, db DB, root int64, roots []int64) error {
	_, err := db.Exec(ctx, `UPDATE account_clusters SET cluster_id = $1 WHERE cluster_id = ANY($2) AND cluster_id <> $1`, root, roots)
	return err
}

// JoinCluster puts accounts that are in no cluster into cluster root.
func JoinCluster(ctx context.Context, db DB, root int64, accounts []int64) error {
	_, err := db.Exec(ctx, `INSERT INTO account_clusters (account, cluster_id)
		SELECT a, $1 FROM unnest($2::bigint[]) a ON CONFLICT (account) DO NOTHING`, root, accounts)
	return err
}

// ClusterMember is a row of account_clusters.
type ClusterMember struct{ Cluster, Account int64 }

// ClusterOf returns the members of account's cluster, by account (none
// when nothing links it).
func ClusterOf(ctx context.Context, db Reader, account int64) ([]ClusterMember, error) {
	rows, _ := db.Query(ctx, `SELECT m.cluster_id, m.account FROM account_clusters c
		JOIN account_clusters m ON m.cluster_id = c.cluster_id WHERE c.account = $1 ORDER BY m.account`, account)
	return pgx.CollectRows(rows, pgx.RowToStructByPos[ClusterMember])
}

// ClustersOf returns the members of every cluster any of accounts is in,
// by cluster then account.
func ClustersOf(ctx context.Context, db Reader, accounts []int64) ([]ClusterMember, error) {
	rows, _ := db.Query(ctx, `SELECT cluster_id, account FROM account_clusters
		WHERE cluster_id IN (SELECT cluster_id FROM account_clusters WHERE account = ANY($1)) ORDER BY cluster_id, account`, accounts)
	return pgx.CollectRows(rows, pgx.RowToStructByPos[ClusterMember])
}

// SharedValue is a card fingerprint or device and the accounts that used it.
type SharedValue struct {
	Value    string
	Accounts []int64
}

// SharedCards returns the cards two or more of members paid with.
func SharedCards(ctx context.Context, db Reader, members []int64) ([]SharedValue, error) {
	rows, _ := db.Query(ctx, `SELECT fingerprint, array_agg(account ORDER BY account) FROM account_cards
		WHERE account = ANY($1) GROUP BY fingerprint HAVING count(*) > 1 ORDER BY 1`, members)
	return pgx.CollectRows(rows, pgx.RowToStructByPos[SharedValue])
}

// SharedDevices returns the devices two or more of members used.
func SharedDevices(ctx context.Context, db Reader, members []int64) ([]SharedValue, error) {
	rows, _ := db.Query(ctx, `SELECT device, array_agg(account ORDER BY account) FROM account_devices
		WHERE account = ANY($1) GROUP BY device HAVING count(*) > 1 ORDER BY 1`, members)
	return pgx.CollectRows(rows, pgx.RowToStructByPos[SharedValue])
}

// Transfer is a row of account_transfers.
type Transfer struct {
	From, To int64
	Tickets  int
	Last     time.Time
}

// TransfersAmong returns the transfers between members, by their last
// transfer, oldest first.
func TransfersAmong(ctx context.Context, db Reader, members []int64) ([]Transfer, error) {
	rows, _ := db.Query(ctx, `SELECT from_account, to_account, tickets, last_at FROM account_transfers
		WHERE from_account = ANY($1) AND to_account = ANY($1) ORDER BY last_at`, members)
	return pgx.CollectRows(rows, pgx.RowToStructByPos[Transfer])
}

// AccountFlag is a row of account_flags.
type AccountFlag struct {
	Purchases int
	Signal    string
	At        time.Time
}

// SetFlag flags account with the purchases counted by signal (or updates
// its flag).
func SetFlag(ctx context.Context, db DB, account int64, purchases int, signal string) error {
	_, err := db.Exec(ctx, `INSERT INTO account_flags (account, purchases, signal) VALUES ($1, $2, $3)
		ON CONFLICT (account) DO UPDATE SET purchases = excluded.purchases, signal = excluded.signal, flagged_at = now()`, account, purchases, signal)
	return err
}

// AccountFlags returns the flags of accounts, by account.
func AccountFlags(ctx context.Context, db Reader, accounts []int64) (map[int64]AccountFlag, error) {
	rows, _ := db.Query(ctx, `SELECT account, purchases, signal, flagged_at FROM account_flags WHERE account = ANY($1)`, accounts)
	out := map[int64]AccountFlag{}
	var id int64
	var f AccountFlag
	_, err := pgx.ForEachRow(rows, []any{&id, &f.Purchases, &f.Signal, &f.At}, func() error {
		out[id] = f
		return nil
	})
	return out, err
}

// AccountBlock is a row of account_blocks.
type AccountBlock struct {
	By     int64
	At     time.Time
	Reason string
}

// BlockAccount blocks account (a second block changes nothing).
func BlockAccount(ctx context.Context, db DB, account, by int64, reason string) error {
	_, err := db.Exec(ctx, `INSERT INTO account_blocks (account, blocked_by, reason) VALUES ($1, $2, $3)
			ON CONFLICT (account) DO NOTHING`, account, by, reason)
	return err
}

// UnblockAccount lifts account's block.
func UnblockAccount(ctx context.Context, db DB, account int64) error {
	_, err := db.Exec(ctx, `DELETE FROM account_blocks WHERE account = $1`, account)
	return err
}

// AccountBlocked tells whether account is blocked.
func AccountBlocked(ctx context.Context, db Reader, account int64) (blocked bool, err error) {
	err = db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM account_blocks WHERE account = $1)`, account).Scan(&blocked)
	return blocked, err
}

// AccountBlocks returns the blocks of accounts, by account.
func AccountBlocks(ctx context.Context, db Reader, accounts []int64) (map[int64]AccountBlock, error) {
	rows, _ := db.Query(ctx, `SELECT account, blocked_by, blocked_at, reason FROM account_blocks WHERE account = ANY($1)`, accounts)
	out := map[int64]AccountBlock{}
	var id int64
	var b AccountBlock
	_, err := pgx.ForEachRow(rows, []any{&id, &b.By, &b.At, &b.Reason}, func() error {
		out[id] = b
		return nil
	})
	return out, err
}

// AuditEntry is a row of fairness_audit.
type AuditEntry struct {
	ID       int64
	At       time.Time
	Actor    int64
	Action   string
	Account  int64
	OrderID  *int64
	Reason   string
	Evidence json.RawMessage
}

// AddAudit appends a line to the audit log (ID and At are the database's).
func AddAudit(ctx context.Context, db DB, e AuditEntry) error {
	_, err := db.Exec(ctx, `INSERT INTO fairness_audit (actor, action, account, order_id, reason, evidence) VALUES ($1, $2, $3, $4, $5, $6)`,
		e.Actor, e.Action, e.Account, e.OrderID, e.Reason, []byte(e.Evidence))
	return err
}

// AuditLog returns the latest limit lines actor wrote or that concern
// accounts, newest first.
func AuditLog(ctx context.Context, db Reader, actor int64, accounts []int64, limit int) ([]AuditEntry, error) {
	rows, _ := db.Query(ctx, `SELECT id, at, actor, action, account, order_id, reason, evidence FROM fairness_audit
		WHERE actor = $1 OR account = ANY($2) ORDER BY id DESC LIMIT $3`, actor, accounts, limit)
	return pgx.CollectRows(rows, pgx.RowToStructByPos[AuditEntry])
}
