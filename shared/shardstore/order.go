package shardstore

// Orders as their fans see them, and checkout: the hold extended once and a
// payment attempt recorded.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Order is an order with its hold, items, tickets and payment.
type Order struct {
	ID         int64
	EventID    int64
	Status     OrderStatus
	TotalCents int64
	Currency   string
	CreatedAt  time.Time
	PaidAt     *time.Time
	HoldID     int64
	HoldStatus HoldStatus
	ExpiresAt  time.Time
	Items      []Item
	Tickets    []Ticket
	Payment    *Payment
	UserID     int64
	// RefundedCents is what the order's succeeded refunds gave back;
	// RefundingCents what its pending ones will.
	RefundedCents, RefundingCents int64
}

// Payment is the attempt that paid an order, or its latest one.
type Payment struct {
	Status  PaymentStatus
	URL     string
	Failure string
	Attempt int
}

// Ticket is one admission; a void one (its order was refunded) admits no
// one. Its code is not here: codes rotate and are shown on the ticket page
// (shared/entry), only to the ticket's holder.
type Ticket struct {
	ID         int64
	Label      string
	Void       bool
	PriceCents int64
}

// OrderOwner reads an order's event and account.
func (r reads) OrderOwner(ctx context.Context, id int64) (eventID, account int64, found bool, err error) {
	found, err = one(r.q.QueryRow(ctx, `SELECT event_id, user_id FROM orders WHERE id = $1`, id), &eventID, &account)
	return eventID, account, found, err
}

// Order reads an order whole. A hold past its expiry reads as expired
// before the sweeper gets to it, as the hold path and checkout treat it.
func (r reads) Order(ctx context.Context, id int64) (o Order, found bool, err error) {
	found, err = one(r.q.QueryRow(ctx, `
		SELECT o.id, o.event_id, o.user_id, o.status, o.total_cents, o.currency, o.created_at, o.paid_at,
		       h.id, CASE WHEN h.status = 'active' AND h.expires_at <= now() THEN 'expired' ELSE h.status END, h.expires_at,
		       `+refundedSQL+`, `+refundingSQL+`
		FROM orders o JOIN holds h ON h.id = o.hold_id WHERE o.id = $1`, id),
		&o.ID, &o.EventID, &o.UserID, &o.Status, &o.TotalCents, &o.Currency, &o.CreatedAt, &o.PaidAt,
		&o.HoldID, &o.HoldStatus, &o.ExpiresAt, &o.RefundedCents, &o.RefundingCents)
	if !found {
		return Order{}, false, err
	}
	o.ExpiresAt = o.ExpiresAt.UTC()
	if o.Items, err = r.Items(ctx, id); err != nil {
		return Order{}, false, err
	}
	rows, err := r.q.Query(ctx, `SELECT t.id, i.label, t.void_at IS NOT NULL, i.price_cents FROM tickets t JOIN order_items i ON i.id = t.order_item_id
		WHERE t.order_id = $1 ORDER BY t.id`, id)
	if err != nil {
		return Order{}, false, err
	}
	o.Tickets, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Ticket, error) {
		var t Ticket
		return t, r.Scan(&t.ID, &t.Label, &t.Void, &t.PriceCents)
	})
	if err != nil {
		return Order{}, false, err
	}
	var p Payment
	var url, failure *string
	// The attempt that paid the order, else the latest: a duplicate charge
	// refunded after it must not read as the order's payment.
	paid, err := one(r.q.QueryRow(ctx, `SELECT p.status, p.url, p.failure, p.attempt FROM payments p JOIN orders o ON o.id = p.order_id
		WHERE p.order_id = $1 ORDER BY p.id = o.payment_id IS TRUE DESC, p.id DESC LIMIT 1`, id),
		&p.Status, &url, &failure, &p.Attempt)
	if err != nil {
		return Order{}, false, err
	}
	if paid {
		p.URL, p.Failure = deref(url), deref(failure)
		o.Payment = &p
	}
	return o, true, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// OrdersOf lists the ids of an account's latest orders, newest first.
func (r reads) OrdersOf(ctx context.Context, account int64, limit int) ([]int64, error) {
	rows, err := r.q.Query(ctx, `SELECT id FROM orders WHERE user_id = $1 ORDER BY created_at DESC LIMIT $2`, account, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// Checkout is an order locked for checkout, with its hold.
type Checkout struct {
	Account    int64
	Status     OrderStatus
	HoldID     int64
	HoldStatus HoldStatus
	ExpiresAt  time.Time
	Extended   bool // the hold was extended already
}

// LockCheckout locks an order and its hold for checkout: the hold first,
// then the order, as a charge (LockCharge) and a release lock them, so a
// checkout and a webhook of the same order never wait for each other. An
// order's hold never changes, so it is found without a lock.
func (t Tx) LockCheckout(ctx context.Context, orderID int64) (c Checkout, found bool, err error) {
	found, err = one(t.tx.QueryRow(ctx, `
		SELECT id, status, expires_at, extended FROM holds
		WHERE id = (SELECT hold_id FROM orders WHERE id = $1) FOR NO KEY UPDATE`, orderID),
		&c.HoldID, &c.HoldStatus, &c.ExpiresAt, &c.Extended)
	if !found {
		return Checkout{}, false, err
	}
	found, err = one(t.tx.QueryRow(ctx, `SELECT user_id, status FROM orders WHERE id = $1 FOR NO KEY UPDATE`, orderID),
		&c.Account, &c.Status)
	return c, found, err
}

// ExtendHold extends a hold, once, to ttl seconds from now but no further
// than capSecs after its creation, and its seats with it; it returns the
// new expiry.
func (t Tx) ExtendHold(ctx context.Context, holdID int64, capSecs, ttl int) (time.Time, error) {
	var expires time.Time
	if err := t.tx.QueryRow(ctx, `
		UPDATE holds SET extended = true,
		  expires_at = greatest(expires_at, least(created_at + make_interval(secs => $2), now() + make_interval(secs => $3)))
		WHERE id = $1 RETURNING expires_at`, holdID, capSecs, ttl).Scan(&expires); err != nil {
		return time.Time{}, fmt.Errorf("extend hold %d: %w", holdID, err)
	}
	if _, err := t.tx.Exec(ctx, `UPDATE event_seats SET held_until = $2 WHERE hold_id = $1 AND status = 'held'`, holdID, expires); err != nil {
		return time.Time{}, fmt.Errorf("extend seats of hold %d: %w", holdID, err)
	}
	return expires, nil
}

// WaitForPayment makes a live hold wait for an asynchronous payment in
// progress (a Pix) exactly until until, but no further than capSecs after
// its creation, and its seats with it; waited tells whether the hold was
// live to wait.
func (t Tx) WaitForPayment(ctx context.Context, holdID int64, until time.Time, capSecs int) (waited bool, err error) {
	var expires time.Time
	waited, err = one(t.tx.QueryRow(ctx, `
		UPDATE holds SET expires_at = least($2, created_at + make_interval(secs => $3))
		WHERE id = $1 AND status = 'active' AND expires_at > now() RETURNING expires_at`, holdID, until, capSecs), &expires)
	if err != nil || !waited {
		return false, err
	}
	_, err = t.tx.Exec(ctx, `UPDATE event_seats SET held_until = $2 WHERE hold_id = $1 AND status = 'held'`, holdID, expires)
	return true, err
}

// LivePayment finds an order's payment attempt in flight.
func (t Tx) LivePayment(ctx context.Context, orderID int64) (id int64, status PaymentStatus, found bool, err error) {
	found, err = one(t.tx.QueryRow(ctx, `SELECT id, status FROM payments WHERE order_id = $1 AND status IN ('queued', 'requires_action', 'processing')`,
		orderID), &id, &status)
	return id, status, found, err
}

// NewPayment records a queued payment attempt of an order for its total,
// numbered after the earlier ones (the number is in its idempotency key),
// and the viewer address it was started from ("" unknown).
func (t Tx) NewPayment(ctx context.Context, orderID int64, address string) (id int64, err error) {
	err = t.tx.QueryRow(ctx, `
		INSERT INTO payments (order_id, idempotency_key, status, amount_cents, currency, attempt, client_address)
		SELECT o.id, 'order-' || o.id || '-' || (count(p.id) + 1), 'queued', o.total_cents, o.currency, count(p.id) + 1, nullif($2, '')
		FROM orders o LEFT JOIN payments p ON p.order_id = o.id WHERE o.id = $1 GROUP BY o.id
		RETURNING id`, orderID, address).Scan(&id)
	return id, err
}

// PaymentAttempt is what the PSP is asked to charge, and its order's hold:
// how long that can still wait bounds an asynchronous payment (Pix).
type PaymentAttempt struct {
	Key         string
	Status      PaymentStatus
	AmountCents int64
	Currency    string
	EventID     int64
	HoldCreated time.Time
	HoldExpires time.Time
}

// PaymentAttempt reads a payment attempt.
func (r reads) PaymentAttempt(ctx context.Context, id int64) (PaymentAttempt, error) {
	var p PaymentAttempt
	err := r.q.QueryRow(ctx, `SELECT p.idempotency_key, p.status, p.amount_cents, p.currency, h.event_id, h.created_at, h.expires_at
		FROM payments p JOIN orders o ON o.id = p.order_id JOIN holds h ON h.id = o.hold_id WHERE p.id = $1`, id).
		Scan(&p.Key, &p.Status, &p.AmountCents, &p.Currency, &p.EventID, &p.HoldCreated, &p.HoldExpires)
	if err != nil {
		return PaymentAttempt{}, fmt.Errorf("payment %d: %w", id, err)
	}
	return p, nil
}

// PaymentCreated records the PSP payment made for a queued attempt and its
// page. If the attempt was canceled meanwhile (its hold ended), the PSP
// payment is cancelled too, through the outbox, so no page can take a card
// for places given back.
func (s *Store) PaymentCreated(ctx context.Context, orderID, paymentID int64, pspID, url string) error {
	cancel, err := json.Marshal(map[string]any{"order_id": orderID, "payment": pspID})
	if err != nil {
		return err
	}
	_, err = s.db.Exec(ctx, `
		WITH made AS (
			UPDATE payments SET psp_payment_id = $2, updated_at = now(),
			  url = CASE WHEN status = 'queued' THEN $3 ELSE url END,
			  status = CASE WHEN status = 'queued' THEN 'requires_action' ELSE status END
			WHERE id = $1 AND psp_payment_id IS NULL RETURNING status
		)
		INSERT INTO outbox (topic, payload) SELECT $5, $4 FROM made WHERE status = 'canceled'`,
		paymentID, pspID, url, cancel, TopicPaymentCancel)
	return err
}

// Open payment pages of an account ($1) or of a viewer address ($1): the
// attempts whose Checkout Session may still take a card (created, or
// declined: a declined card leaves the page open) on a pending order.
const (
	openPagesOfAccount = `UPDATE payments p SET status = 'canceled', updated_at = now() FROM orders o
		WHERE o.user_id = $1 AND o.status = 'pending' AND p.order_id = o.id
		  AND p.status IN ('requires_action', 'failed') AND p.psp_payment_id IS NOT NULL
		RETURNING p.order_id, p.psp_payment_id`
	openPagesOfAddress = `UPDATE payments p SET status = 'canceled', updated_at = now() FROM orders o
		WHERE p.client_address = $1 AND p.status IN ('requires_action', 'failed') AND p.psp_payment_id IS NOT NULL
		  AND o.id = p.order_id AND o.status = 'pending'
		RETURNING p.order_id, p.psp_payment_id`
)

// CancelOpenPayments cancels the open payment pages of an account (or,
// with address set, of a viewer address), at the PSP too through the
// outbox (payment.cancel expires the Checkout Session): a card-testing
// block stops the pages already open, not only the next checkouts. It
// returns how many it cancelled.
func (s *Store) CancelOpenPayments(ctx context.Context, account int64, address string) (int, error) {
	q, arg := openPagesOfAccount, any(account)
	if address != "" {
		q, arg = openPagesOfAddress, address
	}
	var n int
	err := s.db.QueryRow(ctx, `WITH ended AS (`+q+`), sent AS (
			INSERT INTO outbox (topic, payload)
			SELECT $2, jsonb_build_object('order_id', order_id, 'payment', psp_payment_id) FROM ended RETURNING 1
		) SELECT count(*) FROM sent`, arg, TopicPaymentCancel).Scan(&n)
	return n, err
}
