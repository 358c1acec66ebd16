package order

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

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
	BuyerID  int64           `json:"buyer_id"`
	Payments []PaymentRecord `json:"payments"`
	Refunds  []RefundRecord  `json:"refunds"`
}

// Detail returns an order's whole history.
func (s *Service) Detail(ctx context.Context, id int64) (Detail, error) {
	st, o, err := s.open(ctx, id)
	if err != nil {
		return Detail{}, err
	}
	d := Detail{Order: o, BuyerID: o.UserID}
	payments, err := st.Payments(ctx, id)
	if err != nil {
		return Detail{}, err
	}
	refunds, err := st.Refunds(ctx, id)
	d.Payments, d.Refunds = shardstore.Rows(payments, paymentRecord), shardstore.Rows(refunds, refundRecord)
	return d, err
}

// ErrNotRefundable means the order was never paid (pending, expired,
// cancelled): there is no money to give back.
var ErrNotRefundable = errors.New("order is not refundable")

// ErrRefundRefused means the PSP refused the refund; its reason is kept on
// the order (Detail.Refunds).
var ErrRefundRefused = errors.New("the payment provider refused the refund")

// Refund gives a paid order's money back at the PSP and voids its tickets,
// as RefundTickets does for every ticket still valid.
func (s *Service) Refund(ctx context.Context, id, by int64) (Order, error) {
	return s.RefundTickets(ctx, id, RefundAsk{By: by})
}

// RefundTickets gives back at the PSP the price of some tickets of a paid
// order (every ticket still valid when ask names none: the whole order)
// and voids them; it also asks again for an order whose refund is pending
// (a charge given back whose refund failed). The PSP is called outside
// any transaction: the attempt is recorded first (asking, under the
// order's refund lock, where its tickets are claimed), then asked, then
// its outcome recorded — refunded when the PSP says succeeded,
// refund_pending when it accepted (its webhook finishes), a refusal
// (ErrRefundRefused) or no answer (the PSP's error) returned as failed
// and kept on the order among the organizer's refund failures. A partial
// refund leaves the order paid, its refunded tickets void; the one that
// gives back the last valid tickets refunds the order. Refunds of one
// order take turns: while one is asking the PSP, another is
// ErrRefundInFlight (in any process: the asking attempt is committed
// under the refund lock before the call), so what the refunds record
// never adds up to more than the PSP gave back. Identical asks at once in
// a process (a double click) share one run and its answer, unless asked
// Once. An empty PSP quota is
// ErrPSPBusy, before anything is recorded.
func (s *Service) RefundTickets(ctx context.Context, id int64, ask RefundAsk) (Order, error) {
	st, err := s.shards.OfRow(id)
	if err != nil {
		return Order{}, ErrNotFound
	}
	if err := ask.check(); err != nil {
		return Order{}, err
	}
	run := func() (any, error) {
		// The outcome is recorded even if the caller has gone (the money
		// moved at the PSP or not), bounded all the same.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refundRunTimeout)
		defer cancel()
		return nil, s.refundOrder(ctx, st, id, ask)
	}
	if ask.Once {
		_, err = run()
	} else {
		_, err, _ = s.refunding.Do(ask.runKey(id), run)
	}
	if err != nil {
		return Order{}, fmt.Errorf("refund order %d: %w", id, err)
	}
	return load(ctx, st, id)
}

// refundRunTimeout bounds one console refund: two PSP calls (each with its
// own timeout), a wait for a quota token, and three short transactions.
const refundRunTimeout = 30 * time.Second

// notRefundable is the refusal of an order never paid.
func notRefundable(status shardstore.OrderStatus) error {
	return reject.New(ErrNotRefundable, "", fmt.Sprintf("Only paid orders can be refunded: it is %s.", status))
}

// refundOrder records, asks and settles one refund attempt of an order.
func (s *Service) refundOrder(ctx context.Context, st *shardstore.Store, id int64, ask RefundAsk) error {
	switch o, err := load(ctx, st, id); {
	case err != nil:
		return err
	case o.Status == shardstore.OrderRefunded:
		return ask.alreadyDone(o)
	case o.Status != shardstore.OrderPaid && o.Status != shardstore.OrderRefundPending:
		return notRefundable(o.Status)
	}
	// The token of the first call is taken before anything is recorded:
	// an empty quota asks nothing and says when to come back.
	if err := s.spendNow(ctx); err != nil {
		return err
	}
	var a shardstore.RefundAttempt
	var paymentID, askID int64
	done := false
	err := st.WithTx(ctx, func(tx shardstore.Tx) error {
		status, found, err := tx.LockRefunds(ctx, id)
		switch {
		case err != nil:
			return err
		case !found:
			return ErrNotFound
		case status == shardstore.OrderRefunded:
			done = true
			o, err := load(ctx, tx, id)
			if err != nil {
				return err
			}
			return ask.alreadyDone(o)
		case status != shardstore.OrderPaid && status != shardstore.OrderRefundPending:
			return notRefundable(status)
		}
		var pspID string
		if paymentID, pspID, found, err = tx.PaidBy(ctx, id); err != nil || !found {
			return fmt.Errorf("its payment is unknown (%v)", err)
		}
		o, err := load(ctx, tx, id)
		if err != nil {
			return err
		}
		a = shardstore.RefundAttempt{OrderID: id, Payment: pspID, By: ask.By, Reason: ask.Reason, Note: ask.Note}
		if a.Tickets, a.Amount, err = s.plan(ctx, tx, o, ask.Tickets); err != nil {
			return err
		}
		if a.Attempt, err = tx.NextRefundAttempt(ctx, id, pspID, a.Tickets); err != nil {
			return err
		}
		askID, err = tx.AskRefund(ctx, a)
		return err
	})
	if err != nil || done {
		return err // a whole refund asked again answers the refunded order
	}
	refund, err := s.refundAtPSP(ctx, a.Payment, "", a.Amount, attemptKey(a), true)
	failed := s.judgeRefund(ctx, &a, refund, err)
	// The outcome is recorded even if the caller has gone: the money
	// moved (or not) at the PSP either way.
	err = s.settleRefund(context.WithoutCancel(ctx), st, askID, paymentID, a)
	return cmp.Or(err, failed)
}

// judgeRefund reads what the PSP said to a refund attempt into a, and
// returns the attempt's failure, if it failed: a refusal is
// ErrRefundRefused, set aside (logged, counted); no answer is the PSP's
// error. Only a whole refund's refusal reads succeeded when the whole
// charge is back already (the dashboard, a dispute): the order's money is
// back, whoever gave it. A partial refund's refusal is never a success:
// a charge given back by another refund says nothing of these tickets.
func (s *Service) judgeRefund(ctx context.Context, a *shardstore.RefundAttempt, refund psp.Refund, err error) error {
	if errors.Is(err, psp.ErrRejected) && a.Tickets == nil {
		if back, _ := s.givenBack(ctx, a.Payment); back {
			err, refund.Status = nil, psp.StatusSucceeded
		}
	}
	switch {
	case errors.Is(err, psp.ErrRejected):
		a.Status, a.Failure = shardstore.RefundRefused, err.Error()
		s.refundSetAside(ctx, *a)
		return fmt.Errorf("%w: %v", ErrRefundRefused, err)
	case err != nil:
		a.Status, a.Failure = shardstore.RefundUnanswered, err.Error()
		return err
	case refund.Status == psp.StatusSucceeded:
		a.Status, a.PSPRefundID = shardstore.RefundSucceeded, refund.ID
	default:
		a.Status, a.PSPRefundID = shardstore.RefundPending, refund.ID
	}
	return nil
}

// settleRefund records an asked refund attempt's outcome and what it does
// to the order: refund_pending while pending, refunded once succeeded. A
// failed write is tried again a few times: the PSP has answered, and a
// lost succeeded or pending answer would leave the attempt asking (listed
// after AskingStale; the charge's webhook finishes the order anyway).
func (s *Service) settleRefund(ctx context.Context, st *shardstore.Store, askID, paymentID int64, a shardstore.RefundAttempt) error {
	var err error
	for try := range 3 {
		if try > 0 {
			time.Sleep(time.Duration(try) * 200 * time.Millisecond)
		}
		err = st.WithTx(ctx, func(tx shardstore.Tx) error {
			// Under the order's refund lock, as refunds are planned: a
			// plan reads the order's refunded amount and its tickets in
			// separate statements, and an outcome committed between them
			// would read as neither refunded nor asking (and ask too much).
			// No other path takes this lock while holding a row lock.
			if _, _, err := tx.LockRefunds(ctx, a.OrderID); err != nil {
				return err
			}
			if a.Tickets != nil {
				return settlePartial(ctx, tx, askID, paymentID, a)
			}
			// Rows are locked in the order the charge's refund webhook
			// locks them (payment, refund attempts, order), so the two
			// cannot deadlock.
			if a.Status == shardstore.RefundSucceeded {
				if err := tx.SetPayment(ctx, paymentID, shardstore.PaymentRefunded, "", a.Payment, ""); err != nil {
					return err
				}
			}
			if err := tx.SettleRefund(ctx, askID, a); err != nil {
				return err
			}
			switch a.Status {
			case shardstore.RefundPending:
				return tx.PendRefund(ctx, a.OrderID, paymentID)
			case shardstore.RefundSucceeded:
				_, err := tx.RefundPaid(ctx, a.OrderID, paymentID)
				return err
			}
			return nil
		})
		if err == nil {
			return nil
		}
	}
	s.log.Error("refund outcome not recorded", "order", a.OrderID, "payment", a.Payment, "status", a.Status, "refund", a.PSPRefundID, "err", err)
	return err
}

// RefundFailures lists the latest MaxFailures orders of events whose
// refund the PSP refused or never answered, their money still owed,
// newest first.
func (s *Service) RefundFailures(ctx context.Context, events []int64) ([]RefundFailure, error) {
	var out []RefundFailure
	for _, id := range s.shards.IDs() {
		st, err := s.shards.Primary(id)
		if err != nil {
			return nil, err
		}
		found, err := st.RefundFailures(ctx, events, MaxFailures)
		if err != nil {
			return nil, err
		}
		out = append(out, shardstore.Rows(found, refundFailure)...)
	}
	slices.SortFunc(out, func(a, b RefundFailure) int { return b.FailedAt.Compare(a.FailedAt) })
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
