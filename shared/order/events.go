package order

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/metrics"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/shared/shardstore"
)

// rank orders payment states: an event never moves a payment back.
var rank = map[shardstore.PaymentStatus]int{
	shardstore.PaymentQueued: 0, shardstore.PaymentRequiresAction: 1, shardstore.PaymentProcessing: 2,
	shardstore.PaymentFailed: 3, shardstore.PaymentCanceled: 3, shardstore.PaymentSucceeded: 4, shardstore.PaymentRefunded: 5,
}

type sale struct {
	eventID, account, order int64
	card                    string
	seats                   []int
}

// refusal is a charge the shop gives back, said once the transaction that
// asked for its refund has committed.
type refusal struct {
	reason string
	metric string
}

// outcome is what applying one event did, for after the commit.
type outcome struct {
	sold     *sale
	refused  *refusal
	freed    []shardstore.Freed     // places a refused payment's hold gave back
	declined *shardstore.PaymentRow // a decline to count
}

// HandleEvent applies one PSP event, exactly once: the event id is recorded
// in the same transaction as its effects, so duplicates and retries are
// no-ops. An event not seen before is first confirmed with the PSP (its
// payment read back: amount, currency and reference are never taken from
// the event alone). A charge is kept only when it is one of our payments,
// for its order's total in its currency, and the order can still take its
// places; any other charge — unknown reference, wrong amount, an ended hold
// that cannot be re-taken — is acknowledged and refunded, never an error.
func (s *Service) HandleEvent(ctx context.Context, ev psp.Event) error {
	if ev.Kind == "" {
		return nil // a type the shop ignores
	}
	if seen, err := s.seen(ctx, ev); err != nil || seen {
		return err
	}
	confirmed, err, _ := s.confirming.Do(ev.ID, func() (any, error) {
		s.confirmMu.Lock()
		defer s.confirmMu.Unlock()
		var got psp.Event
		if err := s.spend(ctx, true); err != nil {
			// Redis down must not refuse every payment until it is back
			// (holds expire meanwhile): a confirmation goes without the
			// quota then. Only confirmations: they follow the PSP's own
			// deliveries, paced by the PSP and one at a time (confirmMu).
			var busy *ErrPSPBusy
			if !errors.As(err, &busy) || !busy.Unknown {
				return nil, err
			}
			s.log.Warn("psp quota unknown: confirming without it", "event", ev.ID, "err", busy.Err)
		}
		err := s.call(ctx, func() error {
			var err error
			got, err = s.psp.Confirm(ctx, ev)
			return err
		})
		return got, err
	})
	if err != nil {
		return fmt.Errorf("confirm psp event %s: %w", ev.ID, err)
	}
	ev = confirmed.(psp.Event)
	if ev.Kind == "" {
		return nil
	}
	st, err := s.shards.OfRow(ev.Payment.OrderID)
	if err != nil {
		// Not one of our order ids: record it on any shard, so its money
		// still goes back through that shard's outbox.
		if st, err = s.shards.Primary(s.shards.IDs()[0]); err != nil {
			return err
		}
	}
	var out outcome
	err = st.WithTx(ctx, func(tx shardstore.Tx) error {
		out = outcome{}
		fresh, err := tx.RecordWebhook(ctx, ev.ID, ev.Type)
		if err != nil || !fresh {
			return err // !fresh: applied already
		}
		switch ev.Kind {
		case psp.KindSucceeded:
			return s.charged(ctx, tx, ev.Payment, &out)
		case psp.KindRefunded, psp.KindDisputed:
			return s.moneyBack(ctx, tx, ev)
		case psp.KindRefundFailed:
			return s.refundFailedAtPSP(ctx, tx, ev)
		case psp.KindRefundSucceeded:
			return s.refundSucceededAtPSP(ctx, tx, ev)
		case psp.KindProcessing:
			return s.processing(ctx, tx, ev.Payment)
		case psp.KindFailed:
			// The order stays payable while its hold lasts: the fan retries.
			// Every decline counts (card testing tries card after card on
			// one page), once: the event id is recorded. An expired Pix
			// code is no decline.
			declined, err := progress(ctx, tx, ev.Payment, shardstore.PaymentFailed)
			if ev.Payment.Failure != psp.FailureExpired {
				out.declined = declined
			}
			return err
		case psp.KindCanceled:
			_, err := progress(ctx, tx, ev.Payment, shardstore.PaymentCanceled)
			return err
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
	if out.declined != nil {
		s.countDecline(ctx, *out.declined)
	}
	if s.freed != nil {
		for _, f := range out.freed {
			s.freed(f)
		}
	}
	if out.sold != nil && s.paid != nil {
		s.paid(out.sold.eventID, out.sold.account, out.sold.seats)
	}
	if out.sold != nil {
		s.countPurchase(ctx, out.sold.account, out.sold.order, out.sold.card)
	}
	return nil
}

// seen tells whether an event was applied already, so a duplicate costs
// the PSP no call: on its order's shard when the event names one, else on
// every shard (a charge's refund or dispute names only its PaymentIntent).
func (s *Service) seen(ctx context.Context, ev psp.Event) (bool, error) {
	ids := s.shards.IDs()
	if st, err := s.shards.OfRow(ev.Payment.OrderID); err == nil {
		return st.WebhookSeen(ctx, ev.ID)
	}
	for _, id := range ids {
		st, err := s.shards.Primary(id)
		if err != nil {
			return false, err
		}
		if seen, err := st.WebhookSeen(ctx, ev.ID); err != nil || seen {
			return seen, err
		}
	}
	return false, nil
}

// findPayment locks our payment attempt for a PSP payment; found is false
// for money that is not ours (or not this order's).
func findPayment(ctx context.Context, tx shardstore.Tx, p psp.Payment) (row shardstore.PaymentRow, found bool, err error) {
	row, found, err = tx.LockPayment(ctx, p.ID, p.Reference)
	return row, found && row.OrderID == p.OrderID, err
}

// setPayment moves a payment forward (never back) and records the PSP's id.
func setPayment(ctx context.Context, tx shardstore.Tx, row shardstore.PaymentRow, p psp.Payment, status shardstore.PaymentStatus, failure string) error {
	if rank[status] <= rank[row.Status] {
		return nil // late or out of order
	}
	return tx.SetPayment(ctx, row.ID, status, failure, p.ID, p.Card)
}

// progress applies a payment event that moves no money.
func progress(ctx context.Context, tx shardstore.Tx, p psp.Payment, status shardstore.PaymentStatus) (*shardstore.PaymentRow, error) {
	row, found, err := findPayment(ctx, tx, p)
	if err != nil || !found {
		return nil, err
	}
	return &row, setPayment(ctx, tx, row, p, status, p.Failure)
}

// processing applies an asynchronous payment in progress (a Pix code
// shown, the fan paying from a bank app): a live hold waits for it exactly
// until the code expires (never past the hold's cap), so the sweeper
// releases it then and not before. Locked as a charge locks (limit lock,
// hold, order, then the payment), so it cannot deadlock with a release.
func (s *Service) processing(ctx context.Context, tx shardstore.Tx, p psp.Payment) error {
	o, found, err := tx.LockCharge(ctx, p.OrderID)
	if err != nil || !found {
		return err
	}
	row, err := progress(ctx, tx, p, shardstore.PaymentProcessing)
	if err != nil || row == nil || rank[row.Status] >= rank[shardstore.PaymentProcessing] || p.ExpiresAt.IsZero() || !o.HoldLive {
		return err // not ours, or late: the payment was past processing
	}
	e, err := s.events(ctx, o.EventID)
	if err != nil {
		return err
	}
	_, err = tx.WaitForPayment(ctx, o.HoldID, p.ExpiresAt, e.HoldCap)
	return err
}

// charge is one successful charge being applied, in the webhook's
// transaction.
type charge struct {
	s   *Service
	tx  shardstore.Tx
	p   psp.Payment
	out *outcome
}

// charged applies a successful charge: checked against our payment attempt
// and its order, then the order is paid (its hold sold, its tickets issued)
// or the money goes back.
func (s *Service) charged(ctx context.Context, tx shardstore.Tx, p psp.Payment, out *outcome) error {
	c := charge{s, tx, p, out}
	o, found, err := tx.LockCharge(ctx, p.OrderID)
	if err != nil {
		return err
	}
	if !found {
		return c.refuse(ctx, "no such order", metrics.PaymentMismatches)
	}
	row, found, err := findPayment(ctx, tx, p)
	switch {
	case err != nil:
		return err
	case !found:
		return c.refuse(ctx, "the payment reference is not one of this order's payments", metrics.PaymentMismatches)
	case row.Status == shardstore.PaymentSucceeded || row.Status == shardstore.PaymentRefunded:
		return nil // this charge was applied (or given back) already
	}
	if reason := mismatch(p, o, row); reason != "" {
		if row.PSPID != nil {
			// Our own attempt was charged wrongly: it failed, the fan may
			// check out again. A foreign charge leaves the attempt alone.
			if err := setPayment(ctx, tx, row, p, shardstore.PaymentFailed, reason); err != nil {
				return err
			}
		}
		return c.refuse(ctx, reason, metrics.PaymentMismatches)
	}
	if err := setPayment(ctx, tx, row, p, shardstore.PaymentSucceeded, ""); err != nil {
		return err
	}
	if o.Status == shardstore.OrderPaid || o.Status == shardstore.OrderRefundPending || o.Status == shardstore.OrderRefunded {
		return c.refuse(ctx, "duplicate charge", metrics.ChargesRefunded)
	}
	return c.pay(ctx, o, row.ID)
}

// mismatch tells why a charge does not pay its order and attempt, or "".
func mismatch(p psp.Payment, o shardstore.Charge, row shardstore.PaymentRow) string {
	if p.Amount != o.TotalCents || p.Amount != row.AmountCents ||
		!strings.EqualFold(p.Currency, o.Currency) || !strings.EqualFold(p.Currency, row.Currency) {
		return fmt.Sprintf("charged %d %s for an order of %d %s", p.Amount, p.Currency, o.TotalCents, o.Currency)
	}
	return ""
}

// pay sells the order's hold (re-taking its places if the hold ended and a
// new hold could take them), marks it paid and issues its tickets; if the
// places are gone, the order is refunded.
func (c charge) pay(ctx context.Context, o shardstore.Charge, paymentID int64) error {
	// First: whatever happens to the charge, the account used the card.
	if err := c.linkCard(ctx, o); err != nil {
		return err
	}
	// A payment in flight when the organizer cancelled the event would sell
	// after the cancellation's refunds were asked for. Under the event's
	// money lock, either the cancellation waits for this sale to commit and
	// refunds it, or this reads the event cancelled (committed before the
	// cancellation takes the lock) and gives the money back.
	if err := c.tx.ShareMoneyLock(ctx, o.EventID); err != nil {
		return err
	}
	e, err := c.s.events(ctx, o.EventID)
	if err != nil {
		return err
	}
	if e.Status == event.Cancelled {
		return c.giveBack(ctx, o.OrderID, paymentID, "the event was cancelled")
	}
	if !o.HoldLive {
		// Paid after the hold ended (released, expired, or expiring now):
		// the places are taken again only as a new hold would take them.
		reason, err := c.s.retakeRefusal(ctx, c.tx, o)
		if err != nil {
			return err
		}
		if reason != "" {
			return c.giveBack(ctx, o.OrderID, paymentID, reason)
		}
	}
	for _, over := range []func(context.Context, shardstore.Charge, int64, int) (string, error){c.overCardLimit, c.overClusterLimit} {
		if reason, err := over(ctx, o, paymentID, e.MaxPerAccount); err != nil || reason != "" {
			if err != nil {
				return err
			}
			return c.giveBackPlaces(ctx, o, paymentID, reason)
		}
	}
	ok, seats, err := c.tx.SellHold(ctx, o.HoldID, o.OrderID)
	if err != nil {
		return err
	}
	if !ok {
		return c.giveBack(ctx, o.OrderID, paymentID, "hold lost: its places went to someone else")
	}
	if err := c.tx.MarkPaid(ctx, o.OrderID, paymentID); err != nil {
		return err
	}
	if err := c.tx.IssueTickets(ctx, o.OrderID, o.EventID, func(a shardstore.Admission) string {
		return c.s.tickets.Code(o.OrderID, a.ItemID, a.N)
	}); err != nil {
		return err
	}
	if err := c.tx.Enqueue(ctx, shardstore.TopicOrderPaid, map[string]any{"order_id": o.OrderID, "event_id": o.EventID, "account": o.Account}); err != nil {
		return err
	}
	c.out.sold = &sale{eventID: o.EventID, account: o.Account, order: o.OrderID, card: c.p.Card, seats: seats}
	return nil
}

// CardLimit is the failure of a payment attempt whose card had already
// paid for the event's per-fan limit: its money goes back.
const CardLimit = "card_limit"

// overCardLimit tells why a charge's card may not pay for o's tickets, or
// "" when it may: a card is limited per event as an account is, so one
// card paying for a farm of accounts buys no more than one fan. The
// attempt's failure says so (CardLimit), and the order shows it.
func (c charge) overCardLimit(ctx context.Context, o shardstore.Charge, paymentID int64, limit int) (string, error) {
	if c.p.Card == "" || c.s.noCardLimit {
		return "", nil
	}
	paid, err := c.tx.CardTickets(ctx, c.p.Card, o.EventID, o.OrderID)
	if err != nil || paid+o.Tickets <= limit {
		return "", err
	}
	reason := fmt.Sprintf("the card already paid for %d of the %d tickets one fan may buy for this event", paid, limit)
	return reason, c.tx.SetPayment(ctx, paymentID, shardstore.PaymentSucceeded, CardLimit, c.p.ID, c.p.Card)
}

// giveBack refunds an order whose charge (payment attempt paymentID)
// cannot be kept: refund_pending until the PSP's refund webhook of that
// charge (moneyBack) confirms it.
func (c charge) giveBack(ctx context.Context, orderID, paymentID int64, reason string) error {
	if err := c.tx.PendRefund(ctx, orderID, paymentID); err != nil {
		return err
	}
	return c.refuse(ctx, reason, metrics.ChargesRefunded)
}

// giveBackPlaces is giveBack for an order that can never be paid (over a
// limit): its hold ends now, so its places go back on sale at once instead
// of staying out of reach until the hold expires.
func (c charge) giveBackPlaces(ctx context.Context, o shardstore.Charge, paymentID int64, reason string) error {
	if err := c.giveBack(ctx, o.OrderID, paymentID, reason); err != nil || !o.HoldLive {
		return err
	}
	freed, err := c.tx.EndHolds(ctx, []int64{o.HoldID}, shardstore.HoldReleased)
	c.out.freed = freed
	return err
}

// refuse gives the charge back at the PSP (through the outbox) and says why
// once committed.
func (c charge) refuse(ctx context.Context, reason, metric string) error {
	c.out.refused = &refusal{reason: reason, metric: metric}
	return requestRefund(ctx, c.tx, c.p, reason)
}

// retakeRefusal tells why an order whose hold ended may not take its places
// again, or "" when it may: the sale must be open, the event must have no
// waiting room (a payment carries no admission), the places must still cost
// what the order was priced (a page opened before a price change must not
// buy at the old price) and the account must stay within its limit,
// counted under the limit lock the caller holds.
func (s *Service) retakeRefusal(ctx context.Context, tx shardstore.Tx, o shardstore.Charge) (string, error) {
	e, err := s.events(ctx, o.EventID)
	if err != nil {
		return "", err
	}
	switch {
	case !e.OnSale(s.now()):
		return "the hold ended and sales are closed", nil
	case e.WaitingRoom.Enabled:
		return "the hold ended and this event sells only to fans admitted from its waiting room", nil
	}
	if changed, err := tx.Repriced(ctx, o.OrderID); err != nil || changed != "" {
		return "the hold ended and its price changed since: " + changed, err
	}
	kept, err := tx.TicketsKept(ctx, o.Account, o.EventID, o.OrderID)
	if err != nil {
		return "", err
	}
	if kept+o.Tickets > e.MaxPerAccount {
		return fmt.Sprintf("the hold ended and the account has %d of %d tickets for this event", kept, e.MaxPerAccount), nil
	}
	return "", nil
}

// moneyBack applies a refund or dispute made at the PSP: if that payment
// paid its order, the order is refunded and its tickets void. Refunds of
// charges the shop refused change no order.
func (s *Service) moneyBack(ctx context.Context, tx shardstore.Tx, ev psp.Event) error {
	row, found, err := findPayment(ctx, tx, ev.Payment)
	if err != nil || !found {
		return err
	}
	if err := setPayment(ctx, tx, row, ev.Payment, shardstore.PaymentRefunded, ""); err != nil {
		return err
	}
	if err := tx.RefundConfirmed(ctx, row.ID); err != nil {
		return err
	}
	refunded, err := tx.RefundPaid(ctx, row.OrderID, row.ID)
	if err != nil || !refunded {
		return err
	}
	s.log.Info("order refunded at the PSP", "order", row.OrderID, "payment", ev.Payment.ID, "event", ev.Type)
	return nil
}

// refundFailedAtPSP applies a refund the PSP had accepted (pending) and
// that failed: the attempt is failed (the next asks under a new key), the
// order stays as it was (paid, or refund_pending: the money is owed),
// listed among the organizer's refund failures (and, for its own charge,
// among its cancelled event's failed refunds, which cancelling again asks
// again), logged and counted. A refund the shop has no pending record of
// (the dashboard's) changes nothing.
func (s *Service) refundFailedAtPSP(ctx context.Context, tx shardstore.Tx, ev psp.Event) error {
	why := "the refund failed at the payment provider"
	if ev.Refund.Failure != "" {
		why += ": " + ev.Refund.Failure
	}
	a, own, found, err := tx.RefundFailedAtPSP(ctx, ev.Refund.ID, why)
	if err != nil {
		return err
	}
	if !found {
		s.log.Warn("a refund the shop has no pending record of failed", "refund", ev.Refund.ID, "intent", ev.Refund.Payment, "order", ev.Payment.OrderID)
		return nil
	}
	if own {
		if _, err := tx.RefundFailed(ctx, a.OrderID, shardstore.AnyTry, why); err != nil {
			return err
		}
	}
	s.refundSetAside(ctx, a)
	return nil
}

// refundSucceededAtPSP applies a refund the PSP had accepted (pending)
// that gave the money back: the attempt reads succeeded. A partial
// refund's tickets were void already (at pending), and its charge.refunded
// names no refund, so this is what settles it; the order's own status is
// the charge's to change (charge.refunded once all of it is back:
// moneyBack). An event that comes before the PSP's answer to the refund is
// recorded (the order has a refund still asking) is an error, so the PSP
// delivers it again once the answer, and the refund's id, are there.
func (s *Service) refundSucceededAtPSP(ctx context.Context, tx shardstore.Tx, ev psp.Event) error {
	order, found, err := tx.RefundSucceededAtPSP(ctx, ev.Refund.ID)
	if err != nil {
		return err
	}
	if !found {
		due, err := tx.RefundAnswerDue(ctx, ev.Payment.OrderID)
		if err == nil && due {
			err = fmt.Errorf("refund %s of order %d settled before the PSP's answer to it was recorded: deliver it again", ev.Refund.ID, ev.Payment.OrderID)
		}
		return err
	}
	s.log.Info("pending refund succeeded at the PSP", "order", order, "refund", ev.Refund.ID, "amount", ev.Refund.Amount)
	return nil
}

func requestRefund(ctx context.Context, tx shardstore.Tx, p psp.Payment, reason string) error {
	return tx.Enqueue(ctx, shardstore.TopicRefundRequested,
		map[string]any{"order_id": p.OrderID, "payment": p.ID, "intent": p.Intent, "amount": p.Amount, "reason": reason})
}

// Reconcile replays the PSP's recent events: whatever a lost webhook left
// undone is applied now; everything else is a recorded duplicate. An event
// that fails is skipped (the next run retries it), so it never holds back
// the events after it; the errors are returned together.
func (s *Service) Reconcile(ctx context.Context, since time.Time) (int, error) {
	var events []psp.Event
	for after, more := "", true; more; {
		var page []psp.Event
		err := s.callPSP(ctx, true, func() error {
			var err error
			page, more, err = s.psp.Events(ctx, since, after)
			return err
		})
		if err != nil {
			return 0, fmt.Errorf("reconcile: %w", err)
		}
		events = append(events, page...)
		if len(page) > 0 {
			after = page[len(page)-1].ID
		}
		more = more && len(page) > 0
	}
	// Listed newest first: applied oldest first, in listing order within
	// a second.
	slices.Reverse(events)
	slices.SortStableFunc(events, func(a, b psp.Event) int { return a.Created.Compare(b.Created) })
	var errs []error
	for _, ev := range events {
		if err := s.HandleEvent(ctx, ev); err != nil {
			errs = append(errs, err)
		}
	}
	_, err := s.finishCancellations(ctx)
	return len(events), errors.Join(append(errs, err)...)
}
