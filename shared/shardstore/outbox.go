package shardstore

import (
	"context"
	"time"

	"github.com/catraca/catraca/shared/outbox"
)

// Topic names what an outbox message asks for.
type Topic = outbox.Topic

// A shard's outbox topics.
const (
	TopicOrderPaid       Topic = "order.paid"       // mail the tickets
	TopicRefundRequested Topic = "refund.requested" // give a refused charge back at the PSP
	TopicPaymentCancel   Topic = "payment.cancel"   // cancel an ended hold's payment at the PSP
)

// Message is one outbox message.
type Message = outbox.Message

// Enqueue writes an outbox message, committed with the transaction.
func (t Tx) Enqueue(ctx context.Context, topic Topic, payload any) error {
	_, err := outbox.Enqueue(ctx, t.tx, topic, payload)
	return err
}

// Unprocessed locks up to limit unprocessed messages due now, oldest
// first, skipping those another worker holds.
func (t Tx) Unprocessed(ctx context.Context, limit int) ([]Message, error) {
	return outbox.Unprocessed(ctx, t.tx, limit)
}

// Processed marks a message done.
func (t Tx) Processed(ctx context.Context, id int64) error { return outbox.Processed(ctx, t.tx, id) }

// Failed records that handling a message failed with cause: it is tried
// again after wait.
func (t Tx) Failed(ctx context.Context, id int64, cause string, wait time.Duration) error {
	return outbox.Failed(ctx, t.tx, id, cause, wait)
}

// Dead records the last failed try of a message, set aside for an operator.
func (t Tx) Dead(ctx context.Context, id int64, cause string) error {
	return outbox.Dead(ctx, t.tx, id, cause)
}

// DeadMessages counts the messages set aside.
func (s *Store) DeadMessages(ctx context.Context) (int, error) { return outbox.DeadMessages(ctx, s.db) }

// Try runs fn in a savepoint of t: fn's error undoes only fn's writes, and
// the transaction goes on.
func (t Tx) Try(ctx context.Context, fn func(sp Tx) error) error {
	_, err := t.savepoint(ctx, func(sp Tx) (bool, error) { return true, fn(sp) })
	return err
}
