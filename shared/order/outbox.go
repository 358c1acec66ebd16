package order

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/catalogstore"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/metrics"
	"github.com/catraca/catraca/shared/outbox"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/shared/shardstore"
)

// Fulfil works through every shard's outbox: confirmation emails for paid
// orders, refunds (of charges the shop refused, of cancelled events) and
// cancellations of the payments of ended holds; and through the catalog's:
// copies of organizers' status changes to the events' shards, and the
// messages of Config.CatalogTopics (a drawn presale's mail). Delivery is
// at least once; every handler is idempotent (PSP calls carry idempotency
// keys, the email is rewritten whole, a status copy is versioned). A
// message whose handler fails is tried again later, backing off, without
// holding back the others; a refund the PSP has not answered after its
// tries is failed, any other message out of tries is set aside for an
// operator (later).
func (s *Service) Fulfil(ctx context.Context) (int, error) {
	done := 0
	var errs []error
	for _, id := range s.shards.IDs() {
		st, err := s.shards.Primary(id)
		if err != nil {
			return done, err
		}
		n, err := drain(ctx, st.WithTx, s.handle, func(tx shardstore.Tx, m outbox.Message, cause error) error {
			return s.later(ctx, tx, id, m, cause)
		})
		done, errs = done+n, append(errs, err)
	}
	if s.catalog != nil {
		n, err := drain(ctx, s.catalog.WithTx, func(ctx context.Context, tx catalogstore.OutboxTx, m outbox.Message) error {
			if m.Topic == catalogstore.TopicEventStatus {
				return s.copyStatus(ctx, m.Payload)
			}
			if h := s.catalogTopics[m.Topic]; h != nil {
				return h(ctx, tx.DB(), m.Payload)
			}
			return fmt.Errorf("no handler of the catalog outbox's topic %q", m.Topic)
		}, func(tx catalogstore.OutboxTx, m outbox.Message, cause error) error {
			return s.retry(ctx, tx, catalogOutbox, m, cause)
		})
		done, errs = done+n, append(errs, err)
	}
	return done, errors.Join(errs...)
}

// outboxTx is a transaction on an outbox, a shard's or the catalog's.
type outboxTx[T any] interface {
	retrier
	Unprocessed(ctx context.Context, limit int) ([]outbox.Message, error)
	Processed(ctx context.Context, id int64) error
	Try(ctx context.Context, fn func(sp T) error) error
}

// retrier records a failed try of a message.
type retrier interface {
	Failed(ctx context.Context, id int64, cause string, wait time.Duration) error
	Dead(ctx context.Context, id int64, cause string) error
}

// drain handles an outbox's due messages, twenty per transaction, each in
// a savepoint: a failed one is handed to later and the others go on.
func drain[T outboxTx[T]](ctx context.Context, withTx func(context.Context, func(T) error) error,
	handle func(context.Context, T, outbox.Message) error, later func(T, outbox.Message, error) error) (int, error) {
	done := 0
	var errs []error
	for {
		var msgs []outbox.Message
		var failed []error
		n := 0
		err := withTx(ctx, func(tx T) error {
			n, failed = 0, nil
			var err error
			if msgs, err = tx.Unprocessed(ctx, 20); err != nil {
				return err
			}
			for _, m := range msgs {
				if err := tx.Try(ctx, func(sp T) error { return handle(ctx, sp, m) }); err != nil {
					failed = append(failed, fmt.Errorf("outbox %d (%s): %w", m.ID, m.Topic, err))
					if err := later(tx, m, err); err != nil {
						return err
					}
					continue
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
			return done, errors.Join(append(errs, err)...)
		}
		errs = append(errs, failed...)
		if len(msgs) == 0 {
			return done, errors.Join(errs...)
		}
	}
}

// catalogOutbox names the catalog's outbox among the shards' (ids from 1)
// in logs.
const catalogOutbox = 0

// Default tries of the outbox worker (Config.OutboxTries, RefundTries).
const (
	// DefaultOutboxTries is how many times a mail or a payment cancel is
	// tried (about fourteen minutes of backoff) before it is set aside.
	DefaultOutboxTries = 20
	// DefaultRefundTries is how many times the PSP is asked for a refund
	// that gets no answer (about four minutes of backoff, plus the calls'
	// timeouts) before the refund has failed.
	DefaultRefundTries = 10
)

// later records a failed try of a message: tried again after a backoff
// (one second, doubling, at most a minute), except a refund out of tries,
// which has failed, and another message out of tries, which is set aside
// (dead) for an operator: alarmed on (OutboxDead), counted by /healthz.
func (s *Service) later(ctx context.Context, tx shardstore.Tx, shardID int, m outbox.Message, cause error) error {
	tries := m.Attempts + 1
	if m.Topic == shardstore.TopicRefundRequested {
		if tries < s.refundTries {
			return tx.Failed(ctx, m.ID, cause.Error(), backoff(tries))
		}
		var p refundRequest
		if err := json.Unmarshal(m.Payload, &p); err != nil {
			return err
		}
		attempt, err := tx.NextRefundAttempt(ctx, p.OrderID, p.Payment, nil)
		if err != nil {
			return err
		}
		if err := s.refundFailed(ctx, tx, p, attempt, shardstore.RefundUnanswered, fmt.Sprintf("no answer from the payment provider after %d tries: %v", tries, cause)); err != nil {
			return err
		}
		return tx.Processed(ctx, m.ID)
	}
	return s.retry(ctx, tx, shardID, m, cause)
}

// retry records a failed try of a message that is not a refund: tried
// again after a backoff, or set aside (dead) when out of tries.
func (s *Service) retry(ctx context.Context, tx retrier, shardID int, m outbox.Message, cause error) error {
	tries := m.Attempts + 1
	if tries >= s.outboxTries {
		if err := tx.Dead(ctx, m.ID, cause.Error()); err != nil {
			return err
		}
		s.log.LogAttrs(ctx, slog.LevelError, "outbox message dead", append([]slog.Attr{
			slog.Int("shard", shardID), slog.Int64("message", m.ID), slog.String("topic", string(m.Topic)),
			slog.Int("tries", tries), slog.String("err", cause.Error()),
		}, metrics.Attrs(map[string]float64{metrics.OutboxDead: 1})...)...)
		return nil
	}
	return tx.Failed(ctx, m.ID, cause.Error(), backoff(tries))
}

// backoff is the wait before try tries+1: one second, doubling, at most a
// minute.
func backoff(tries int) time.Duration { return min(time.Second<<min(tries-1, 6), time.Minute) }

// DeadMessages counts the outbox messages set aside on every shard and in
// the catalog.
func (s *Service) DeadMessages(ctx context.Context) (int, error) {
	total := 0
	for _, id := range s.shards.IDs() {
		st, err := s.shards.Primary(id)
		if err != nil {
			return 0, err
		}
		n, err := st.DeadMessages(ctx)
		if err != nil {
			return 0, fmt.Errorf("dead outbox messages of shard %d: %w", id, err)
		}
		total += n
	}
	if s.catalog != nil {
		n, err := s.catalog.DeadMessages(ctx)
		if err != nil {
			return 0, fmt.Errorf("dead outbox messages of the catalog: %w", err)
		}
		total += n
	}
	return total, nil
}

// refundRequest is a refund.requested message: Try numbers the requests of
// a cancellation refund (0 for the refund of a refused charge), for its
// progress; the idempotency key comes from the order's refund attempts
// (NextRefundAttempt), as the console's does.
type refundRequest struct {
	OrderID int64  `json:"order_id"`
	Payment string `json:"payment"`
	Intent  string `json:"intent,omitempty"` // the PaymentIntent, when the message knows it
	Amount  int64  `json:"amount"`
	Try     int    `json:"try"`
}

func (s *Service) handle(ctx context.Context, tx shardstore.Tx, m outbox.Message) error {
	var p refundRequest
	if err := json.Unmarshal(m.Payload, &p); err != nil {
		return err
	}
	switch m.Topic {
	case shardstore.TopicRefundRequested:
		return s.refund(ctx, tx, p)
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

// copyStatus copies an organizer's status change from the catalog's
// outbox to the event's shard.
func (s *Service) copyStatus(ctx context.Context, payload []byte) error {
	var c event.StatusCopy
	if err := json.Unmarshal(payload, &c); err != nil {
		return err
	}
	st, err := s.shards.Primary(c.Shard)
	if err != nil {
		return err
	}
	return st.CopyStatus(ctx, shardstore.StatusCopy(c))
}

// refund asks the PSP to give a payment back, under the key of the
// payment's next refund attempt, and records what it said; its webhook
// then refunds the order. A refusal is the refund's outcome, not an error
// to retry: unless the money went back already (refunded or disputed at
// the PSP), the refund has failed. No answer is an error: retried under
// the same key.
func (s *Service) refund(ctx context.Context, tx shardstore.Tx, p refundRequest) error {
	attempt, err := tx.NextRefundAttempt(ctx, p.OrderID, p.Payment, nil)
	if err != nil {
		return err
	}
	r, err := s.refundAtPSP(ctx, p.Payment, p.Intent, p.Amount, refundKey(p.Payment, attempt), false)
	switch {
	case err == nil:
		a := shardstore.RefundAttempt{OrderID: p.OrderID, Payment: p.Payment, Attempt: attempt, Status: shardstore.RefundPending, PSPRefundID: r.ID,
			Amount: p.Amount}
		if r.Status == psp.StatusSucceeded {
			a.Status = shardstore.RefundSucceeded
		}
		return tx.RecordRefund(ctx, a)
	case !errors.Is(err, psp.ErrRejected):
		return err
	}
	back, gerr := s.givenBack(ctx, p.Payment)
	if gerr != nil || back {
		return gerr
	}
	return s.refundFailed(ctx, tx, p, attempt, shardstore.RefundRefused, err.Error())
}

// refundAtPSP refunds a payment's PaymentIntent, reading it from the
// payment (a Checkout Session) first when the caller does not know it:
// each call spends from the quota (spent is set when the caller took the
// first call's token already).
func (s *Service) refundAtPSP(ctx context.Context, payment, intent string, amount int64, key string, spent bool) (psp.Refund, error) {
	if intent == "" {
		read := s.callPSP
		if spent {
			read = func(ctx context.Context, _ bool, call func() error) error { return s.call(ctx, call) }
		}
		err := read(ctx, true, func() error {
			p, err := s.psp.GetPayment(ctx, payment)
			intent = p.Intent
			return err
		})
		if err != nil {
			return psp.Refund{}, err
		}
		if intent == "" {
			return psp.Refund{}, fmt.Errorf("%w: payment %s was never charged", psp.ErrRejected, payment)
		}
	}
	var r psp.Refund
	err := s.callPSP(ctx, true, func() error {
		var err error
		r, err = s.psp.Refund(ctx, intent, amount, key)
		return err
	})
	return r, err
}

// refundKey is the PSP idempotency key of a payment's attempt-th refund
// attempt (NextRefundAttempt): the same for every asker until the PSP
// refuses or fails one (so the console's and the outbox's refund it once,
// and a call whose answer was lost is asked again under its key), a new
// one after (the PSP would replay the refusal under the old one). A new
// key cannot refund twice: the PSP refuses to refund a payment given back
// already.
func refundKey(payment string, try int) string {
	if try <= 1 {
		return "refund-" + payment
	}
	return "refund-" + payment + "-" + strconv.Itoa(try)
}

// givenBack tells whether the PSP has given a payment's money back (a
// refund, perhaps one whose answer was lost, or a dispute).
func (s *Service) givenBack(ctx context.Context, payment string) (bool, error) {
	p, err := s.psp.GetPayment(ctx, payment)
	return err == nil && (p.Refunded || p.Disputed), err
}

// refundFailed records a failed refund among the order's refund attempts
// (the organizer's refund failures) and on the cancellation refund it was
// (the event's refund progress; cancelling again asks again), and sets it
// aside: logged and counted.
func (s *Service) refundFailed(ctx context.Context, tx shardstore.Tx, p refundRequest, attempt int, status shardstore.RefundStatus, why string) error {
	if _, err := tx.RefundFailed(ctx, p.OrderID, p.Try, why); err != nil {
		return err
	}
	a := shardstore.RefundAttempt{OrderID: p.OrderID, Payment: p.Payment, Attempt: attempt, Status: status, Failure: why, Amount: p.Amount}
	if err := tx.RecordRefund(ctx, a); err != nil {
		return err
	}
	s.refundSetAside(ctx, a)
	return nil
}

// refundSetAside logs a refund the PSP refused or never answered, money
// still owed: counted (RefundsFailed), alarmed on.
func (s *Service) refundSetAside(ctx context.Context, a shardstore.RefundAttempt) {
	s.log.LogAttrs(ctx, slog.LevelError, "refund failed", append([]slog.Attr{
		slog.Int64("order", a.OrderID), slog.String("payment", a.Payment), slog.Int("attempt", max(a.Attempt, 1)),
		slog.String("status", string(a.Status)), slog.String("why", a.Failure),
	}, metrics.Attrs(map[string]float64{metrics.RefundsFailed: 1})...)...)
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
