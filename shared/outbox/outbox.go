// Package outbox holds the statements of the transactional outbox, a table
// the catalog and every shard have alike (shard migration 00001, catalog
// 00011): a message is written in the transaction that makes a change and
// handed to a worker after commit. shared/shardstore and
// shared/catalogstore run these on their own transactions, so each store
// owns its database and the outbox's SQL is written once.
package outbox

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Topic names what a message asks for; the stores name their own.
type Topic string

// Message is one outbox message.
type Message struct {
	ID       int64
	Topic    Topic
	Payload  []byte
	Attempts int // failed tries so far
}

// DB is a transaction (or, for DeadMessages, a pool).
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Enqueue writes a message, committed with tx, and returns its id.
func Enqueue(ctx context.Context, tx DB, topic Topic, payload any) (int64, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return 0, err
	}
	var id int64
	err = tx.QueryRow(ctx, `INSERT INTO outbox (topic, payload) VALUES ($1, $2) RETURNING id`, topic, b).Scan(&id)
	return id, err
}

// Unprocessed locks up to limit unprocessed messages due now, oldest
// first, skipping those another worker holds.
func Unprocessed(ctx context.Context, tx DB, limit int) ([]Message, error) {
	rows, err := tx.Query(ctx, `SELECT id, topic, payload, attempts FROM outbox WHERE processed_at IS NULL AND dead_at IS NULL
		AND (retry_at IS NULL OR retry_at <= now()) ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Message, error) {
		var m Message
		return m, r.Scan(&m.ID, &m.Topic, &m.Payload, &m.Attempts)
	})
}

// Processed marks a message done.
func Processed(ctx context.Context, tx DB, id int64) error {
	_, err := tx.Exec(ctx, `UPDATE outbox SET processed_at = now() WHERE id = $1`, id)
	return err
}

// Failed records that handling a message failed with cause: it is tried
// again after wait.
func Failed(ctx context.Context, tx DB, id int64, cause string, wait time.Duration) error {
	_, err := tx.Exec(ctx, `UPDATE outbox SET attempts = attempts + 1, last_error = $2,
		retry_at = clock_timestamp() + make_interval(secs => $3) WHERE id = $1`, id, cause, wait.Seconds())
	return err
}

// Dead records the last failed try of a message, which is set aside
// (never tried again) until an operator redrives it.
func Dead(ctx context.Context, tx DB, id int64, cause string) error {
	_, err := tx.Exec(ctx, `UPDATE outbox SET attempts = attempts + 1, last_error = $2, dead_at = now() WHERE id = $1`, id, cause)
	return err
}

// DeadMessages counts the messages set aside.
func DeadMessages(ctx context.Context, db DB) (int, error) {
	var n int
	err := db.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE dead_at IS NOT NULL`).Scan(&n)
	return n, err
}
