package shardstore

// What an event's organizer reads and does on the shard (the console):
// orders by buyer or ticket, payment and refund history, refunds, exports
// and the live control room's sales summary.

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// OrdersOfBuyer lists the ids of an account's latest orders among events,
// newest first (orders_user).
func (r reads) OrdersOfBuyer(ctx context.Context, account int64, events []int64, limit int) ([]int64, error) {
	rows, err := r.q.Query(ctx, `SELECT id FROM orders WHERE user_id = $1 AND event_id = ANY($2) ORDER BY created_at DESC LIMIT $3`,
		account, events, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// TicketOrder finds the order of a ticket.
func (r reads) TicketOrder(ctx context.Context, ticketID int64) (orderID int64, found bool, err error) {
	found, err = one(r.q.QueryRow(ctx, `SELECT order_id FROM tickets WHERE id = $1`, ticketID), &orderID)
	return orderID, found, err
}

// PaymentRecord is one payment attempt, as the organizer sees it.
type PaymentRecord struct {
	ID           int64         `json:"id"`
	Attempt      int           `json:"attempt"`
	Status       PaymentStatus `json:"status"`
	AmountCents  int64         `json:"amount_cents"`
	Currency     string        `json:"currency"`
	PSPPaymentID string        `json:"psp_payment_id,omitempty"`
	Failure      string        `json:"failure,omitempty"`
	CreatedAt    time.Time     `json:"created_at"`
	UpdatedAt    time.Time     `json:"updated_at"`
}

// Payments reads every payment attempt of an order, oldest first.
func (r reads) Payments(ctx context.Context, orderID int64) ([]PaymentRecord, error) {
	rows, err := r.q.Query(ctx, `SELECT id, attempt, status, amount_cents, currency, coalesce(psp_payment_id, ''),
		coalesce(failure, ''), created_at, updated_at FROM payments WHERE order_id = $1 ORDER BY id`, orderID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (PaymentRecord, error) {
		var p PaymentRecord
		return p, r.Scan(&p.ID, &p.Attempt, &p.Status, &p.AmountCents, &p.Currency, &p.PSPPaymentID, &p.Failure, &p.CreatedAt, &p.UpdatedAt)
	})
}

// RefundRecord is one refund an organizer asked for, and what the PSP said.
type RefundRecord struct {
	Status      RefundStatus `json:"status"`
	RequestedBy int64        `json:"requested_by"`
	PSPRefundID string       `json:"psp_refund_id,omitempty"`
	Failure     string       `json:"failure,omitempty"`
	CreatedAt   time.Time    `json:"created_at"`
}

// Refunds reads the refunds asked for an order, oldest first.
func (r reads) Refunds(ctx context.Context, orderID int64) ([]RefundRecord, error) {
	rows, err := r.q.Query(ctx, `SELECT status, requested_by, coalesce(psp_refund_id, ''), coalesce(failure, ''), created_at
		FROM refunds WHERE order_id = $1 ORDER BY id`, orderID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (RefundRecord, error) {
		var f RefundRecord
		return f, r.Scan(&f.Status, &f.RequestedBy, &f.PSPRefundID, &f.Failure, &f.CreatedAt)
	})
}

// PaidBy reads the payment attempt that paid an order and its PSP id.
func (r reads) PaidBy(ctx context.Context, orderID int64) (paymentID int64, pspID string, found bool, err error) {
	found, err = one(r.q.QueryRow(ctx, `SELECT p.id, p.psp_payment_id FROM orders o JOIN payments p ON p.id = o.payment_id
		WHERE o.id = $1 AND p.psp_payment_id IS NOT NULL`, orderID), &paymentID, &pspID)
	return paymentID, pspID, found, err
}

// LockRefunds takes an order's refund lock for the rest of the
// transaction and reads the order's status: concurrent refunds of one
// order take turns, and each sees what the one before it committed. It is
// an advisory lock, not the order's row lock, so the PSP's refunded
// webhook (which locks the payment, then the order) cannot deadlock with
// the refund that caused it.
func (t Tx) LockRefunds(ctx context.Context, orderID int64) (status OrderStatus, found bool, err error) {
	if err := t.lock(ctx, "refund:"+strconv.FormatInt(orderID, 10), false); err != nil {
		return "", false, err
	}
	found, err = one(t.tx.QueryRow(ctx, `SELECT status FROM orders WHERE id = $1`, orderID), &status)
	return status, found, err
}

// RecordRefund records an organizer's refund and what the PSP said.
func (t Tx) RecordRefund(ctx context.Context, orderID, paymentID, by int64, status RefundStatus, pspRefundID, failure string) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO refunds (order_id, payment_id, requested_by, status, psp_refund_id, failure)
		VALUES ($1, $2, $3, $4, nullif($5, ''), nullif($6, ''))`, orderID, paymentID, by, status, pspRefundID, failure)
	return err
}

// ExportOrder is one order of an export.
type ExportOrder struct {
	ID         int64
	UserID     int64
	Status     OrderStatus
	Tickets    int
	TotalCents int64
	Currency   string
	CreatedAt  time.Time
	PaidAt     *time.Time
	Attendees  []Attendee // filled by Attendees
}

// Attendee is one ticket of an exported order.
type Attendee struct {
	TicketID   int64
	Label      string
	PriceLevel string
	PriceCents int
	Void       bool
	// HolderID and HolderName are who holds the ticket now, as the door's
	// scan names them; nil until the ticket is keyed (its buyer holds it).
	HolderID   *int64
	HolderName *string
}

// OrdersAfter reads up to limit of an event's orders with ids above
// after, in id order (a keyset page on orders_event).
func (r reads) OrdersAfter(ctx context.Context, eventID, after int64, limit int) ([]ExportOrder, error) {
	rows, err := r.q.Query(ctx, `SELECT id, user_id, status, ticket_count, total_cents, currency, created_at, paid_at
		FROM orders WHERE event_id = $1 AND id > $2 ORDER BY id LIMIT $3`, eventID, after, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ExportOrder, error) {
		var o ExportOrder
		return o, r.Scan(&o.ID, &o.UserID, &o.Status, &o.Tickets, &o.TotalCents, &o.Currency, &o.CreatedAt, &o.PaidAt)
	})
}

// CountOrders counts an event's orders (an index-only scan of orders_event).
func (r reads) CountOrders(ctx context.Context, eventID int64) (n int, err error) {
	err = r.q.QueryRow(ctx, `SELECT count(*) FROM orders WHERE event_id = $1`, eventID).Scan(&n)
	return n, err
}

// Attendees fills the tickets of a page of orders.
func (r reads) Attendees(ctx context.Context, page []ExportOrder) error {
	at := make(map[int64]int, len(page))
	ids := make([]int64, len(page))
	for i, o := range page {
		at[o.ID], ids[i] = i, o.ID
	}
	rows, err := r.q.Query(ctx, `SELECT t.order_id, t.id, i.label, i.price_level, i.price_cents, t.void_at IS NOT NULL, k.holder_id, k.holder_name
		FROM tickets t JOIN order_items i ON i.id = t.order_item_id LEFT JOIN ticket_keys k ON k.ticket_id = t.id
		WHERE t.order_id = ANY($1) ORDER BY t.id`, ids)
	if err != nil {
		return err
	}
	var orderID int64
	var a Attendee
	_, err = pgx.ForEachRow(rows, []any{&orderID, &a.TicketID, &a.Label, &a.PriceLevel, &a.PriceCents, &a.Void, &a.HolderID, &a.HolderName}, func() error {
		o := &page[at[orderID]]
		o.Attendees = append(o.Attendees, a)
		return nil
	})
	return err
}
