package order

import (
	"context"
	"time"

	"github.com/catraca/catraca/shared/event"
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
func (s *Service) RefundEvent(ctx context.Context, e event.Event) (int, error) {
	st, err := s.shards.Primary(e.Shard)
	if err != nil {
		return 0, err
	}
	return st.RequestEventRefunds(ctx, e.ID, CancelReason)
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
func (s *Service) Refunds(ctx context.Context, e event.Event) (RefundProgress, error) {
	st, err := s.shards.Primary(e.Shard)
	if err != nil {
		return RefundProgress{}, err
	}
	c, err := st.EventRefunds(ctx, e.ID, refundSilence)
	if err != nil {
		return RefundProgress{}, err
	}
	return RefundProgress{Total: c.Total, Refunded: c.Refunded, Failed: c.Failed, Remaining: c.Total - c.Refunded - c.Failed}, nil
}
