package shardstore

// Partial refunds: some tickets of a paid order given back. The tickets a
// refund gives back are kept on its refunds row (tickets); a ticket is
// claimed by the latest partial refund that names it and is not refused or
// failed, and a claimed ticket is never asked back again. The claims are
// read and written under the order's refund lock (LockRefunds), so two
// organizers refunding overlapping tickets take turns and the second sees
// the first's claim.

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// RefundReasons are the reasons a box office gives a refund (refunds.reason).
var RefundReasons = []string{"customer_request", "duplicate_purchase", "event_changed", "fraud", "other"}

// refundedSQL is what order o's refunds of the charge that paid it gave
// back: the sum of the succeeded ones (the one that refunded the order's
// last tickets included). A refunded order whose refunds kept no amount
// (recorded before amounts were, or given back at the PSP's dashboard,
// which records none) gave back its total.
const refundedSQL = `(SELECT CASE WHEN o.status = 'refunded' AND (count(*) = 0 OR count(f.amount_cents) < count(*))
	  THEN o.total_cents ELSE coalesce(sum(f.amount_cents), 0) END
	FROM refunds f WHERE f.order_id = o.id AND f.payment_id = o.payment_id AND f.status = 'succeeded')`

// refundingSQL is what order o's refunds the PSP accepted and has not
// given back yet (pending) will give back: not refunded yet, and not to be
// asked again.
const refundingSQL = `coalesce((SELECT sum(f.amount_cents) FROM refunds f
	WHERE f.order_id = o.id AND f.payment_id = o.payment_id AND f.status = 'pending'), 0)`

// RefundInFlight is an order's status and its latest refund asked of the
// PSP and not answered, if Found: Asking (its call under way, unless
// Stale: its process died) or never answered; Tickets are its tickets
// (nil: the whole order).
type RefundInFlight struct {
	Order   OrderStatus
	Found   bool
	Status  RefundStatus
	Tickets []int64
	Stale   bool
}

// InFlightRefund reads an order's status and its latest refund of the
// charge that paid it that is asking or unanswered, in one statement: a
// refund the PSP's webhook settles meanwhile (it does not take the refund
// lock) reads either asking, or settled with the order refunded.
func (r reads) InFlightRefund(ctx context.Context, orderID int64) (f RefundInFlight, err error) {
	var status *RefundStatus
	_, err = one(r.q.QueryRow(ctx, `SELECT o.status, f.status, f.tickets, coalesce(f.created_at < now() - $2::interval, false)
		FROM orders o LEFT JOIN LATERAL (SELECT f.status, f.tickets, f.created_at FROM refunds f
		  WHERE f.order_id = o.id AND f.payment_id = o.payment_id AND f.status IN ('asking', 'unanswered')
		  ORDER BY f.id DESC LIMIT 1) f ON true
		WHERE o.id = $1`, orderID, AskingStale), &f.Order, &status, &f.Tickets, &f.Stale)
	if status != nil {
		f.Found, f.Status = true, *status
	}
	return f, err
}

// OrderTicket is one ticket of an order as a refund sees it: its price,
// whether it is void, and the status of the partial refund that claims it
// ("" when none does).
type OrderTicket struct {
	ID         int64
	PriceCents int64
	Void       bool
	Claim      RefundStatus
	// ClaimTickets are the tickets of the claiming refund.
	ClaimTickets []int64
}

// RefundTickets reads an order's tickets with their prices and claims, in
// ticket id order.
func (r reads) RefundTickets(ctx context.Context, orderID int64) ([]OrderTicket, error) {
	rows, err := r.q.Query(ctx, `
		SELECT t.id, i.price_cents, t.void_at IS NOT NULL, coalesce(c.status, ''), c.tickets
		FROM tickets t JOIN order_items i ON i.id = t.order_item_id
		LEFT JOIN LATERAL (SELECT f.status, f.tickets FROM refunds f
		  WHERE f.order_id = t.order_id AND t.id = ANY(f.tickets) AND f.status NOT IN ('refused', 'failed')
		  ORDER BY f.id DESC LIMIT 1) c ON true
		WHERE t.order_id = $1 ORDER BY t.id`, orderID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (OrderTicket, error) {
		var t OrderTicket
		return t, r.Scan(&t.ID, &t.PriceCents, &t.Void, &t.Claim, &t.ClaimTickets)
	})
}

// VoidTickets voids tickets of an order (a partial refund gave them back)
// and tells how many of its tickets are still valid.
func (t Tx) VoidTickets(ctx context.Context, orderID int64, ids []int64) (valid int, err error) {
	if _, err := t.tx.Exec(ctx, `UPDATE tickets SET void_at = now() WHERE order_id = $1 AND id = ANY($2) AND void_at IS NULL`,
		orderID, ids); err != nil {
		return 0, err
	}
	err = t.tx.QueryRow(ctx, `SELECT count(*) FROM tickets WHERE order_id = $1 AND void_at IS NULL`, orderID).Scan(&valid)
	return valid, err
}

// LockPaymentRow locks a payment attempt's row until the transaction ends,
// first, as the charge's refund webhook does.
func (t Tx) LockPaymentRow(ctx context.Context, paymentID int64) error {
	_, err := t.tx.Exec(ctx, `SELECT 1 FROM payments WHERE id = $1 FOR NO KEY UPDATE`, paymentID)
	return err
}
