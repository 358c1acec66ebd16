package order

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/metrics"
	"github.com/catraca/catraca/shared/psp"
)

// rank orders payment statuses: an event never moves a payment back.
var rank = map[string]int{"queued": 0, "requires_action": 1, "processing": 2, "failed": 3, "canceled": 3, "succeeded": 4, "refunded": 5}

type sale struct {
	eventID, account int64
	seats            []int
}

// refusal is a charge the shop gives back, said once the transaction that
// asked for its refund has committed.
type refusal struct {
	reason string
	metric string
}

// outcome is what applying one event did, for after the commit.
type outcome struct {
	sold    *sale
	refused *refusal
}

// HandleEvent applies one PSP event, exactly once: the event id is recorded
// in the same transaction as its effects, so duplicates and retries are
// no-ops. A charge is kept only when it is one of our payments, for its
// order's total in its currency, and the order can still take its places;
// any other charge — unknown reference, wrong amount, an ended hold that
// cannot be re-taken — is acknowledged and refunded, never an error.
func (s *Service) HandleEvent(ctx context.Context, ev psp.Event) error {
	pool, err := s.shards.ForRow(ev.Payment.OrderID)
	if err != nil {
		// Not one of our order ids: record it on any shard, so its money
		// still goes back through that shard's outbox.
		if pool, err = s.shards.Pool(s.shards.IDs()[0]); err != nil {
			return err
		}
	}
	var out outcome
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		out = outcome{}
		tag, err := tx.Exec(ctx, `INSERT INTO webhook_events (psp_event_id, type) VALUES ($1, $2) ON CONFLICT DO NOTHING`, ev.ID, ev.Type)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return nil // already applied
		}
		switch ev.Type {
		case psp.EventSucceeded:
			return s.charged(ctx, tx, ev.Payment, &out)
		case psp.EventRefunded, psp.EventDisputed:
			return s.moneyBack(ctx, tx, ev)
		case psp.EventProcessing:
			return progress(ctx, tx, ev.Payment, "processing")
		case psp.EventFailed:
			// The order stays payable while its hold lasts: the fan retries.
			return progress(ctx, tx, ev.Payment, "failed")
		case psp.EventCanceled:
			return progress(ctx, tx, ev.Payment, "canceled")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("apply psp event %s: %w", ev.ID, err)
	}
	if r := out.refused; r != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "charge refused and refunded", append([]slog.Attr{
			slog.String("event", ev.ID), slog.String("payment", ev.Payment.ID), slog.Int64("order", ev.Payment.OrderID),
			slog.Int64("amount", ev.Payment.Amount), slog.String("currency", ev.Payment.Currency), slog.String("reason", r.reason),
		}, metrics.Attrs(map[string]float64{r.metric: 1})...)...)
	}
	if out.sold != nil && s.Paid != nil {
		s.Paid(out.sold.eventID, out.sold.account, out.sold.seats)
	}
	return nil
}

// paymentRow is our record of one payment attempt.
type paymentRow struct {
	id, order        int64
	status, currency string
	amount           int64
	pspID            *string
}

// findPayment locks our payment row for a PSP payment: the reference must
// be the row's key, and the PSP id the row's (or the row has none yet, and
// no other row has it). found is false for money that is not ours.
func findPayment(ctx context.Context, tx pgx.Tx, p psp.Payment) (row paymentRow, found bool, err error) {
	err = tx.QueryRow(ctx, `
		SELECT id, order_id, status, amount_cents, currency, psp_payment_id FROM payments
		WHERE idempotency_key = $2
		  AND (psp_payment_id = $1 OR (psp_payment_id IS NULL AND NOT EXISTS (SELECT 1 FROM payments WHERE psp_payment_id = $1)))
		FOR NO KEY UPDATE`, p.ID, p.Reference).
		Scan(&row.id, &row.order, &row.status, &row.amount, &row.currency, &row.pspID)
	if errors.Is(err, pgx.ErrNoRows) {
		return paymentRow{}, false, nil
	}
	return row, err == nil && row.order == p.OrderID, err
}

// setPayment moves a payment forward (never back) and records the PSP's id.
func setPayment(ctx context.Context, tx pgx.Tx, row paymentRow, p psp.Payment, status, failure string) error {
	if rank[status] <= rank[row.status] {
		return nil // late or out of order
	}
	_, err := tx.Exec(ctx, `UPDATE payments SET status = $2, failure = nullif($3, ''), psp_payment_id = coalesce(psp_payment_id, $4),
		updated_at = now() WHERE id = $1`, row.id, status, failure, p.ID)
	return err
}

// progress applies a payment event that moves no money.
func progress(ctx context.Context, tx pgx.Tx, p psp.Payment, status string) error {
	row, found, err := findPayment(ctx, tx, p)
	if err != nil || !found {
		return err
	}
	return setPayment(ctx, tx, row, p, status, p.Failure)
}

// orderRow is what a charge is checked against.
type orderRow struct {
	id, user, event, hold int64
	tickets               int
	status, currency      string
	total                 int64
}

// charged applies a successful charge.
func (s *Service) charged(ctx context.Context, tx pgx.Tx, p psp.Payment, out *outcome) error {
	refuse := func(reason, metric string) error {
		out.refused = &refusal{reason: reason, metric: metric}
		return requestRefund(ctx, tx, p, reason)
	}
	var o orderRow
	err := tx.QueryRow(ctx, `SELECT id, user_id, event_id, hold_id, ticket_count FROM orders WHERE id = $1`, p.OrderID).
		Scan(&o.id, &o.user, &o.event, &o.hold, &o.tickets)
	if errors.Is(err, pgx.ErrNoRows) {
		return refuse("no such order", metrics.PaymentMismatches)
	}
	if err != nil {
		return err
	}
	// The account's limit lock first, then hold, order and payment rows:
	// the order in which holds and releases take them.
	if _, err := tx.Exec(ctx, inventory.LimitLock, inventory.LimitLockKey(o.user, o.event)); err != nil {
		return err
	}
	var holdLive bool
	if err := tx.QueryRow(ctx, `SELECT status = 'active' AND expires_at > now() FROM holds WHERE id = $1 FOR NO KEY UPDATE`, o.hold).
		Scan(&holdLive); err != nil {
		return err
	}
	if err := tx.QueryRow(ctx, `SELECT status, total_cents, currency FROM orders WHERE id = $1 FOR NO KEY UPDATE`, o.id).
		Scan(&o.status, &o.total, &o.currency); err != nil {
		return err
	}
	row, found, err := findPayment(ctx, tx, p)
	if err != nil {
		return err
	}
	if !found {
		return refuse("the payment reference is not one of this order's payments", metrics.PaymentMismatches)
	}
	if row.status == "succeeded" || row.status == "refunded" {
		return nil // this charge was applied (or given back) already
	}
	if p.Amount != o.total || p.Amount != row.amount || !strings.EqualFold(p.Currency, o.currency) || !strings.EqualFold(p.Currency, row.currency) {
		reason := fmt.Sprintf("charged %d %s for an order of %d %s", p.Amount, p.Currency, o.total, o.currency)
		if row.pspID != nil {
			// Our own attempt was charged wrongly: it failed, the fan may
			// check out again. A foreign charge leaves the attempt alone.
			if err := setPayment(ctx, tx, row, p, "failed", reason); err != nil {
				return err
			}
		}
		return refuse(reason, metrics.PaymentMismatches)
	}
	if err := setPayment(ctx, tx, row, p, "succeeded", ""); err != nil {
		return err
	}
	if o.status == "paid" || o.status == "refunded" {
		return refuse("duplicate charge", metrics.ChargesRefunded)
	}
	giveBack := func(reason string) error {
		if _, err := tx.Exec(ctx, `UPDATE orders SET status = 'refunded', updated_at = now() WHERE id = $1`, o.id); err != nil {
			return err
		}
		return refuse(reason, metrics.ChargesRefunded)
	}
	if !holdLive {
		// Paid after the hold ended (released, expired, or expiring now):
		// the places are taken again only as a new hold would take them.
		reason, err := s.retakeRefusal(ctx, tx, o)
		if err != nil {
			return err
		}
		if reason != "" {
			return giveBack(reason)
		}
	}
	ok, seats, err := inventory.Sell(ctx, tx, o.hold, o.id)
	if err != nil {
		return err
	}
	if !ok {
		return giveBack("hold lost: its places went to someone else")
	}
	if _, err := tx.Exec(ctx, `UPDATE orders SET status = 'paid', paid_at = now(), payment_id = $2, updated_at = now() WHERE id = $1`,
		o.id, row.id); err != nil {
		return err
	}
	if err := s.issueTickets(ctx, tx, o.id, o.event); err != nil {
		return err
	}
	payload, _ := json.Marshal(map[string]any{"order_id": o.id, "event_id": o.event, "account": o.user})
	if _, err := tx.Exec(ctx, `INSERT INTO outbox (topic, payload) VALUES ('order.paid', $1)`, payload); err != nil {
		return err
	}
	out.sold = &sale{eventID: o.event, account: o.user, seats: seats}
	return nil
}

// ticketsKept counts the tickets account $1 has or holds on event $2
// besides order $3, as the hold path's limit check counts them: paid
// orders and pending ones whose hold is live.
const ticketsKept = `SELECT coalesce(sum(o.ticket_count), 0) FROM orders o JOIN holds h ON h.id = o.hold_id
	WHERE o.user_id = $1 AND o.event_id = $2 AND o.id <> $3
	  AND (o.status = 'paid' OR (o.status = 'pending' AND h.status = 'active' AND h.expires_at > now()))`

// retakeRefusal tells why an order whose hold ended may not take its places
// again, or "" when it may: the sale must be open, the event must have no
// waiting room (a payment carries no admission) and the account must stay
// within its limit, counted under the limit lock the caller holds.
func (s *Service) retakeRefusal(ctx context.Context, tx pgx.Tx, o orderRow) (string, error) {
	e, err := s.events(ctx, o.event)
	if err != nil {
		return "", err
	}
	switch {
	case !e.OnSale(time.Now()):
		return "the hold ended and sales are closed", nil
	case e.WaitingRoom.Enabled:
		return "the hold ended and this event sells only to fans admitted from its waiting room", nil
	}
	var kept int
	if err := tx.QueryRow(ctx, ticketsKept, o.user, o.event, o.id).Scan(&kept); err != nil {
		return "", err
	}
	if kept+o.tickets > e.MaxPerAccount {
		return fmt.Sprintf("the hold ended and the account has %d of %d tickets for this event", kept, e.MaxPerAccount), nil
	}
	return "", nil
}

// moneyBack applies a refund or dispute made at the PSP: if that payment
// paid its order, the order is refunded and its tickets void. Refunds of
// charges the shop refused change no order.
func (s *Service) moneyBack(ctx context.Context, tx pgx.Tx, ev psp.Event) error {
	row, found, err := findPayment(ctx, tx, ev.Payment)
	if err != nil || !found {
		return err
	}
	if err := setPayment(ctx, tx, row, ev.Payment, "refunded", ""); err != nil {
		return err
	}
	tag, err := tx.Exec(ctx, `UPDATE orders SET status = 'refunded', updated_at = now() WHERE id = $1 AND status = 'paid' AND payment_id = $2`,
		row.order, row.id)
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE tickets SET void_at = now() WHERE order_id = $1 AND void_at IS NULL`, row.order); err != nil {
		return err
	}
	s.log.Info("order refunded at the PSP", "order", row.order, "payment", ev.Payment.ID, "event", ev.Type)
	return nil
}

func requestRefund(ctx context.Context, tx pgx.Tx, p psp.Payment, reason string) error {
	payload, _ := json.Marshal(map[string]any{"order_id": p.OrderID, "payment": p.ID, "amount": p.Amount, "reason": reason})
	_, err := tx.Exec(ctx, `INSERT INTO outbox (topic, payload) VALUES ('refund.requested', $1)`, payload)
	return err
}

// issueTickets writes one ticket per seat and per GA place. Codes are
// derived from the order item, so issuing twice cannot make two tickets.
func (s *Service) issueTickets(ctx context.Context, tx pgx.Tx, orderID, eventID int64) error {
	rows, err := tx.Query(ctx, `SELECT id, quantity FROM order_items WHERE order_id = $1 ORDER BY id`, orderID)
	if err != nil {
		return err
	}
	type item struct {
		id  int64
		qty int
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (item, error) {
		var it item
		return it, r.Scan(&it.id, &it.qty)
	})
	if err != nil {
		return err
	}
	var itemIDs []int64
	var codes []string
	for _, it := range items {
		for n := 1; n <= it.qty; n++ {
			itemIDs = append(itemIDs, it.id)
			codes = append(codes, s.tickets.Code(orderID, it.id, n))
		}
	}
	_, err = tx.Exec(ctx, `INSERT INTO tickets (order_id, event_id, order_item_id, code)
		SELECT $1, $2, * FROM unnest($3::bigint[], $4::text[]) ON CONFLICT (code) DO NOTHING`, orderID, eventID, itemIDs, codes)
	return err
}

// Reconcile replays the PSP's recent events: whatever a lost webhook left
// undone is applied now; everything else is a recorded duplicate. An event
// that fails is skipped (the next run retries it), so it never holds back
// the events after it; the errors are returned together.
func (s *Service) Reconcile(ctx context.Context, since time.Time) (int, error) {
	var events []psp.Event
	err := s.callPSP(ctx, true, func() error {
		var err error
		events, err = s.psp.Events(ctx, since)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("reconcile: %w", err)
	}
	slices.SortFunc(events, func(a, b psp.Event) int { return a.Created.Compare(b.Created) })
	var errs []error
	for _, ev := range events {
		if err := s.HandleEvent(ctx, ev); err != nil {
			errs = append(errs, err)
		}
	}
	return len(events), errors.Join(errs...)
}
