package order

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/shared/reject"
	"github.com/catraca/catraca/shared/shardstore"
)

// What an event's organizer sees of its orders (the console): lookups by
// id, ticket or buyer, the whole payment history, refunds and exports.
// Callers check that the order's event is the organizer's.

// Lookup returns an order whoever owns it.
func (s *Service) Lookup(ctx context.Context, id int64) (Order, error) {
	_, o, err := s.open(ctx, id)
	return o, err
}

// open reads an order from the shard its id names, and returns that
// shard's store too.
func (s *Service) open(ctx context.Context, id int64) (*shardstore.Store, Order, error) {
	st, err := s.shards.OfRow(id)
	if err != nil {
		return nil, Order{}, ErrNotFound
	}
	o, err := load(ctx, st, id)
	return st, o, err
}

// OfTicket returns the order of a ticket.
func (s *Service) OfTicket(ctx context.Context, ticketID int64) (Order, error) {
	st, err := s.shards.OfRow(ticketID)
	if err != nil {
		return Order{}, ErrNotFound
	}
	id, found, err := st.TicketOrder(ctx, ticketID)
	if err != nil {
		return Order{}, err
	}
	if !found {
		return Order{}, ErrNotFound
	}
	return load(ctx, st, id)
}

// OfBuyer lists an account's orders among events, newest first, at most
// 50 per shard.
func (s *Service) OfBuyer(ctx context.Context, account int64, events []int64) ([]Order, error) {
	return s.everyShard(ctx, func(st *shardstore.Store) ([]int64, error) { return st.OrdersOfBuyer(ctx, account, events, 50) })
}

// Detail is an order with every payment attempt and refund.
type Detail struct {
	Order
	BuyerID  int64                      `json:"buyer_id"`
	Payments []shardstore.PaymentRecord `json:"payments"`
	Refunds  []shardstore.RefundRecord  `json:"refunds"`
}

// Detail returns an order's whole history.
func (s *Service) Detail(ctx context.Context, id int64) (Detail, error) {
	st, o, err := s.open(ctx, id)
	if err != nil {
		return Detail{}, err
	}
	d := Detail{Order: o, BuyerID: o.UserID}
	if d.Payments, err = st.Payments(ctx, id); err != nil {
		return Detail{}, err
	}
	d.Refunds, err = st.Refunds(ctx, id)
	return d, err
}

// ErrNotRefundable means the order was never paid (pending, expired,
// cancelled): there is no money to give back.
var ErrNotRefundable = errors.New("order is not refundable")

// ErrRefundRefused means the PSP refused the refund; its reason is kept on
// the order (Detail.Refunds).
var ErrRefundRefused = errors.New("the payment provider refused the refund")

// Refund gives a paid order's money back at the PSP and voids its tickets;
// it also asks again for an order whose refund is pending (a charge given
// back whose refund failed). The order's refund lock is held from the
// check of its status to the record of the refund, so concurrent refunds
// of one order (a double click, two organizers, retries) take turns: the
// first asks the PSP and records one refund, the others find the order
// refunded and answer it as it is. What the PSP said is recorded either
// way: a refusal or no answer leaves the order as it was, among the
// organizer's refund failures.
func (s *Service) Refund(ctx context.Context, id, by int64) (Order, error) {
	st, err := s.shards.OfRow(id)
	if err != nil {
		return Order{}, ErrNotFound
	}
	var failed error
	err = st.WithTx(ctx, func(tx shardstore.Tx) error {
		status, found, err := tx.LockRefunds(ctx, id)
		switch {
		case err != nil:
			return err
		case !found:
			return ErrNotFound
		case status == shardstore.OrderRefunded:
			return nil
		case status != shardstore.OrderPaid && status != shardstore.OrderRefundPending:
			return reject.New(ErrNotRefundable, "", fmt.Sprintf("Only paid orders can be refunded: it is %s.", status))
		}
		failed, err = s.refundPaid(ctx, tx, id, by)
		return err
	})
	if err == nil {
		err = failed
	}
	if err != nil {
		return Order{}, fmt.Errorf("refund order %d: %w", id, err)
	}
	return load(ctx, st, id)
}

// refundPaid asks the PSP for the refund of an order whose refund lock tx
// holds and records what it said: refunded when it says succeeded,
// refund_pending when it accepted (its webhook finishes), a refusal
// (ErrRefundRefused) or no answer (the PSP's error) returned as failed,
// committed all the same.
func (s *Service) refundPaid(ctx context.Context, tx shardstore.Tx, id, by int64) (failed error, err error) {
	paymentID, pspID, found, err := tx.PaidBy(ctx, id)
	if err != nil || !found {
		return nil, fmt.Errorf("its payment is unknown (%v)", err)
	}
	o, err := load(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	a := shardstore.RefundAttempt{OrderID: id, Payment: pspID, By: by}
	if a.Attempt, err = tx.NextRefundAttempt(ctx, id); err != nil {
		return nil, err
	}
	refund, err := s.refundAtPSP(ctx, pspID, "", o.TotalCents, refundKey(pspID, a.Attempt))
	if errors.Is(err, psp.ErrRejected) {
		// Refunded already at the PSP (its dashboard, a dispute, an earlier
		// try whose answer was lost) is a refund; anything else is refused.
		if back, _ := s.givenBack(ctx, pspID); back {
			err, refund.Status = nil, psp.StatusSucceeded
		}
	}
	switch {
	case errors.Is(err, psp.ErrRejected):
		a.Status, a.Failure, failed = shardstore.RefundRefused, err.Error(), fmt.Errorf("%w: %v", ErrRefundRefused, err)
		s.refundSetAside(ctx, a)
	case err != nil:
		a.Status, a.Failure, failed = shardstore.RefundUnanswered, err.Error(), err
	case refund.Status == psp.StatusSucceeded:
		a.Status, a.PSPRefundID = shardstore.RefundSucceeded, refund.ID
	default:
		a.Status, a.PSPRefundID = shardstore.RefundPending, refund.ID
	}
	if err := tx.RecordRefund(ctx, a); err != nil || failed != nil {
		return failed, err
	}
	if a.Status == shardstore.RefundPending {
		return nil, tx.PendRefund(ctx, id, paymentID)
	}
	if err := tx.SetPayment(ctx, paymentID, shardstore.PaymentRefunded, "", pspID); err != nil {
		return nil, err
	}
	_, err = tx.RefundPaid(ctx, id, paymentID)
	return nil, err
}

// RefundFailures lists the latest MaxFailures orders of events whose
// refund the PSP refused or never answered, their money still owed,
// newest first.
func (s *Service) RefundFailures(ctx context.Context, events []int64) ([]shardstore.RefundFailure, error) {
	var out []shardstore.RefundFailure
	for _, id := range s.shards.IDs() {
		st, err := s.shards.Primary(id)
		if err != nil {
			return nil, err
		}
		found, err := st.RefundFailures(ctx, events, MaxFailures)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	slices.SortFunc(out, func(a, b shardstore.RefundFailure) int { return b.FailedAt.Compare(a.FailedAt) })
	return out[:min(len(out), MaxFailures)], nil
}

// ExportPage reads up to limit of an event's orders with ids above after,
// in id order, from its shard's reader (with tickets, each carries its
// tickets), and whether more follow. Keyset paging on the order id: a page
// request repeats after a failure with the same result, and orders written
// meanwhile never shift the pages already read.
func (s *Service) ExportPage(ctx context.Context, eventID int64, shardID int, after int64, limit int, tickets bool) ([]shardstore.ExportOrder, bool, error) {
	st, err := s.shards.Reader(shardID)
	if err != nil {
		return nil, false, err
	}
	page, err := st.OrdersAfter(ctx, eventID, after, limit+1)
	if err != nil {
		return nil, false, err
	}
	more := len(page) > limit
	page = page[:min(len(page), limit)]
	if tickets && len(page) > 0 {
		if err := st.Attendees(ctx, page); err != nil {
			return nil, false, err
		}
	}
	return page, more, nil
}

// ExportTotal counts an event's orders, for an export's progress.
func (s *Service) ExportTotal(ctx context.Context, eventID int64, shardID int) (int, error) {
	st, err := s.shards.Reader(shardID)
	if err != nil {
		return 0, err
	}
	return st.CountOrders(ctx, eventID)
}
