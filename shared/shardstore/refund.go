package shardstore

import (
	"context"
	"fmt"
	"time"
)

// RequestEventRefunds asks, through the outbox, for the refund of every
// paid order of an event whose payment has none asked yet (so repeating it
// asks for no refund twice). It returns how many it asked for.
func (s *Store) RequestEventRefunds(ctx context.Context, eventID int64, reason string) (int, error) {
	tag, err := s.db.Exec(ctx, `
		INSERT INTO outbox (topic, payload)
		SELECT $3, jsonb_build_object('order_id', o.id, 'payment', p.psp_payment_id, 'amount', p.amount_cents, 'reason', $2::text)
		FROM orders o JOIN payments p ON p.id = o.payment_id
		WHERE o.event_id = $1 AND o.status = $4 AND p.psp_payment_id IS NOT NULL
		  AND NOT EXISTS (SELECT 1 FROM outbox x WHERE x.topic = $3 AND x.payload->>'payment' = p.psp_payment_id)`,
		eventID, reason, TopicRefundRequested, OrderPaid)
	if err != nil {
		return 0, fmt.Errorf("refund orders of event %d: %w", eventID, err)
	}
	return int(tag.RowsAffected()), nil
}

// RefundCounts are an event's paid orders (Total), how many of them are
// refunded, and how many are still paid although their refund went to the
// PSP longer than the silence ago (Failed).
type RefundCounts struct {
	Total, Refunded, Failed int
}

// EventRefunds counts an event's refunds from its orders.
func (r reads) EventRefunds(ctx context.Context, eventID int64, silence time.Duration) (RefundCounts, error) {
	var c RefundCounts
	err := r.q.QueryRow(ctx, `
		SELECT count(*), count(*) FILTER (WHERE o.status = $3),
		       count(*) FILTER (WHERE o.status = $2 AND EXISTS (SELECT 1 FROM outbox x
		           WHERE x.topic = $4 AND x.payload->>'payment' = p.psp_payment_id
		             AND x.processed_at < now() - make_interval(secs => $5)))
		FROM orders o JOIN payments p ON p.id = o.payment_id
		WHERE o.event_id = $1 AND o.status IN ($2, $3)`,
		eventID, OrderPaid, OrderRefunded, TopicRefundRequested, silence.Seconds()).Scan(&c.Total, &c.Refunded, &c.Failed)
	if err != nil {
		return RefundCounts{}, fmt.Errorf("refund progress of event %d: %w", eventID, err)
	}
	return c, nil
}
