package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/shardstore"
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

// cancellationWindow is how far back Reconcile looks for cancellations
// that never reached their shard: days of its runs, every few minutes.
const cancellationWindow = 7 * 24 * time.Hour

// finishCancellations asks the refunds of every event cancelled in the
// catalog whose shard never asked them: the organizer's call commits the
// cancellation in the catalog, then asks on the shard, and a crash in
// between would leave the paid orders paid. Cancellations that did reach
// their shard are left alone (their failed refunds wait for the
// organizer's retry). It returns how many refunds it asked for.
func (s *Service) finishCancellations(ctx context.Context) (int, error) {
	if s.cancelled == nil {
		return 0, nil
	}
	events, err := s.cancelled(ctx, s.now().Add(-cancellationWindow))
	if err != nil {
		return 0, fmt.Errorf("cancelled events: %w", err)
	}
	var asked int
	var errs []error
	for _, e := range events {
		n, err := s.finishCancellation(ctx, e)
		asked += n
		errs = append(errs, err)
	}
	return asked, errors.Join(errs...)
}

func (s *Service) finishCancellation(ctx context.Context, e event.Event) (int, error) {
	st, err := s.shards.Primary(e.Shard)
	if err != nil {
		return 0, err
	}
	if done, err := st.CancellationAsked(ctx, e.ID); err != nil || done {
		return 0, err
	}
	s.log.Warn("cancellation never reached its shard: asking its refunds", "event", e.ID, "shard", e.Shard)
	return st.RequestEventRefunds(ctx, e.ID, CancelReason)
}

// RefundProgress is how far an event's refunds are: Total orders were paid
// (Refunded of them are refunded; Failed refunds were refused by the PSP or
// never answered after the worker's tries, and wait for a retry; Remaining
// are on their way, the worker retrying while the PSP does not answer).
// Failures lists the first MaxFailures failed ones.
type RefundProgress struct {
	Total     int            `json:"total"`
	Refunded  int            `json:"refunded"`
	Failed    int            `json:"failed"`
	Remaining int            `json:"remaining"`
	Failures  []FailedRefund `json:"failures,omitempty"`
}

// MaxFailures bounds the failed refunds a progress lists: the console
// polls it every second while refunds are on their way.
const MaxFailures = 100

// Refunds reads an event's refund progress: one row its refunds keep
// (before a cancellation, a count of its paid orders), and the failed
// refunds when there are any.
func (s *Service) Refunds(ctx context.Context, e event.Event) (RefundProgress, error) {
	st, err := s.shards.Primary(e.Shard)
	if err != nil {
		return RefundProgress{}, err
	}
	c, err := st.EventRefunds(ctx, e.ID)
	if err != nil {
		return RefundProgress{}, err
	}
	p := RefundProgress{Total: c.Total, Refunded: c.Refunded, Failed: c.Failed, Remaining: c.Total - c.Refunded - c.Failed}
	if c.Failed > 0 {
		failed, err := st.FailedRefunds(ctx, e.ID, MaxFailures)
		if err != nil {
			return RefundProgress{}, err
		}
		p.Failures = shardstore.Rows(failed, failedRefund)
	}
	return p, nil
}
