package order

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/shared/shardstore"
)

// Fulfil works through every shard's outbox: confirmation emails for paid
// orders, refunds of charges the shop refused and cancellations of the
// payments of ended holds. Delivery is at least once; every handler is
// idempotent (PSP calls carry idempotency keys, the email is rewritten
// whole).
func (s *Service) Fulfil(ctx context.Context) (int, error) {
	done := 0
	var errs []error
	for _, id := range s.shards.IDs() {
		st, err := s.shards.Primary(id)
		if err != nil {
			return done, err
		}
		for {
			n := 0
			err := st.WithTx(ctx, func(tx shardstore.Tx) error {
				msgs, err := tx.Unprocessed(ctx, 20)
				if err != nil {
					return err
				}
				for _, m := range msgs {
					if err := s.handle(ctx, tx, m.Topic, m.Payload); err != nil {
						return fmt.Errorf("outbox %d (%s): %w", m.ID, m.Topic, err)
					}
					if err := tx.Processed(ctx, m.ID); err != nil {
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

func (s *Service) handle(ctx context.Context, tx shardstore.Tx, topic shardstore.Topic, payload []byte) error {
	var p struct {
		OrderID int64  `json:"order_id"`
		Payment string `json:"payment"`
		Amount  int64  `json:"amount"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return err
	}
	switch topic {
	case shardstore.TopicRefundRequested:
		err := s.callPSP(ctx, true, func() error {
			_, err := s.psp.Refund(ctx, p.Payment, p.Amount, "refund-"+p.Payment)
			return err
		})
		if errors.Is(err, psp.ErrRejected) {
			return nil // already refunded
		}
		return err
	case shardstore.TopicPaymentCancel:
		err := s.callPSP(ctx, true, func() error {
			_, err := s.psp.CancelPayment(ctx, p.Payment, "cancel-"+p.Payment)
			return err
		})
		if errors.Is(err, psp.ErrRejected) {
			return nil // paid or processing meanwhile: its webhook decides
		}
		return err
	case shardstore.TopicOrderPaid:
		o, err := load(ctx, tx, p.OrderID)
		if err != nil {
			return err
		}
		return s.email(ctx, o)
	}
	return nil
}

// email sends the confirmation with the tickets.
func (s *Service) email(ctx context.Context, o Order) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Order %d for event %d is paid: %d %s.\n\n", o.ID, o.EventID, o.TotalCents, o.Currency)
	for _, t := range o.Tickets {
		fmt.Fprintf(&b, "  %s\n", t.Label)
	}
	// No code in the mail: a mailed code is a copy. The ticket page shows
	// the live one.
	fmt.Fprintf(&b, "\nShow your tickets at the door from %s/tickets\nSee your order: %s/orders/%d\n", s.publicURL, s.publicURL, o.ID)
	to := ""
	if s.addresses != nil {
		var err error
		if to, err = s.addresses(ctx, o.UserID); err != nil {
			return err
		}
	}
	return s.mailer.Send(ctx, Mail{Key: fmt.Sprintf("order-%d", o.ID), To: to, Subject: fmt.Sprintf("Your tickets — order %d", o.ID), Body: b.String()})
}

// Mail is one message; Key names it, so a resend replaces rather than adds.
type Mail struct {
	Key, To, Subject, Body string
}

// Mailer sends confirmation emails: FolderMailer locally, an SES sender in AWS.
type Mailer interface {
	Send(ctx context.Context, m Mail) error
}

// FolderMailer writes each mail to Dir/<key>.txt (the local mailbox).
type FolderMailer struct{ Dir string }

// Send implements Mailer.
func (f FolderMailer) Send(_ context.Context, m Mail) error {
	if err := os.MkdirAll(f.Dir, 0o755); err != nil {
		return err
	}
	text := "To: " + m.To + "\nSubject: " + m.Subject + "\n\n" + m.Body
	return os.WriteFile(filepath.Join(f.Dir, m.Key+".txt"), []byte(text), 0o644)
}

// LogMailer only logs that a mail would be sent.
type LogMailer struct{ Log *slog.Logger }

// Send implements Mailer.
func (l LogMailer) Send(_ context.Context, m Mail) error {
	l.Log.Info("mail", "key", m.Key, "to", m.To, "subject", m.Subject)
	return nil
}
