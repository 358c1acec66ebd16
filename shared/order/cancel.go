package order

import (
	"context"

	"github.com/catraca/catraca/shared/event"
)

// CancelReason marks the refunds an event's cancellation asks for.
const CancelReason = "event cancelled"

// RefundEvent asks the PSP, through the outbox, to refund every paid order
// of a cancelled event; the refund's webhook then voids the order and its
// tickets (moneyBack). It is idempotent: an order whose refund is asked
// already is skipped, and one whose refund failed is asked again (the
// console's retry). A payment in flight at the cancellation either sold
// before it (and is refunded here) or is given back (charge.pay). It
// returns how many refunds it asked for.
func (s *Service) RefundEvent(ctx context.Context, e event.Event) (int, error) {
	st, err := s.shards.Primary(e.Shard)
	if err != nil {
		return 0, err
	}
	return st.RequestEventRefunds(ctx, e.ID, CancelReason)
}

// RefundProgress is how far an event's refunds are: Total orders were paid
// (Refunded of them are refunded; Failed refunds were refused by the PSP or
// never answered after the worker's tries, and wait for a retry; Remaining
// are on their way, the worker retrying while the PSP does not answer).
type RefundProgress struct {
	Total     int `json:"total"`
	Refunded  int `json:"refunded"`
	Failed    int `json:"failed"`
	Remaining int `json:"remaining"`
}

// Refunds reads an event's refund progress: one row its refunds keep
// (before a cancellation, a count of its paid orders).
func (s *Service) Refunds(ctx context.Context, e event.Event) (RefundProgress, error) {
	st, err := s.shards.Primary(e.Shard)
	if err != nil {
		return RefundProgress{}, err
	}
	c, err := st.EventRefunds(ctx, e.ID)
	if err != nil {
		return RefundProgress{}, err
	}
	return RefundProgress{Total: c.Total, Refunded: c.Refunded, Failed: c.Failed, Remaining: c.Total - c.Refunded - c.Failed}, nil
}
