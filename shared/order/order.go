// Package order takes payment for held orders and issues tickets. Inventory
// first, payment second: checkout extends the hold once and asks the PSP for
// a payment page (through a rate limiter, queued when the PSP quota is
// spent); the PSP's signed webhook, de-duplicated by event id, then checks
// the charge against the order and sells the hold and issues tickets in one
// transaction, or refunds a charge the order cannot keep. Late or
// out-of-order events never move an order backwards; a refund or dispute
// at the PSP voids the order's tickets.
package order

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/singleflight"

	"github.com/catraca/catraca/shared/catalogstore"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/metrics"
	"github.com/catraca/catraca/shared/outbox"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/shared/ratelimit"
	"github.com/catraca/catraca/shared/reject"
	"github.com/catraca/catraca/shared/shard"
	"github.com/catraca/catraca/shared/shardstore"
)

// Errors a client can act on.
var (
	ErrNotFound    = errors.New("order not found")
	ErrNotPayable  = errors.New("order is not payable")
	ErrHoldExpired = errors.New("hold expired")
	errQueued      = errors.New("psp call queued")
)

// shards is where orders find a shard's store (shardstore.Shards).
type shards interface {
	IDs() []int
	Primary(id int) (*shardstore.Store, error)
	Reader(id int) (*shardstore.Store, error)
	OfRow(id int64) (*shardstore.Store, error)
}

// Job asks a consumer to create a payment at the PSP.
type Job struct {
	OrderID   int64 `json:"order_id"`
	PaymentID int64 `json:"payment_id"`
}

// Queue carries PSP calls when the quota is spent: SQS FIFO in AWS, an
// in-process queue locally, consumed by the same code (Service.Create).
type Queue interface {
	Send(ctx context.Context, j Job) error
}

// Service is the order and payment logic.
type Service struct {
	shards  shards
	catalog *catalogstore.Outbox // nil: not drained
	psp     psp.PSP
	// confirming shares one confirmation among concurrent deliveries of
	// an event (the PSP's duplicates): one call from the quota, not one each.
	confirming singleflight.Group
	// confirmMu keeps one confirmation in flight per process: a storm of
	// deliveries cannot take tokens faster than its calls reach the PSP
	// and then arrive there bunched, above the quota.
	confirmMu sync.Mutex
	// noCardLimit: see Config.NoCardLimit.
	noCardLimit bool
	// linked and noClusterLimit: see Config.Linked, NoClusterLimit.
	linked         Linked
	noClusterLimit bool
	// refunding shares one console refund among concurrent identical
	// requests in a process (a double click): each is answered with the
	// refunded order. Different refunds of one order take turns instead
	// (plan's notInFlight), in any process.
	refunding singleflight.Group
	limiter   *ratelimit.Limiter
	queue     Queue
	rate      float64
	publicURL string
	tickets   *Signer
	mailer    Mailer
	addresses func(ctx context.Context, account int64) (string, error)
	events    func(ctx context.Context, id int64) (event.Event, error)
	cancelled func(ctx context.Context, since time.Time) ([]event.Event, error)
	log       *slog.Logger
	now       func() time.Time
	paid      func(eventID, account int64, seats []int)
	freed     func(shardstore.Freed)
	pspFailed func(ctx context.Context)
	// outboxTries and refundTries bound the outbox worker's tries.
	outboxTries, refundTries int
	strikes                  *ratelimit.Strikes // nil: declines not counted
	declines                 Declines
	noPix                    bool
	catalogTopics            map[outbox.Topic]CatalogHandler
}

// Config wires a Service.
type Config struct {
	Shards *shard.Router
	// Catalog, if set, is the catalog, whose outbox Fulfil drains too.
	Catalog   *pgxpool.Pool
	PSP       psp.PSP
	Limiter   *ratelimit.Limiter
	Queue     Queue
	Rate      float64 // PSP operations per second we may use
	PublicURL string
	Tickets   *Signer
	Mailer    Mailer
	// Addresses finds an account's email address (in the catalog).
	Addresses func(ctx context.Context, account int64) (string, error)
	// Events reads an event's current rules (sale window, limit, waiting
	// room) for payments that arrive after their hold ended.
	Events func(ctx context.Context, id int64) (event.Event, error)
	// Cancelled lists the events cancelled since a time: Reconcile asks
	// the refunds of any whose shard never heard of it.
	Cancelled func(ctx context.Context, since time.Time) ([]event.Event, error)
	Log       *slog.Logger
	// Paid, if set, is told about every sale (to free the fan's
	// waiting-room slot and push the sold seats to watchers).
	Paid func(eventID, account int64, seats []int)
	// Freed, if set, is told about the places a refused payment's hold
	// gave back at once (to push them to watchers).
	Freed func(shardstore.Freed)
	// PSPFailed, if set, is told about every failed PSP call (the control
	// room counts them).
	PSPFailed func(ctx context.Context)
	// OutboxTries and RefundTries bound the outbox worker's tries of a
	// message (0: DefaultOutboxTries, DefaultRefundTries).
	OutboxTries, RefundTries int
	// Strikes, if set, counts declined payments; Declines are its
	// thresholds (card testing).
	Strikes  *ratelimit.Strikes
	Declines Declines
	// NoPix keeps Pix off the BRL payment pages (an account without it).
	NoPix bool
	// NoCardLimit turns the per-card limit off (load tests whose fans all
	// pay with one test card).
	NoCardLimit bool
	// Linked, if set, limits clusters of linked accounts per event and
	// counts purchases for the velocity rule (fairness.Service);
	// NoClusterLimit keeps the counting and turns the cluster limit off.
	Linked         Linked
	NoClusterLimit bool
	// CatalogTopics handle the catalog outbox's messages of other
	// packages (a drawn presale's mail), in the message's transaction.
	CatalogTopics map[outbox.Topic]CatalogHandler
}

// CatalogHandler handles one catalog outbox message in db, the
// transaction that marks it processed.
type CatalogHandler func(ctx context.Context, db catalogstore.DB, payload []byte) error

// New returns the service.
func New(c Config) *Service {
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.Mailer == nil {
		c.Mailer = LogMailer{Log: c.Log}
	}
	var catalog *catalogstore.Outbox
	if c.Catalog != nil {
		catalog = catalogstore.OpenOutbox(c.Catalog)
	}
	return &Service{shards: shardstore.Open(c.Shards), catalog: catalog, psp: c.PSP, limiter: c.Limiter, queue: c.Queue, rate: c.Rate,
		publicURL: c.PublicURL, tickets: c.Tickets, mailer: c.Mailer, addresses: c.Addresses, events: c.Events, cancelled: c.Cancelled, log: c.Log, now: time.Now,
		paid: c.Paid, freed: c.Freed, pspFailed: c.PSPFailed, strikes: c.Strikes, declines: c.Declines, noPix: c.NoPix,
		noCardLimit: c.NoCardLimit, linked: c.Linked, noClusterLimit: c.NoClusterLimit, catalogTopics: c.CatalogTopics,
		outboxTries: cmp.Or(c.OutboxTries, DefaultOutboxTries), refundTries: cmp.Or(c.RefundTries, DefaultRefundTries)}
}

// ErrPSPBusy is a PSP call the shop did not make: the quota is spent for
// Wait, or unknown (the limiter's Redis is unavailable: Unknown).
type ErrPSPBusy struct {
	Wait    time.Duration
	Unknown bool
	Err     error // the limiter's, when Unknown
}

func (e *ErrPSPBusy) Error() string {
	if e.Unknown {
		return fmt.Sprintf("psp quota unknown: %v", e.Err)
	}
	return fmt.Sprintf("psp quota spent for %v", e.Wait)
}

func (e *ErrPSPBusy) Unwrap() error { return e.Err }

// quotaUnknownWait is when to come back after the quota could not be read.
const quotaUnknownWait = 5 * time.Second

// spend takes a PSP quota token: waiting for one when block is set,
// otherwise failing with ErrPSPBusy at once. A token bucket of 80 % of the
// quota plus a 20 % burst never passes the quota in any one second. An
// unreadable bucket is ErrPSPBusy (Unknown).
func (s *Service) spend(ctx context.Context, block bool) error {
	capacity := max(1, int(s.rate*0.2))
	rate := s.rate * 0.8
	if block {
		err := s.limiter.Wait(ctx, "psp", capacity, rate)
		if err != nil && ctx.Err() == nil {
			return &ErrPSPBusy{Wait: quotaUnknownWait, Unknown: true, Err: err}
		}
		return err
	}
	wait, err := s.limiter.Allow(ctx, "psp", capacity, rate)
	switch {
	case err != nil:
		return &ErrPSPBusy{Wait: quotaUnknownWait, Unknown: true, Err: err}
	case wait > 0:
		return &ErrPSPBusy{Wait: wait}
	}
	return nil
}

// spendNow takes a PSP quota token now, or says when to come back.
func (s *Service) spendNow(ctx context.Context) error { return s.spend(ctx, false) }

// callPSP makes one PSP call with a quota token (spend): without block, a
// call the quota does not allow now is errQueued.
func (s *Service) callPSP(ctx context.Context, block bool, call func() error) error {
	if err := s.spend(ctx, block); err != nil {
		var busy *ErrPSPBusy
		if !block && errors.As(err, &busy) {
			if busy.Unknown {
				// The quota's bucket is unreadable (Redis down): queue the
				// call; the consumer waits for quota and retries until it can.
				s.log.Warn("psp quota unknown, payment queued", "err", busy.Err)
			}
			return errQueued
		}
		return err
	}
	return s.call(ctx, call)
}

// call makes one PSP call whose token is spent, and counts its failure.
func (s *Service) call(ctx context.Context, call func() error) error {
	err := call()
	if err != nil && !errors.Is(err, context.Canceled) {
		// One line per failed PSP call: the dashboard's PSP errors.
		s.log.LogAttrs(ctx, slog.LevelWarn, "psp call failed", append([]slog.Attr{slog.String("err", err.Error())},
			metrics.Attrs(map[string]float64{metrics.PSPErrors: 1})...)...)
		if s.pspFailed != nil {
			s.pspFailed(ctx)
		}
	}
	return err
}

// EventOf returns the event of an order its owner may see, without
// loading the whole order.
func (s *Service) EventOf(ctx context.Context, id, account int64) (int64, error) {
	st, err := s.shards.OfRow(id)
	if err != nil {
		return 0, ErrNotFound
	}
	eventID, user, found, err := st.OrderOwner(ctx, id)
	if err == nil && (!found || user != account) {
		return 0, ErrNotFound
	}
	return eventID, err
}

// Get returns an order its owner may see; others get ErrNotFound.
func (s *Service) Get(ctx context.Context, id, account int64) (Order, error) {
	o, err := s.Lookup(ctx, id)
	if err != nil {
		return Order{}, err
	}
	if o.UserID != account {
		return Order{}, ErrNotFound
	}
	return o, nil
}

// orderReader is a store or a transaction.
type orderReader interface {
	Order(ctx context.Context, id int64) (shardstore.Order, bool, error)
}

func load(ctx context.Context, r orderReader, id int64) (Order, error) {
	o, found, err := r.Order(ctx, id)
	if err != nil {
		return Order{}, fmt.Errorf("load order %d: %w", id, err)
	}
	if !found {
		return Order{}, ErrNotFound
	}
	return orderOf(o), nil
}

// Mine lists an account's orders on every shard, newest first.
func (s *Service) Mine(ctx context.Context, account int64) ([]Order, error) {
	return s.everyShard(ctx, func(st *shardstore.Store) ([]int64, error) { return st.OrdersOf(ctx, account, 50) })
}

// everyShard loads the orders list names on each shard's reader, newest
// first.
func (s *Service) everyShard(ctx context.Context, list func(st *shardstore.Store) ([]int64, error)) ([]Order, error) {
	out := []Order{}
	for _, id := range s.shards.IDs() {
		st, err := s.shards.Reader(id)
		if err != nil {
			return nil, err
		}
		ids, err := list(st)
		if err != nil {
			return nil, err
		}
		for _, oid := range ids {
			o, err := load(ctx, st, oid)
			if err != nil {
				return nil, err
			}
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b Order) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out, nil
}

// Checkout starts payment of an order from a viewer address ("" unknown):
// refused for a while after too many declined payments of the account or
// the address (ErrTooManyDeclines); else the hold is extended once (up to
// the event's absolute cap), one payment attempt is recorded (a double
// click reuses it), and the PSP payment page is created now if the quota
// allows, otherwise queued (queued = true: poll the order).
func (s *Service) Checkout(ctx context.Context, e event.Event, orderID, account int64, address string) (o Order, queued bool, err error) {
	st, err := s.shards.OfRow(orderID)
	if err != nil {
		return Order{}, false, ErrNotFound
	}
	if err := s.checkDeclines(ctx, account, address); err != nil {
		return Order{}, false, err
	}
	var paymentID int64
	var paymentStatus shardstore.PaymentStatus
	err = st.WithTx(ctx, func(tx shardstore.Tx) error {
		paymentID, paymentStatus, err = s.startPayment(ctx, tx, e, orderID, account, address)
		return err
	})
	if err != nil {
		return Order{}, false, fmt.Errorf("checkout order %d: %w", orderID, err)
	}
	if paymentStatus == shardstore.PaymentQueued {
		switch err := s.create(ctx, orderID, paymentID, false, e.HoldCap); {
		case errors.Is(err, errQueued), errors.Is(err, psp.ErrRateLimited), errors.Is(err, psp.ErrUnavailable):
			if err := s.queue.Send(ctx, Job{OrderID: orderID, PaymentID: paymentID}); err != nil {
				return Order{}, false, err
			}
			queued = true
		case err != nil:
			return Order{}, false, err
		}
	}
	o, err = load(ctx, st, orderID)
	return o, queued, err
}

// startPayment checks that an order may be paid now, extends its hold once
// and returns its payment attempt in flight, or a new queued one.
func (s *Service) startPayment(ctx context.Context, tx shardstore.Tx, e event.Event, orderID, account int64, address string) (int64, shardstore.PaymentStatus, error) {
	c, found, err := tx.LockCheckout(ctx, orderID)
	if err == nil && found {
		// e may come from a cache that is behind the organizer's change.
		var newer string
		if newer, err = tx.NewerStatus(ctx, e.ID, e.Version); newer != "" {
			e.Status = event.Status(newer)
		}
	}
	switch {
	case err != nil:
		return 0, "", err
	case !found || c.Account != account:
		return 0, "", ErrNotFound
	case c.Status == shardstore.OrderExpired:
		return 0, "", ErrHoldExpired // as before the sweeper got to it
	case c.Status != shardstore.OrderPending:
		return 0, "", reject.New(ErrNotPayable, "", fmt.Sprintf("This order cannot be paid: it is %s.", c.Status))
	case e.Status == event.Cancelled:
		// The charge would only be refunded (a payment already in flight is).
		return 0, "", reject.New(ErrNotPayable, "", "This event was cancelled: its orders can no longer be paid.")
	case c.HoldStatus != shardstore.HoldActive || !c.ExpiresAt.After(s.now()):
		return 0, "", ErrHoldExpired
	}
	if !c.Extended {
		// Once, when payment starts: up to the absolute cap from the
		// hold's creation, which the fan cannot move.
		if _, err := tx.ExtendHold(ctx, c.HoldID, e.HoldCap, e.HoldTTL); err != nil {
			return 0, "", err
		}
	}
	id, status, found, err := tx.LivePayment(ctx, orderID)
	if err != nil || found {
		return id, status, err // found: a double click reuses the attempt in flight
	}
	id, err = tx.NewPayment(ctx, orderID, address)
	return id, shardstore.PaymentQueued, err
}

// Create makes the PSP payment of a queued attempt, waiting for quota; the
// queue consumer calls it, and retries on error.
func (s *Service) Create(ctx context.Context, j Job) error {
	return s.create(ctx, j.OrderID, j.PaymentID, true, 0)
}

// create makes an attempt's PSP payment; holdCap is its event's
// hold_cap_seconds, read from the catalog when 0.
func (s *Service) create(ctx context.Context, orderID, paymentID int64, block bool, holdCap int) error {
	st, err := s.shards.OfRow(orderID)
	if err != nil {
		return err
	}
	a, err := st.PaymentAttempt(ctx, paymentID)
	if err != nil || a.Status != shardstore.PaymentQueued {
		return err
	}
	pixWait, err := s.pixWait(ctx, a, holdCap)
	if err != nil {
		return err
	}
	var p psp.Payment
	err = s.callPSP(ctx, block, func() error {
		var err error
		p, err = s.psp.CreatePayment(ctx, psp.CreatePayment{Amount: a.AmountCents, Currency: a.Currency, OrderID: orderID,
			Reference: a.Key, ReturnURL: fmt.Sprintf("%s/orders/%d", s.publicURL, orderID), PixWait: pixWait}, a.Key)
		return err
	})
	if err != nil {
		return err
	}
	return st.PaymentCreated(ctx, orderID, paymentID, p.ID, p.URL)
}

// pixWait is how long a Pix code on an attempt's page may live: what the
// hold can still wait, up to its cap, after the page closes with the hold
// (the session is expired then). A code shown at the page's last moment
// then expires when the hold can wait no more, so the hold always waits
// for the whole code (HandleEvent) and never past its cap.
func (s *Service) pixWait(ctx context.Context, a shardstore.PaymentAttempt, holdCap int) (time.Duration, error) {
	if s.noPix || !strings.EqualFold(a.Currency, "BRL") {
		return 0, nil // Pix is in BRL only, and the account may not take it
	}
	if holdCap == 0 {
		e, err := s.events(ctx, a.EventID)
		if err != nil {
			return 0, err
		}
		holdCap = e.HoldCap
	}
	return a.HoldCreated.Add(time.Duration(holdCap) * time.Second).Sub(a.HoldExpires), nil
}
