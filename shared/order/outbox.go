package order

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/catraca/catraca/shared/psp"
)

// Fulfil works through every shard's outbox: confirmation emails for paid
// orders and refunds for payments that lost their hold. Delivery is at
// least once; both handlers are idempotent (the refund has an idempotency
// key, the email is rewritten whole).
func (s *Service) Fulfil(ctx context.Context) (int, error) {
	done := 0
	var errs []error
	for _, id := range s.shards.IDs() {
		pool, err := s.shards.Pool(id)
		if err != nil {
			return done, err
		}
		for {
			n := 0
			err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				rows, err := tx.Query(ctx, `SELECT id, topic, payload FROM outbox WHERE processed_at IS NULL
					ORDER BY id LIMIT 20 FOR UPDATE SKIP LOCKED`)
				if err != nil {
					return err
				}
				type msg struct {
					id      int64
					topic   string
					payload []byte
				}
				msgs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (msg, error) {
					var m msg
					return m, r.Scan(&m.id, &m.topic, &m.payload)
				})
				if err != nil {
					return err
				}
				for _, m := range msgs {
					if err := s.handle(ctx, tx, m.topic, m.payload); err != nil {
						return fmt.Errorf("outbox %d (%s): %w", m.id, m.topic, err)
					}
					if _, err := tx.Exec(ctx, `UPDATE outbox SET processed_at = now() WHERE id = $1`, m.id); err != nil {
						return err
					}
					n++
				}
				return nil
			})
			done += n
			if err != nil {
				errs = append(errs, err)
				break
			}
			if n == 0 {
				break
			}
		}
	}
	return done, errors.Join(errs...)
}

func (s *Service) handle(ctx context.Context, tx pgx.Tx, topic string, payload []byte) error {
	var p struct {
		OrderID int64  `json:"order_id"`
		Payment string `json:"payment"`
		Amount  int64  `json:"amount"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return err
	}
	switch topic {
	case "refund.requested":
		err := s.callPSP(ctx, true, func() error {
			_, err := s.psp.Refund(ctx, p.Payment, p.Amount, "refund-"+p.Payment)
			return err
		})
		if errors.Is(err, psp.ErrRejected) {
			return nil // already refunded
		}
		return err
	case "order.paid":
		o, err := load(ctx, tx, p.OrderID)
		if err != nil {
			return err
		}
		return s.email(o)
	}
	return nil
}

// email writes the confirmation to the local mailbox folder (an SES sender
// takes this place in AWS).
func (s *Service) email(o Order) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Subject: Your tickets — order %d\n\nOrder %d for event %d is paid: %d %s.\n\n",
		o.ID, o.ID, o.EventID, o.TotalCents, o.Currency)
	for _, t := range o.Tickets {
		fmt.Fprintf(&b, "  %s  %s\n  QR: %s%s\n", t.Code, t.Label, s.publicURL, t.QR)
	}
	fmt.Fprintf(&b, "\nSee your order: %s/orders.html?id=%d\n", s.publicURL, o.ID)
	if s.mailbox == "" {
		s.log.Info("confirmation email", "order", o.ID, "tickets", len(o.Tickets))
		return nil
	}
	if err := os.MkdirAll(s.mailbox, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.mailbox, fmt.Sprintf("order-%d.txt", o.ID)), []byte(b.String()), 0o644)
}
