package shardstore

// What an event's organizer reads and does on the shard (the console):
// orders by buyer or ticket, payment and refund history, refunds, exports
// and the live control room's sales summary.

import (
	"context"
	"fmt"
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
	ID           int64
	Attempt      int
	Status       PaymentStatus
	AmountCents  int64
	Currency     string
	PSPPaymentID string
	Failure      string
	CreatedAt    time.Time
	UpdatedAt    time.Time
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

// RefundRecord is one refund attempt, an organizer's (RequestedBy) or the
// outbox's (RequestedBy 0), and what the PSP said. Attempt numbers its
// idempotency key. AmountCents is what it asked back (0 for attempts
// recorded before amounts were kept), Tickets the tickets a partial
// refund gives back (nil: the whole order), Reason and Note why.
type RefundRecord struct {
	Status      RefundStatus
	RequestedBy int64
	Attempt     int
	PSPRefundID string
	Failure     string
	CreatedAt   time.Time
	AmountCents int64
	Tickets     []int64
	Reason      string
	Note        string
}

// Refunds reads the refund attempts of an order, oldest first.
func (r reads) Refunds(ctx context.Context, orderID int64) ([]RefundRecord, error) {
	rows, err := r.q.Query(ctx, `SELECT status, requested_by, attempt, coalesce(psp_refund_id, ''), coalesce(failure, ''), created_at,
		coalesce(amount_cents, 0), tickets, coalesce(reason, ''), coalesce(note, '')
		FROM refunds WHERE order_id = $1 ORDER BY id`, orderID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (RefundRecord, error) {
		var f RefundRecord
		return f, r.Scan(&f.Status, &f.RequestedBy, &f.Attempt, &f.PSPRefundID, &f.Failure, &f.CreatedAt,
			&f.AmountCents, &f.Tickets, &f.Reason, &f.Note)
	})
}

// PaidBy reads the payment attempt whose money an order would give back
// and its PSP id: the one that paid it, or for a charge the order could
// not keep (refund_pending), the one it names (PendRefund).
func (r reads) PaidBy(ctx context.Context, orderID int64) (paymentID int64, pspID string, found bool, err error) {
	found, err = one(r.q.QueryRow(ctx, `SELECT p.id, p.psp_payment_id FROM orders o JOIN payments p ON p.id = o.payment_id
		WHERE o.id = $1 AND p.psp_payment_id IS NOT NULL`, orderID), &paymentID, &pspID)
	return paymentID, pspID, found, err
}

// NextRefundAttempt numbers the next refund attempt of an order's charge
// (its PSP payment id), whoever asks (the console, a cancellation, the
// refund of a charge the order could not keep): one more than the PSP
// refused or failed. A refusal or a failure is final under its idempotency
// key (the PSP replays its answer), so the next attempt asks under a new
// key; a call the PSP never answered (or is still answering) is asked
// again under its own, so it cannot refund twice. A partial refund counts
// the attempts of its own set of tickets (tickets, sorted), a whole one
// (tickets nil) those of whole refunds: each has its own keys.
func (r reads) NextRefundAttempt(ctx context.Context, orderID int64, payment string, tickets []int64) (int, error) {
	var n int
	err := r.q.QueryRow(ctx, `SELECT 1 + count(*) FROM refunds f JOIN payments p ON p.id = f.payment_id
		WHERE f.order_id = $1 AND p.psp_payment_id = $2 AND f.status IN ('refused', 'failed')
		  AND f.tickets IS NOT DISTINCT FROM $3::bigint[]`, orderID, payment, tickets).Scan(&n)
	return n, err
}

// RefundFailure is an order whose latest refund attempt the PSP refused,
// failed or never answered (or whose outcome was never recorded), and
// whose money is still owed (paid or refund_pending).
type RefundFailure struct {
	OrderID     int64
	EventID     int64
	UserID      int64
	OrderStatus OrderStatus
	AmountCents int64
	Currency    string
	Status      RefundStatus
	Failure     string
	Attempt     int
	FailedAt    time.Time
}

// RefundFailures reads the latest limit refund failures among events. A
// failed refund of an extra charge on a paid order is not one: it is
// logged and counted (RefundsFailed), and the order page lists it.
func (r reads) RefundFailures(ctx context.Context, events []int64, limit int) ([]RefundFailure, error) {
	rows, err := r.q.Query(ctx, `SELECT * FROM (
			SELECT DISTINCT ON (f.order_id) f.order_id, o.event_id, o.user_id, o.status, o.total_cents, o.currency,
			  f.status AS refund, coalesce(f.failure, ''), f.attempt, f.created_at
			FROM refunds f JOIN orders o ON o.id = f.order_id
			WHERE o.event_id = ANY($1) AND o.status IN ('paid', 'refund_pending')
			  -- a paid order's own refund: the console's retry refunds the
			  -- charge that paid it, not an extra charge given back
			  AND (o.status = 'refund_pending' OR f.payment_id = o.payment_id)
			ORDER BY f.order_id, f.id DESC
		) latest WHERE refund IN ('refused', 'failed', 'unanswered')
		  -- asked, and no outcome recorded since (the process died)
		  OR refund = 'asking' AND created_at < now() - $3::interval
		ORDER BY created_at DESC LIMIT $2`, events, limit, AskingStale)
	if err != nil {
		return nil, fmt.Errorf("refund failures: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (RefundFailure, error) {
		var f RefundFailure
		return f, r.Scan(&f.OrderID, &f.EventID, &f.UserID, &f.OrderStatus, &f.AmountCents, &f.Currency, &f.Status, &f.Failure, &f.Attempt, &f.FailedAt)
	})
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

// AskingStale is how long a refund attempt may stay asking (its PSP call
// under way) before it is listed among the refund failures: longer than
// any call, so only an outcome that was never recorded shows.
const AskingStale = "2 minutes"

// AskRefund records a refund attempt about to be asked of the PSP (status
// asking), before the call, and returns its id: the call happens outside
// any transaction, and SettleRefund records its outcome.
func (t Tx) AskRefund(ctx context.Context, a RefundAttempt) (int64, error) {
	var id int64
	err := t.tx.QueryRow(ctx, `INSERT INTO refunds (order_id, payment_id, requested_by, status, attempt, amount_cents, tickets, reason, note)
		SELECT $1, id, $3, 'asking', $4, nullif($5, 0), $6, nullif($7, ''), nullif($8, '')
		FROM payments WHERE order_id = $1 AND psp_payment_id = $2 RETURNING id`,
		a.OrderID, a.Payment, a.By, max(a.Attempt, 1), a.Amount, a.Tickets, a.Reason, a.Note).Scan(&id)
	return id, err
}

// SettleRefund records the outcome of an asked refund attempt.
func (t Tx) SettleRefund(ctx context.Context, id int64, a RefundAttempt) error {
	_, err := t.tx.Exec(ctx, `UPDATE refunds SET status = $2, psp_refund_id = nullif($3, ''), failure = nullif($4, '') WHERE id = $1`,
		id, a.Status, a.PSPRefundID, a.Failure)
	return err
}

// RefundFailedAtPSP records that a refund the PSP had accepted (pending,
// asked with no outcome recorded, or even succeeded: Stripe says a
// succeeded refund may rarely fail later) failed, and returns that attempt and
// whether its charge is the one its order is paid by or gives back (own).
// found is false for a refund the shop has no pending record of.
func (t Tx) RefundFailedAtPSP(ctx context.Context, pspRefundID, failure string) (a RefundAttempt, own, found bool, err error) {
	found, err = one(t.tx.QueryRow(ctx, `
		UPDATE refunds f SET status = 'failed', failure = $2 FROM payments p, orders o
		WHERE f.psp_refund_id = $1 AND f.status IN ('pending', 'asking', 'succeeded') AND p.id = f.payment_id AND o.id = f.order_id
		RETURNING f.order_id, p.psp_payment_id, f.requested_by, f.attempt, o.payment_id IS NOT DISTINCT FROM f.payment_id, f.tickets`,
		pspRefundID, failure), &a.OrderID, &a.Payment, &a.By, &a.Attempt, &own, &a.Tickets)
	a.Status, a.PSPRefundID, a.Failure = RefundFailed, pspRefundID, failure
	if err == nil && found && a.Tickets != nil {
		// The money of a partial refund is still the fan's: its tickets
		// admit again, and may be asked back again.
		_, err = t.tx.Exec(ctx, `UPDATE tickets SET void_at = NULL WHERE order_id = $1 AND id = ANY($2)
			AND EXISTS (SELECT 1 FROM orders WHERE id = $1 AND status = 'paid')`, a.OrderID, a.Tickets)
	}
	return a, own, found, err
}

// RefundSucceededAtPSP records that a refund the PSP had accepted
// (pending) gave the money back, and returns its order; found is false for
// a refund the shop has no pending record of (settled already, or the
// dashboard's). The payment's row is locked first, as every refund
// settlement locks it.
func (t Tx) RefundSucceededAtPSP(ctx context.Context, pspRefundID string) (orderID int64, found bool, err error) {
	var paymentID int64
	const pending = `FROM refunds WHERE psp_refund_id = $1 AND status IN ('pending', 'asking')`
	found, err = one(t.tx.QueryRow(ctx, `SELECT payment_id `+pending, pspRefundID), &paymentID)
	if err != nil || !found {
		return 0, false, err
	}
	if err := t.LockPaymentRow(ctx, paymentID); err != nil {
		return 0, false, err
	}
	found, err = one(t.tx.QueryRow(ctx, `UPDATE refunds SET status = 'succeeded' WHERE psp_refund_id = $1 AND status IN ('pending', 'asking')
		RETURNING order_id`, pspRefundID), &orderID)
	return orderID, found, err
}

// RefundAnswerDue tells whether an order has a refund asked of the PSP
// whose answer is not recorded yet (asking, for less than AskingStale): an
// event about that refund may arrive before the answer that names it.
func (r reads) RefundAnswerDue(ctx context.Context, orderID int64) (bool, error) {
	var due bool
	err := r.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM refunds WHERE order_id = $1 AND status = 'asking'
		AND created_at > now() - $2::interval)`, orderID, AskingStale).Scan(&due)
	return due, err
}

// RefundConfirmed records that a payment attempt's money came back: its
// refunds pending (or asked, outcome unrecorded) succeeded.
func (t Tx) RefundConfirmed(ctx context.Context, paymentID int64) error {
	_, err := t.tx.Exec(ctx, `UPDATE refunds SET status = 'succeeded' WHERE payment_id = $1 AND status IN ('pending', 'asking')`, paymentID)
	return err
}

// RefundAttempt is one refund asked of the PSP for an order's payment
// (its PSP id), by an organizer or the outbox (By 0), and what it said:
// Amount back, the Tickets a partial refund gives back (nil: the whole
// order), its Reason (RefundReasons) and the organizer's Note.
type RefundAttempt struct {
	OrderID     int64
	Payment     string
	By          int64
	Attempt     int
	Status      RefundStatus
	PSPRefundID string
	Failure     string
	Amount      int64
	Tickets     []int64
	Reason      string
	Note        string
}

// RecordRefund records a refund attempt; one of a payment that is not the
// order's (a stray charge) records nothing.
func (t Tx) RecordRefund(ctx context.Context, a RefundAttempt) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO refunds (order_id, payment_id, requested_by, status, psp_refund_id, failure, attempt, amount_cents)
		SELECT $1, id, $3, $4, nullif($5, ''), nullif($6, ''), $7, nullif($8, 0) FROM payments WHERE order_id = $1 AND psp_payment_id = $2`,
		a.OrderID, a.Payment, a.By, a.Status, a.PSPRefundID, a.Failure, max(a.Attempt, 1), a.Amount)
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
	// RefundedCents is what went back: the order's succeeded refunds
	// (refundedSQL).
	RefundedCents int64
	// RefundReason and RefundNote are the latest refund's.
	RefundReason, RefundNote string
	Attendees                []Attendee // filled by Attendees
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
	rows, err := r.q.Query(ctx, `SELECT o.id, o.user_id, o.status, o.ticket_count, o.total_cents, o.currency, o.created_at, o.paid_at,
		`+refundedSQL+`,
		coalesce(why.reason, ''), coalesce(why.note, '')
		FROM orders o LEFT JOIN LATERAL (SELECT reason, note FROM refunds f WHERE f.order_id = o.id AND f.reason IS NOT NULL
		  ORDER BY f.id DESC LIMIT 1) why ON true
		WHERE o.event_id = $1 AND o.id > $2 ORDER BY o.id LIMIT $3`, eventID, after, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ExportOrder, error) {
		var o ExportOrder
		return o, r.Scan(&o.ID, &o.UserID, &o.Status, &o.Tickets, &o.TotalCents, &o.Currency, &o.CreatedAt, &o.PaidAt,
			&o.RefundedCents, &o.RefundReason, &o.RefundNote)
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
