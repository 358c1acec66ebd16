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

// partlyRefundedSQL is what the partial refunds of order o gave back, or
// are giving back (pending): a paid order's refunded amount.
const partlyRefundedSQL = `coalesce((SELECT sum(f.amount_cents) FROM refunds f
	WHERE f.order_id = o.id AND f.tickets IS NOT NULL AND f.status IN ('succeeded', 'pending')), 0)`

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
