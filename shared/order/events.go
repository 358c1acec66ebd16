package order

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/psp"
)

// rank orders payment statuses: an event never moves a payment back.
var rank = map[string]int{"queued": 0, "requires_action": 1, "processing": 2, "failed": 3, "succeeded": 4, "refunded": 5}

type sale struct {
	eventID, account int64
	seats            []int
}

// HandleEvent applies one PSP event, exactly once: the event id is recorded
// in the same transaction as its effects, so duplicates and retries are
// no-ops. Unknown orders are acknowledged (nothing to do) and logged.
func (s *Service) HandleEvent(ctx context.Context, ev psp.Event) error {
	pool, err := s.shards.ForRow(ev.Payment.OrderID)
	if err != nil {
		s.log.Warn("psp event for an unknown shard", "event", ev.ID, "order", ev.Payment.OrderID)
		return nil
	}
	var sold *sale
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO webhook_events (psp_event_id, type) VALUES ($1, $2) ON CONFLICT DO NOTHING`, ev.ID, ev.Type)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return nil // already applied
		}
		var o struct {
			status          string
			user, hold, evt int64
		}
		err = tx.QueryRow(ctx, `SELECT status, user_id, hold_id, event_id FROM orders WHERE id = $1 FOR NO KEY UPDATE`,
			ev.Payment.OrderID).Scan(&o.status, &o.user, &o.hold, &o.evt)
		if errors.Is(err, pgx.ErrNoRows) {
			s.log.Warn("psp event for an unknown order", "event", ev.ID, "order", ev.Payment.OrderID)
			return nil
		}
		if err != nil {
			return err
		}
		// The payment row, created at checkout; recreated if we lost it.
		var payID int64
		var payStatus string
		err = tx.QueryRow(ctx, `SELECT id, status FROM payments WHERE idempotency_key = $1 FOR NO KEY UPDATE`, ev.Payment.Reference).
			Scan(&payID, &payStatus)
		if errors.Is(err, pgx.ErrNoRows) {
			err = tx.QueryRow(ctx, `INSERT INTO payments (order_id, idempotency_key, status, amount_cents, currency)
				VALUES ($1, $2, 'requires_action', $3, $4) RETURNING id, status`,
				ev.Payment.OrderID, ev.Payment.Reference, ev.Payment.Amount, ev.Payment.Currency).Scan(&payID, &payStatus)
		}
		if err != nil {
			return err
		}
		setPayment := func(status, failure string) error {
			if rank[status] <= rank[payStatus] {
				return nil // late or out of order: never backwards
			}
			_, err := tx.Exec(ctx, `UPDATE payments SET status = $2, failure = nullif($3, ''), psp_payment_id = coalesce(psp_payment_id, $4),
				updated_at = now() WHERE id = $1`, payID, status, failure, ev.Payment.ID)
			return err
		}
		switch ev.Type {
		case psp.EventProcessing:
			return setPayment("processing", "")
		case psp.EventFailed:
			// The order stays payable while its hold lasts: the fan retries.
			return setPayment("failed", ev.Payment.Failure)
		case psp.EventRefunded:
			return setPayment("refunded", "")
		case psp.EventSucceeded:
		default:
			return nil
		}
		if payStatus == "succeeded" || payStatus == "refunded" {
			return nil
		}
		if err := setPayment("succeeded", ""); err != nil {
			return err
		}
		if o.status == "paid" || o.status == "refunded" {
			// A second successful charge for one order: give it back.
			return requestRefund(ctx, tx, ev.Payment, "duplicate charge")
		}
		ok, seats, err := inventory.Sell(ctx, tx, o.hold, ev.Payment.OrderID)
		if err != nil {
			return err
		}
		if !ok {
			// Paid after the hold was lost and the seats went to someone
			// else: refund automatically.
			if _, err := tx.Exec(ctx, `UPDATE orders SET status = 'refunded', updated_at = now() WHERE id = $1`, ev.Payment.OrderID); err != nil {
				return err
			}
			return requestRefund(ctx, tx, ev.Payment, "hold lost")
		}
		if _, err := tx.Exec(ctx, `UPDATE orders SET status = 'paid', paid_at = now(), updated_at = now() WHERE id = $1`, ev.Payment.OrderID); err != nil {
			return err
		}
		if err := s.issueTickets(ctx, tx, ev.Payment.OrderID, o.evt); err != nil {
			return err
		}
		payload, _ := json.Marshal(map[string]any{"order_id": ev.Payment.OrderID, "event_id": o.evt, "account": o.user})
		if _, err := tx.Exec(ctx, `INSERT INTO outbox (topic, payload) VALUES ('order.paid', $1)`, payload); err != nil {
			return err
		}
		sold = &sale{eventID: o.evt, account: o.user, seats: seats}
		return nil
	})
	if err != nil {
		return fmt.Errorf("apply psp event %s: %w", ev.ID, err)
	}
	if sold != nil && s.Paid != nil {
		s.Paid(sold.eventID, sold.account, sold.seats)
	}
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
// undone is applied now; everything else is a recorded duplicate.
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
	for _, ev := range events {
		if err := s.HandleEvent(ctx, ev); err != nil {
			return 0, err
		}
	}
	return len(events), nil
}
