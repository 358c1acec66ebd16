package shardstore

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Topic names what an outbox message asks for.
type Topic string

// Outbox topics.
const (
	TopicOrderPaid       Topic = "order.paid"       // mail the tickets
	TopicRefundRequested Topic = "refund.requested" // give a refused charge back at the PSP
	TopicPaymentCancel   Topic = "payment.cancel"   // cancel an ended hold's payment at the PSP
	// In the catalog's outbox (catalog migration 00011), which this
	// file's statements serve too: an event.StatusCopy for the event's shard.
	TopicEventStatus Topic = "event.status"
)

// Message is one outbox message.
type Message struct {
	ID       int64
	Topic    Topic
	Payload  []byte
	Attempts int // failed tries so far
}

// Enqueue writes an outbox message, committed with the transaction.
func (t Tx) Enqueue(ctx context.Context, topic Topic, payload any) error {
	_, err := Enqueue(ctx, t.tx, topic, payload)
	return err
}

// Enqueue writes a message into the outbox of tx's database (the
// catalog's: OpenOutbox), committed with tx, and returns its id.
func Enqueue(ctx context.Context, tx pgx.Tx, topic Topic, payload any) (int64, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return 0, err
	}
	var id int64
	err = tx.QueryRow(ctx, `INSERT INTO outbox (topic, payload) VALUES ($1, $2) RETURNING id`, topic, b).Scan(&id)
	return id, err
}

// OpenOutbox returns the store of the catalog's outbox, for its
// statements only (Enqueue, Unprocessed, Processed, Failed, Dead,
// DeadMessages): the same table and worker as a shard's.
func OpenOutbox(catalog *pgxpool.Pool) *Store { return New(catalog) }

// Unprocessed locks up to limit unprocessed messages due now, oldest
// first, skipping those another worker holds.
func (t Tx) Unprocessed(ctx context.Context, limit int) ([]Message, error) {
	rows, err := t.tx.Query(ctx, `SELECT id, topic, payload, attempts FROM outbox WHERE processed_at IS NULL AND dead_at IS NULL
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
func (t Tx) Processed(ctx context.Context, id int64) error {
	_, err := t.tx.Exec(ctx, `UPDATE outbox SET processed_at = now() WHERE id = $1`, id)
	return err
}

// Failed records that handling a message failed with cause: it is tried
// again after wait.
func (t Tx) Failed(ctx context.Context, id int64, cause string, wait time.Duration) error {
	_, err := t.tx.Exec(ctx, `UPDATE outbox SET attempts = attempts + 1, last_error = $2,
		retry_at = clock_timestamp() + make_interval(secs => $3) WHERE id = $1`, id, cause, wait.Seconds())
	return err
}

// Dead records the last failed try of a message, which is set aside
// (never tried again) until an operator redrives it.
func (t Tx) Dead(ctx context.Context, id int64, cause string) error {
	_, err := t.tx.Exec(ctx, `UPDATE outbox SET attempts = attempts + 1, last_error = $2, dead_at = now() WHERE id = $1`, id, cause)
	return err
}

// DeadMessages counts the messages set aside.
func (s *Store) DeadMessages(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE dead_at IS NOT NULL`).Scan(&n)
	return n, err
}

// Try runs fn in a savepoint of t: fn's error undoes only fn's writes, and
// the transaction goes on.
func (t Tx) Try(ctx context.Context, fn func(sp Tx) error) error {
	_, err := t.savepoint(ctx, func(sp Tx) (bool, error) { return true, fn(sp) })
	return err
}
