package catalogstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/outbox"
)

// TopicEventStatus is the catalog outbox's message that copies an event's
// status and sale end to its shard (event.StatusCopy).
const TopicEventStatus outbox.Topic = "event.status"

// EnqueueStatusCopy writes a status copy into the catalog's outbox,
// committed with tx (the transaction that changed the event), and returns
// the message's id.
func EnqueueStatusCopy(ctx context.Context, tx pgx.Tx, copy any) (int64, error) {
	return outbox.Enqueue(ctx, tx, TopicEventStatus, copy)
}

// Outbox is the catalog's outbox, for its worker.
type Outbox struct{ db *pgxpool.Pool }

// OpenOutbox returns the outbox of the catalog's pool.
func OpenOutbox(db *pgxpool.Pool) *Outbox { return &Outbox{db} }

// OutboxTx is a transaction on the catalog's outbox, handed out by WithTx.
type OutboxTx struct{ tx pgx.Tx }

// WithTx runs fn in one transaction, committed when fn returns nil.
func (o *Outbox) WithTx(ctx context.Context, fn func(OutboxTx) error) error {
	return pgx.BeginFunc(ctx, o.db, func(tx pgx.Tx) error { return fn(OutboxTx{tx}) })
}

// DeadMessages counts the messages set aside.
func (o *Outbox) DeadMessages(ctx context.Context) (int, error) {
	return outbox.DeadMessages(ctx, o.db)
}

// Unprocessed locks up to limit messages due now (outbox.Unprocessed).
func (t OutboxTx) Unprocessed(ctx context.Context, limit int) ([]outbox.Message, error) {
	return outbox.Unprocessed(ctx, t.tx, limit)
}

// Processed marks a message done.
func (t OutboxTx) Processed(ctx context.Context, id int64) error {
	return outbox.Processed(ctx, t.tx, id)
}

// Failed records a failed try: tried again after wait.
func (t OutboxTx) Failed(ctx context.Context, id int64, cause string, wait time.Duration) error {
	return outbox.Failed(ctx, t.tx, id, cause, wait)
}

// Dead records the last failed try, set aside for an operator.
func (t OutboxTx) Dead(ctx context.Context, id int64, cause string) error {
	return outbox.Dead(ctx, t.tx, id, cause)
}

// DB is the transaction, for a message's handler to read and write the
// catalog in it: its writes commit with the message's processing.
func (t OutboxTx) DB() DB { return t.tx }

// Try runs fn in a savepoint of t: fn's error undoes only fn's writes.
func (t OutboxTx) Try(ctx context.Context, fn func(sp OutboxTx) error) error {
	return pgx.BeginFunc(ctx, t.tx, func(sp pgx.Tx) error { return fn(OutboxTx{sp}) })
}
