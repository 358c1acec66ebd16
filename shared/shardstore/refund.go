package shardstore

// A cancelled event's refunds: asked for through the outbox once per paid
// order, counted in one row the console reads, and guarded by the event's
// money lock against a payment committing while the cancellation does.

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// CancelRefundStatus is where one refund of a cancellation stands
// (cancel_refunds.status).
type CancelRefundStatus string

// Cancellation refund states: asked of the PSP (retrying while it does not
// answer), refunded (its webhook came), or failed (the PSP refused it or
// never answered); a failed one may be asked again.
const (
	CancelRefundAsked    CancelRefundStatus = "asked"
	CancelRefundRefunded CancelRefundStatus = "refunded"
	CancelRefundFailed   CancelRefundStatus = "failed"
)

// moneyLockKey names an event's money lock.
func moneyLockKey(eventID int64) string { return "money:" + strconv.FormatInt(eventID, 10) }

// ShareMoneyLock takes an event's money lock in share mode until the
// transaction ends. Whatever pays or refunds one of the event's orders
// holds it (sharing it with the others) from before it reads whether the
// event is cancelled; RequestEventRefunds takes it alone. So a payment
// either commits before the cancellation counts the paid orders, or reads
// the event cancelled (the catalog commits the cancellation first) and
// gives the money back.
func (t Tx) ShareMoneyLock(ctx context.Context, eventID int64) error {
	return t.lock(ctx, moneyLockKey(eventID), true)
}

// RequestEventRefunds asks, through the outbox, for the refund of every
// paid order of a cancelled event that has none asked yet, and again for
// each whose refund failed (so repeating it is the retry, and asks for no
// refund twice); then it counts the event's refunds afresh. It returns how
// many it asked for.
func (s *Store) RequestEventRefunds(ctx context.Context, eventID int64, reason string) (int, error) {
	var asked int
	err := s.WithTx(ctx, func(tx Tx) error {
		// Alone: no payment or refund of the event is between its reads
		// and its commit, so the counts are exact.
		if err := tx.lock(ctx, moneyLockKey(eventID), false); err != nil {
			return err
		}
		if err := tx.tx.QueryRow(ctx, `
			WITH paid AS (
				-- what partial refunds gave back already is not asked again
				SELECT o.id, p.psp_payment_id, p.amount_cents - `+refundedSQL+` - `+refundingSQL+` AS amount_cents
				FROM orders o JOIN payments p ON p.id = o.payment_id
				WHERE o.event_id = $1 AND o.status = 'paid' AND p.psp_payment_id IS NOT NULL
			), asked AS (
				INSERT INTO cancel_refunds AS c (order_id, event_id) SELECT id, $1 FROM paid
				ON CONFLICT (order_id) DO UPDATE SET status = 'asked', asked = c.asked + 1, failure = NULL, updated_at = now()
				WHERE c.status = 'failed'
				RETURNING order_id, asked
			), sent AS (
				INSERT INTO outbox (topic, payload)
				SELECT $3, jsonb_build_object('order_id', a.order_id, 'payment', p.psp_payment_id, 'amount', p.amount_cents,
				  'reason', $2::text, 'try', a.asked)
				FROM asked a JOIN paid p ON p.id = a.order_id
				RETURNING 1
			)
			SELECT count(*) FROM sent`, eventID, reason, TopicRefundRequested).Scan(&asked); err != nil {
			return err
		}
		_, err := tx.tx.Exec(ctx, `
			INSERT INTO cancel_refund_counts (event_id, total, refunded, failed)
			SELECT $1, count(*), count(*) FILTER (WHERE status = 'refunded'),
			  (SELECT count(*) FROM cancel_refunds WHERE event_id = $1 AND status = 'failed')
			FROM orders WHERE event_id = $1 AND payment_id IS NOT NULL AND status IN ('paid', 'refunded')
			ON CONFLICT (event_id) DO UPDATE SET total = excluded.total, refunded = excluded.refunded, failed = excluded.failed`, eventID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("refund orders of event %d: %w", eventID, err)
	}
	return asked, nil
}

// CancellationAsked tells whether RequestEventRefunds ran for an event
// (it leaves the event's counts row).
func (r reads) CancellationAsked(ctx context.Context, eventID int64) (bool, error) {
	var asked bool
	err := r.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM cancel_refund_counts WHERE event_id = $1)`, eventID).Scan(&asked)
	return asked, err
}

// refunded records, after RefundPaid refunded an order of an event, that a
// refund its cancellation asked for (failed or not) is done; an order the
// cancellation did not count (a charge given back) changes no count.
func (t Tx) refunded(ctx context.Context, orderID, eventID int64) error {
	_, err := t.tx.Exec(ctx, `
		WITH was AS (
			UPDATE cancel_refunds c SET status = 'refunded', updated_at = now()
			FROM (SELECT status FROM cancel_refunds WHERE order_id = $1 FOR UPDATE) old
			WHERE c.order_id = $1 RETURNING old.status
		)
		UPDATE cancel_refund_counts SET refunded = refunded + (SELECT count(*) FROM was),
		  failed = failed - (SELECT count(*) FROM was WHERE status = 'failed')
		WHERE event_id = $2`, orderID, eventID)
	return err
}

// RefundFailed records that the try-th refund a cancellation asked for an
// order failed, and why: only while the order is still paid (or its refund
// pending) and that try is the latest (a late answer to an earlier try
// changes nothing); try AnyTry is whichever was asked last (a refund the
// PSP accepted and that failed later). It tells whether it recorded it.
func (t Tx) RefundFailed(ctx context.Context, orderID int64, try int, failure string) (bool, error) {
	var eventID int64
	var status OrderStatus
	found, err := one(t.tx.QueryRow(ctx, `SELECT event_id, status FROM orders WHERE id = $1`, orderID), &eventID, &status)
	if err != nil || !found || (status != OrderPaid && status != OrderRefundPending) {
		return false, err
	}
	if err := t.ShareMoneyLock(ctx, eventID); err != nil {
		return false, err
	}
	// A refund of the order racing this one meets it on the cancel_refunds
	// row: if it comes second, it reads the failure (FOR UPDATE reads the
	// latest row) and un-counts it; if first, this matches no row.
	var failed bool
	err = t.tx.QueryRow(ctx, `
		WITH failed AS (
			UPDATE cancel_refunds SET status = 'failed', failure = $3, updated_at = now()
			WHERE order_id = $1 AND status = 'asked' AND (asked = $2 OR $2 = -1)
			  AND EXISTS (SELECT 1 FROM orders WHERE id = $1 AND status IN ('paid', 'refund_pending'))
			RETURNING event_id
		), counted AS (
			UPDATE cancel_refund_counts k SET failed = failed + 1 FROM failed f WHERE k.event_id = f.event_id
		)
		SELECT EXISTS (SELECT 1 FROM failed)`, orderID, try, failure).Scan(&failed)
	return failed, err
}

// AnyTry names the latest try of a cancellation refund (RefundFailed).
const AnyTry = -1

// RefundCounts are a cancelled event's paid orders when it was cancelled
// (Total), how many of them are refunded, and how many refunds failed
// (Failed: refused by the PSP or never answered, the order still paid).
// Before a cancellation they count the event's paid orders.
type RefundCounts struct {
	Total, Refunded, Failed int
}

// EventRefunds reads an event's refund counts: the one row its
// cancellation keeps, or before any cancellation, the count of its paid
// orders (an index range of orders_event).
func (r reads) EventRefunds(ctx context.Context, eventID int64) (RefundCounts, error) {
	var c RefundCounts
	found, err := one(r.q.QueryRow(ctx, refundCountsSQL, eventID), &c.Total, &c.Refunded, &c.Failed)
	if err == nil && !found {
		err = r.q.QueryRow(ctx, paidOrdersSQL, eventID).Scan(&c.Total, &c.Refunded)
	}
	if err != nil {
		return RefundCounts{}, fmt.Errorf("refund progress of event %d: %w", eventID, err)
	}
	return c, nil
}

const (
	failedRefundsSQL = `SELECT c.order_id, o.user_id, o.total_cents, o.currency, coalesce(c.failure, ''), c.asked, c.updated_at
		FROM cancel_refunds c JOIN orders o ON o.id = c.order_id
		WHERE c.event_id = $1 AND c.status = 'failed' ORDER BY c.order_id LIMIT $2`
	refundCountsSQL = `SELECT total, refunded, failed FROM cancel_refund_counts WHERE event_id = $1`
	paidOrdersSQL   = `SELECT count(*), count(*) FILTER (WHERE status = 'refunded') FROM orders
		WHERE event_id = $1 AND payment_id IS NOT NULL AND status IN ('paid', 'refunded')`
)

// FailedRefund is a refund a cancellation asked that failed: the order
// (still paid), its buyer and amount, why the refund failed, how many
// times it was asked and when it last failed.
type FailedRefund struct {
	OrderID     int64
	UserID      int64
	AmountCents int64
	Currency    string
	Failure     string
	Tries       int
	FailedAt    time.Time
}

// FailedRefunds reads the first limit failed refunds of an event's
// cancellation, by order id (the partial index cancel_refunds_failed).
func (r reads) FailedRefunds(ctx context.Context, eventID int64, limit int) ([]FailedRefund, error) {
	rows, err := r.q.Query(ctx, failedRefundsSQL, eventID, limit)
	if err != nil {
		return nil, fmt.Errorf("failed refunds of event %d: %w", eventID, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (FailedRefund, error) {
		var f FailedRefund
		return f, r.Scan(&f.OrderID, &f.UserID, &f.AmountCents, &f.Currency, &f.Failure, &f.Tries, &f.FailedAt)
	})
}
