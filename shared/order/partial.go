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

// runKey names a refund run shared by concurrent callers in a process:
// the order, and the tickets of a partial refund.
func (a RefundAsk) runKey(orderID int64) string {
	return strconv.FormatInt(orderID, 10) + ":" + joinIDs(a.Tickets, ",")
}

// alreadyDone answers a refund asked of an order refunded already: none
// for the whole order (it is done), a conflict for tickets.
func (a RefundAsk) alreadyDone() error {
	if a.Tickets == nil {
		return nil
	}
	return alreadyRefunded(a.Tickets)
}

func alreadyRefunded(ids []int64) error {
	return reject.New(ErrAlreadyRefunded, "/tickets", fmt.Sprintf("Ticket %s was refunded already; nothing was asked.", ticketList(ids)))
}

// plan picks what a refund gives back of order o: asked names tickets
// (sorted, once each), or nil for every ticket still valid. It returns
// the tickets of a partial refund (nil for the whole order's) and the
// amount. A request that covers every valid ticket, with no other refund
// of the order in flight, is the whole order's: the same key and outcome
// as a console refund of the whole order or a cancellation's, so that the
// last tickets given back leave the order refunded.
func (s *Service) plan(ctx context.Context, tx shardstore.Tx, o Order, asked []int64) ([]int64, int64, error) {
	rest := o.TotalCents - o.RefundedCents
	if o.Status == shardstore.OrderRefundPending {
		// Every ticket is void already; only the whole refund is asked again.
		if asked != nil {
			return nil, 0, alreadyRefunded(asked)
		}
		return nil, rest, nil
	}
	tickets, err := tx.RefundTickets(ctx, o.ID)
	if err != nil {
		return nil, 0, err
	}
	byID := make(map[int64]shardstore.OrderTicket, len(tickets))
	var valid []int64
	inFlight := false
	for _, t := range tickets {
		byID[t.ID] = t
		switch {
		case t.Claim == shardstore.RefundAsking || t.Claim == shardstore.RefundUnanswered:
			inFlight = true
		case !t.Void && t.Claim == "":
			valid = append(valid, t.ID)
		}
	}
	if asked == nil {
		if inFlight {
			return nil, 0, reject.New(ErrRefundInFlight, "", "A refund of some of this order's tickets is under way or was never answered: ask it again with the same tickets first.")
		}
		if len(valid) == 0 {
			return nil, 0, reject.New(ErrAlreadyRefunded, "", "Every ticket of this order was refunded already; nothing was asked.")
		}
		return nil, rest, nil
	}
	var amount int64
	var done, busy, unknown []int64
	for _, id := range asked {
		t, ok := byID[id]
		switch {
		case !ok:
			unknown = append(unknown, id)
		case t.Claim == shardstore.RefundAsking,
			t.Claim == shardstore.RefundUnanswered && !slices.Equal(t.ClaimTickets, asked):
			busy = append(busy, id)
		case t.Void || t.Claim == shardstore.RefundSucceeded || t.Claim == shardstore.RefundPending:
			done = append(done, id)
		}
		amount += t.PriceCents
	}
	switch {
	case len(unknown) > 0:
		return nil, 0, reject.New(ErrBadRefund, "/tickets", fmt.Sprintf("Ticket %s is not a ticket of order %d.", ticketList(unknown), o.ID))
	case len(done) > 0:
		return nil, 0, alreadyRefunded(done)
	case len(busy) > 0:
		return nil, 0, reject.New(ErrRefundInFlight, "/tickets", fmt.Sprintf("Ticket %s is being refunded, or its refund was never answered: ask that refund again with the same tickets.", ticketList(busy)))
	case !inFlight && slices.Equal(asked, valid):
		return nil, rest, nil
	}
	return asked, amount, nil
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
