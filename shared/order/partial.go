package order

// Partial refunds: an organizer gives back some tickets of a paid order,
// with a reason. The whole-order refund is the same run (refundOrder):
// what differs is which tickets, how much, the idempotency key and what
// the outcome does to the order (settlePartial).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/catraca/catraca/shared/reject"
	"github.com/catraca/catraca/shared/shardstore"
)

// ErrAlreadyRefunded means a ticket asked back was refunded already (or
// its refund is pending): asking again would give its money back twice.
var ErrAlreadyRefunded = errors.New("ticket already refunded")

// ErrRefundInFlight means a ticket asked back is being refunded right now,
// or its refund was asked and never answered: that refund is asked again
// with the same tickets (under its own idempotency key), never another.
var ErrRefundInFlight = errors.New("ticket refund in flight")

// ErrBadRefund is a refund asked wrongly: no reason, an unknown reason, a
// ticket not of the order.
var ErrBadRefund = errors.New("invalid refund")

// RefundAsk is what an organizer asks back: Tickets of the order (none:
// every ticket still valid, the whole order), why (Reason, one of
// shardstore.RefundReasons, and the organizer's Note), and who (By).
type RefundAsk struct {
	Tickets []int64
	Reason  string
	Note    string
	By      int64
	// Once asks the whole order back once (the linked-accounts void,
	// which audits it): never shared with a concurrent ask, and an order
	// refunded already is ErrAlreadyRefunded rather than its answer.
	Once bool
}

// MaxNote is the longest note a refund keeps, in characters.
const MaxNote = 500

// check normalises the tickets (sorted, once each) and refuses a reason
// not in the list or a note too long. An empty reason is allowed for
// callers that keep none (a whole refund through the older API).
func (a *RefundAsk) check() error {
	if a.Tickets != nil {
		slices.Sort(a.Tickets)
		a.Tickets = slices.Compact(a.Tickets)
	}
	if a.Reason != "" && !slices.Contains(shardstore.RefundReasons, a.Reason) {
		return reject.New(ErrBadRefund, "/reason", fmt.Sprintf("The reason must be one of %s.", strings.Join(shardstore.RefundReasons, ", ")))
	}
	if len([]rune(a.Note)) > MaxNote {
		return reject.New(ErrBadRefund, "/note", fmt.Sprintf("The note is at most %d characters.", MaxNote))
	}
	return nil
}

// alreadyDone answers a refund asked of order o, refunded already: none
// for the whole order (it is done; but asked Once, a conflict), a ticket not of the order as on a paid
// order, a conflict for its tickets.
func (a RefundAsk) alreadyDone(o Order) error {
	if a.Tickets == nil && a.Once {
		return reject.New(ErrAlreadyRefunded, "", "This order was refunded already; nothing was asked.")
	}
	if a.Tickets == nil {
		return nil
	}
	if err := notOfOrder(o.ID, a.Tickets, func(id int64) bool {
		return slices.ContainsFunc(o.Tickets, func(t Ticket) bool { return t.ID == id })
	}); err != nil {
		return err
	}
	return alreadyRefunded(a.Tickets)
}

// runKey names a refund run shared by concurrent identical asks in a
// process: the order, and the tickets of a partial refund.
func (a RefundAsk) runKey(orderID int64) string {
	return strconv.FormatInt(orderID, 10) + ":" + joinIDs(a.Tickets, ",")
}

// notOfOrder refuses the tickets asked back that are not of order id.
func notOfOrder(id int64, asked []int64, of func(int64) bool) error {
	var unknown []int64
	for _, t := range asked {
		if !of(t) {
			unknown = append(unknown, t)
		}
	}
	if unknown == nil {
		return nil
	}
	return reject.New(ErrBadRefund, "/tickets", fmt.Sprintf("Ticket %s is not a ticket of order %d.", ticketList(unknown), id))
}

func alreadyRefunded(ids []int64) error {
	return reject.New(ErrAlreadyRefunded, "/tickets", fmt.Sprintf("Ticket %s was refunded already; nothing was asked.", ticketList(ids)))
}

// plan picks what a refund gives back of order o: asked names tickets
// (sorted, once each), or nil for every ticket still valid. It returns
// the tickets the refund gives back and the amount. The tickets are nil
// only for the whole refund of an order no ticket of which was refunded
// (the same key and outcome as a cancellation's refund); the refund that
// gives back an order's last valid tickets, picked or not, lists them and
// asks for what is left of the charge, and leaves the order refunded.
// One refund of an order at a time: while another is asking the PSP (or
// was never answered, and is not this one asked again) it is
// ErrRefundInFlight. Called under the order's refund lock.
func (s *Service) plan(ctx context.Context, tx shardstore.Tx, o Order, asked []int64) ([]int64, int64, error) {
	rest := o.TotalCents - o.RefundedCents - o.RefundingCents
	if o.Status == shardstore.OrderRefundPending {
		// Every ticket is void already; only the whole refund is asked again.
		if asked != nil {
			if err := notOfOrder(o.ID, asked, func(id int64) bool {
				return slices.ContainsFunc(o.Tickets, func(t Ticket) bool { return t.ID == id })
			}); err != nil {
				return nil, 0, err
			}
			return nil, 0, alreadyRefunded(asked)
		}
		return nil, rest, s.notInFlight(ctx, tx, o, nil)
	}
	tickets, err := tx.RefundTickets(ctx, o.ID)
	if err != nil {
		return nil, 0, err
	}
	byID := make(map[int64]shardstore.OrderTicket, len(tickets))
	var valid []int64
	for _, t := range tickets {
		byID[t.ID] = t
		if !t.Void && t.Claim == "" {
			valid = append(valid, t.ID)
		}
	}
	if err := notOfOrder(o.ID, asked, func(id int64) bool { _, ok := byID[id]; return ok }); err != nil {
		return nil, 0, err
	}
	if asked == nil {
		switch {
		case len(valid) == 0:
			if err := s.notInFlight(ctx, tx, o, nil); err != nil {
				return nil, 0, err
			}
			return nil, 0, reject.New(ErrAlreadyRefunded, "", "Every ticket of this order was refunded already; nothing was asked.")
		case len(valid) == len(tickets):
			return nil, rest, s.notInFlight(ctx, tx, o, nil)
		}
		// The rest of an order partly refunded: its tickets, listed.
		return valid, rest, s.notInFlight(ctx, tx, o, valid)
	}
	var amount int64
	var done []int64
	for _, id := range asked {
		t := byID[id]
		// A ticket claimed by a refund asking or unanswered is in flight
		// (notInFlight), not done.
		if t.Void || t.Claim == shardstore.RefundSucceeded || t.Claim == shardstore.RefundPending {
			done = append(done, id)
		}
		amount += t.PriceCents
	}
	if err := s.notInFlight(ctx, tx, o, asked); err != nil {
		return nil, 0, err
	}
	if len(done) > 0 {
		return nil, 0, alreadyRefunded(done)
	}
	if slices.Equal(asked, valid) {
		amount = rest // the last tickets: what is left of the charge
	}
	return asked, amount, nil
}

// notInFlight refuses a refund of an order while another of its refunds
// is asking the PSP, or was never answered and is not this one (the same
// tickets, or both whole) asked again: the unanswered one is asked again
// under its own idempotency key first, so the PSP cannot give back more
// than the refunds record. A refund asking for longer than any call
// (shardstore.AskingStale: its process died) counts as unanswered. The
// order's status is read again with it: the PSP's webhook may have
// refunded the order since the refund lock was taken (it does not take
// it), settling the refund that was asking.
func (s *Service) notInFlight(ctx context.Context, tx shardstore.Tx, o Order, tickets []int64) error {
	f, err := tx.InFlightRefund(ctx, o.ID)
	switch {
	case err != nil:
		return err
	case f.Order != o.Status:
		return reject.New(ErrRefundInFlight, "", fmt.Sprintf("This order was %s meanwhile, by another refund: reload it.", f.Order))
	case !f.Found:
		return nil
	case f.Status == shardstore.RefundAsking && !f.Stale:
		return reject.New(ErrRefundInFlight, "", "Another refund of this order is under way: reload the order to see its outcome.")
	case slices.Equal(f.Tickets, tickets) && (f.Tickets == nil) == (tickets == nil):
		return nil
	case f.Tickets == nil:
		return reject.New(ErrRefundInFlight, "", "A refund of this whole order was never answered: ask it again (without tickets) first.")
	}
	return reject.New(ErrRefundInFlight, "/tickets", fmt.Sprintf("A refund of ticket %s was never answered: ask that refund again with the same tickets first.", ticketList(f.Tickets)))
}

// attemptKey is the PSP idempotency key of a refund attempt: the whole
// order's (refundKey), or a partial refund's, which names its tickets (a
// digest, so any number fits Stripe's 255 characters) so that the same
// tickets asked again after no answer ask under the same key.
func attemptKey(a shardstore.RefundAttempt) string {
	if a.Tickets == nil {
		return refundKey(a.Payment, a.Attempt)
	}
	sum := sha256.Sum256([]byte(joinIDs(a.Tickets, ",")))
	return refundKey(a.Payment+"-t"+hex.EncodeToString(sum[:8]), a.Attempt)
}

// settlePartial records a partial refund's outcome: its tickets are void
// once the PSP accepted it (pending) or gave the money back; if no ticket
// of the order is valid then, the order is refunded (or refund_pending)
// as a whole refund leaves it. Rows are locked as the charge's refund
// webhook locks them (payment, refund attempts, order), so the two cannot
// deadlock.
func settlePartial(ctx context.Context, tx shardstore.Tx, askID, paymentID int64, a shardstore.RefundAttempt) error {
	if err := tx.LockPaymentRow(ctx, paymentID); err != nil {
		return err
	}
	if err := tx.SettleRefund(ctx, askID, a); err != nil {
		return err
	}
	if a.Status != shardstore.RefundSucceeded && a.Status != shardstore.RefundPending {
		return nil
	}
	valid, err := tx.VoidTickets(ctx, a.OrderID, a.Tickets)
	if err != nil || valid > 0 {
		return err
	}
	if a.Status == shardstore.RefundPending {
		return tx.PendRefund(ctx, a.OrderID, paymentID)
	}
	if err := tx.SetPayment(ctx, paymentID, shardstore.PaymentRefunded, "", a.Payment, ""); err != nil {
		return err
	}
	_, err = tx.RefundPaid(ctx, a.OrderID, paymentID)
	return err
}

func joinIDs(ids []int64, sep string) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, sep)
}

// ticketList names tickets for a person: "#4", "#4, #5".
func ticketList(ids []int64) string {
	return "#" + joinIDs(ids, ", #")
}
