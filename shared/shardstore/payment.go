package shardstore

// The PSP's webhook events: each recorded once, applied to our payment
// attempt and its order, tickets issued or voided.

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// RecordWebhook records a PSP event id; fresh is false when it was applied
// already.
func (t Tx) RecordWebhook(ctx context.Context, id, typ string) (fresh bool, err error) {
	tag, err := t.tx.Exec(ctx, `INSERT INTO webhook_events (psp_event_id, type) VALUES ($1, $2) ON CONFLICT DO NOTHING`, id, typ)
	return err == nil && tag.RowsAffected() == 1, err
}

// PaymentRow is our record of one payment attempt.
type PaymentRow struct {
	ID, OrderID int64
	Status      PaymentStatus
	AmountCents int64
	Currency    string
	PSPID       *string // nil until the PSP made it
	// Account is the order's buyer, Address the viewer address the
	// attempt was started from ("" unknown): what its declines count on.
	Account int64
	Address string
}

// LockPayment locks our attempt for a PSP payment: the reference must be
// the attempt's key, and the PSP id the attempt's (or the attempt has none
// yet, and no other has it).
func (t Tx) LockPayment(ctx context.Context, pspID, reference string) (p PaymentRow, found bool, err error) {
	found, err = one(t.tx.QueryRow(ctx, `
		SELECT p.id, p.order_id, p.status, p.amount_cents, p.currency, p.psp_payment_id, o.user_id, coalesce(p.client_address, '')
		FROM payments p JOIN orders o ON o.id = p.order_id
		WHERE p.idempotency_key = $2
		  AND (p.psp_payment_id = $1 OR (p.psp_payment_id IS NULL AND NOT EXISTS (SELECT 1 FROM payments WHERE psp_payment_id = $1)))
		FOR NO KEY UPDATE OF p`, pspID, reference),
		&p.ID, &p.OrderID, &p.Status, &p.AmountCents, &p.Currency, &p.PSPID, &p.Account, &p.Address)
	return p, found, err
}

// SetPayment records a payment attempt's new state, its failure (or none),
// the PSP's id if it had none and the card fingerprint of its charge (kept
// when card is ""). A refund keeps the failure that caused it (a charge
// past a limit), so the order still says why.
func (t Tx) SetPayment(ctx context.Context, id int64, status PaymentStatus, failure, pspID, card string) error {
	_, err := t.tx.Exec(ctx, `UPDATE payments SET status = $2,
		failure = CASE WHEN $2 = 'refunded' THEN coalesce(nullif($3, ''), failure) ELSE nullif($3, '') END,
		psp_payment_id = coalesce(psp_payment_id, $4), card_fingerprint = coalesce(nullif($5, ''), card_fingerprint),
		updated_at = now() WHERE id = $1`, id, status, failure, pspID, card)
	return err
}

// Charge is what a charge is checked against: the order, locked.
type Charge struct {
	OrderID, Account, EventID, HoldID int64
	Tickets                           int
	Status                            OrderStatus
	TotalCents                        int64
	Currency                          string
	HoldLive                          bool // active and not expired
}

// LockCharge locks what a charge of an order changes, in the order holds
// and releases lock them: the account's limit lock, the hold, the order.
func (t Tx) LockCharge(ctx context.Context, orderID int64) (c Charge, found bool, err error) {
	found, err = one(t.tx.QueryRow(ctx, `SELECT id, user_id, event_id, hold_id, ticket_count FROM orders WHERE id = $1`, orderID),
		&c.OrderID, &c.Account, &c.EventID, &c.HoldID, &c.Tickets)
	if !found {
		return Charge{}, false, err
	}
	if err := t.LockAccount(ctx, c.Account, c.EventID); err != nil {
		return Charge{}, false, err
	}
	if err := t.tx.QueryRow(ctx, `SELECT status = 'active' AND expires_at > now() FROM holds WHERE id = $1 FOR NO KEY UPDATE`, c.HoldID).
		Scan(&c.HoldLive); err != nil {
		return Charge{}, false, err
	}
	if err := t.tx.QueryRow(ctx, `SELECT status, total_cents, currency FROM orders WHERE id = $1 FOR NO KEY UPDATE`, orderID).
		Scan(&c.Status, &c.TotalCents, &c.Currency); err != nil {
		return Charge{}, false, err
	}
	return c, true, nil
}

// ticketsKept counts account $1's tickets on event $2 besides order $3,
// those transferred in included; the event is read from the hold, so the
// plan finds the account's orders through orders_user (see within_limit,
// migrations 00011, 00023, 00029 and 00031), less the void tickets a
// partial refund gave back (00030). The counts are written in, not
// called through void_tickets or tickets_transferred_in: a SQL function
// that reads tables is parsed and planned on every call, prepared
// statement or not.
const ticketsKept = `SELECT coalesce(sum(o.ticket_count - CASE WHEN o.status = 'paid'
			THEN (SELECT count(*) FROM tickets v WHERE v.order_id = o.id AND v.void_at IS NOT NULL) ELSE 0 END), 0)
		+ (SELECT count(*) FROM ticket_keys k JOIN tickets t ON t.id = k.ticket_id JOIN orders b ON b.id = t.order_id
		   WHERE k.holder_id = $1 AND k.event_id = $2 AND b.user_id <> $1 AND b.status = 'paid' AND t.void_at IS NULL)
	FROM orders o JOIN holds h ON h.id = o.hold_id
	WHERE o.user_id = $1 AND h.event_id = $2 AND o.id <> $3
	  AND (o.status = 'paid' OR (o.status = 'pending' AND h.status = 'active' AND h.expires_at > now()))`

// TicketsKept counts the tickets an account has or holds on an event
// besides one order (0: none), as the hold path's limit check counts them:
// paid orders, pending ones whose hold is live, and tickets transferred in.
func (t Tx) TicketsKept(ctx context.Context, account, eventID, besides int64) (int, error) {
	var kept int
	err := t.tx.QueryRow(ctx, ticketsKept, account, eventID, besides).Scan(&kept)
	return kept, err
}

// repriced finds an item of order $1 priced otherwise than its seat or
// pool is now: SetPrice keeps every seat and pool at its level's price.
const repriced = `SELECT i.label, i.price_cents, coalesce(s.price_cents, p.price_cents) FROM order_items i
	LEFT JOIN event_seats s ON s.id = i.event_seat_id
	LEFT JOIN ga_pools p ON p.id = i.pool_id
	WHERE i.order_id = $1 AND i.price_cents <> coalesce(s.price_cents, p.price_cents)
	ORDER BY i.id LIMIT 1`

// Repriced tells why an order's items are no longer at the price their
// places are taken at now, or "" when they all are: an order whose hold
// ended re-takes its places only at their current price.
func (t Tx) Repriced(ctx context.Context, orderID int64) (string, error) {
	var label string
	var was, now int
	found, err := one(t.tx.QueryRow(ctx, repriced, orderID), &label, &was, &now)
	if err != nil || !found {
		return "", err
	}
	return fmt.Sprintf("%s was priced %d and now costs %d", label, was, now), nil
}

// MarkPaid records an order paid by a payment attempt.
func (t Tx) MarkPaid(ctx context.Context, orderID, paymentID int64) error {
	_, err := t.tx.Exec(ctx, `UPDATE orders SET status = 'paid', paid_at = now(), payment_id = $2, updated_at = now() WHERE id = $1`,
		orderID, paymentID)
	return err
}

// PendRefund records that an order's money, the charge of payment
// attempt paymentID, is being given back: it reads refund_pending, its
// tickets void, until the PSP confirms that charge's refund (RefundPaid).
// The order names the charge, so the refund of another charge of the same
// order (a second page paid) cannot finish it.
func (t Tx) PendRefund(ctx context.Context, orderID, paymentID int64) error {
	if _, err := t.tx.Exec(ctx, `UPDATE orders SET status = 'refund_pending', payment_id = $2, updated_at = now() WHERE id = $1`,
		orderID, paymentID); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, `UPDATE tickets SET void_at = now() WHERE order_id = $1 AND void_at IS NULL`, orderID)
	return err
}

// RefundPaid refunds an order only if it is paid by paymentID or its
// refund of that payment's charge is pending, voids its tickets and counts it
// among its event's cancellation refunds (under the event's money lock);
// refunded tells whether it did.
func (t Tx) RefundPaid(ctx context.Context, orderID, paymentID int64) (refunded bool, err error) {
	var eventID int64
	found, err := one(t.tx.QueryRow(ctx, `SELECT event_id FROM orders WHERE id = $1`, orderID), &eventID)
	if err != nil || !found {
		return false, err
	}
	if err := t.ShareMoneyLock(ctx, eventID); err != nil {
		return false, err
	}
	tag, err := t.tx.Exec(ctx, `UPDATE orders SET status = 'refunded', updated_at = now() WHERE id = $1 AND status IN ('paid', 'refund_pending') AND payment_id = $2`,
		orderID, paymentID)
	if err != nil || tag.RowsAffected() == 0 {
		return false, err
	}
	if _, err = t.tx.Exec(ctx, `UPDATE tickets SET void_at = now() WHERE order_id = $1 AND void_at IS NULL`, orderID); err != nil {
		return false, err
	}
	return true, t.refunded(ctx, orderID, eventID)
}

// Admission is the n-th (from 1) admission of an order item.
type Admission struct {
	ItemID int64
	N      int
}

// IssueTickets writes one ticket per seat and per GA place of an order,
// each with the code code gives its admission. Issuing twice makes no
// second ticket as long as codes are derived from the admission.
func (t Tx) IssueTickets(ctx context.Context, orderID, eventID int64, code func(Admission) string) error {
	rows, err := t.tx.Query(ctx, `SELECT id, quantity FROM order_items WHERE order_id = $1 ORDER BY id`, orderID)
	if err != nil {
		return err
	}
	var itemIDs []int64
	var codes []string
	var id int64
	var qty int
	if _, err := pgx.ForEachRow(rows, []any{&id, &qty}, func() error {
		for n := 1; n <= qty; n++ {
			itemIDs = append(itemIDs, id)
			codes = append(codes, code(Admission{id, n}))
		}
		return nil
	}); err != nil {
		return err
	}
	_, err = t.tx.Exec(ctx, `INSERT INTO tickets (order_id, event_id, order_item_id, code)
		SELECT $1, $2, * FROM unnest($3::bigint[], $4::text[]) ON CONFLICT (code) DO NOTHING`, orderID, eventID, itemIDs, codes)
	return err
}

// WebhookSeen tells whether a PSP event was applied already (a read before
// the provider is asked about it; RecordWebhook decides under races).
func (s *Store) WebhookSeen(ctx context.Context, id string) (bool, error) {
	var seen bool
	err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_events WHERE psp_event_id = $1)`, id).Scan(&seen)
	return seen, err
}
