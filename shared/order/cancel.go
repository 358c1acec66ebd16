package order

import (
	"context"
	"fmt"
	"time"
)

// CancelReason marks the refunds an event's cancellation asks for.
const CancelReason = "event cancelled"

// refundSilence is how long after its request went to the PSP a refund's
// webhook may take before the refund counts as failed.
const refundSilence = 2 * time.Minute

// RefundEvent asks the PSP, through the outbox, to refund every paid order
// of a cancelled event; the refund's webhook then voids the order and its
// tickets (moneyBack). It is idempotent: a payment whose refund is already
// asked for is skipped, so calling it again only picks up orders paid
// since (a payment that was in flight at the cancellation). It returns how
// many refunds it asked for.
func (s *Service) RefundEvent(ctx context.Context, eventID int64) (int, error) {
	pool, err := s.shards.ForEvent(ctx, eventID)
	if err != nil {
		return 0, err
	}
	tag, err := pool.Exec(ctx, `
		INSERT INTO outbox (topic, payload)
		SELECT 'refund.requested', jsonb_build_object('order_id', o.id, 'payment', p.psp_payment_id,
			'amount', p.amount_cents, 'reason', $2::text)
		FROM orders o JOIN payments p ON p.id = o.payment_id
		WHERE o.event_id = $1 AND o.status = 'paid' AND p.psp_payment_id IS NOT NULL
		  AND NOT EXISTS (SELECT 1 FROM outbox x WHERE x.topic = 'refund.requested' AND x.payload->>'payment' = p.psp_payment_id)`,
		eventID, CancelReason)
	if err != nil {
		return 0, fmt.Errorf("refund orders of event %d: %w", eventID, err)
	}
	return int(tag.RowsAffected()), nil
}

// RefundProgress is how far an event's refunds are: Total orders were paid
// (Refunded of them are refunded, Failed were sent to the PSP over two
// minutes ago without its webhook confirming, Remaining are still on their
// way).
type RefundProgress struct {
	Total     int `json:"total"`
	Refunded  int `json:"refunded"`
	Failed    int `json:"failed"`
	Remaining int `json:"remaining"`
}

// Refunds reads an event's refund progress from its orders.
func (s *Service) Refunds(ctx context.Context, eventID int64) (RefundProgress, error) {
	pool, err := s.shards.ForEvent(ctx, eventID)
	if err != nil {
		return RefundProgress{}, err
	}
	var p RefundProgress
	err = pool.QueryRow(ctx, `
		SELECT count(*), count(*) FILTER (WHERE o.status = 'refunded'),
		       count(*) FILTER (WHERE o.status = 'paid' AND EXISTS (SELECT 1 FROM outbox x
		           WHERE x.topic = 'refund.requested' AND x.payload->>'payment' = p.psp_payment_id
		             AND x.processed_at < now() - make_interval(secs => $2)))
		FROM orders o JOIN payments p ON p.id = o.payment_id
		WHERE o.event_id = $1 AND o.status IN ('paid', 'refunded')`, eventID, refundSilence.Seconds()).
		Scan(&p.Total, &p.Refunded, &p.Failed)
	if err != nil {
		return RefundProgress{}, fmt.Errorf("refund progress of event %d: %w", eventID, err)
	}
	p.Remaining = p.Total - p.Refunded - p.Failed
	return p, nil
}
