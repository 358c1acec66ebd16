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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/metrics"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/shared/ratelimit"
	"github.com/catraca/catraca/shared/shard"
)

// Errors a client can act on.
var (
	ErrNotFound    = errors.New("order not found")
	ErrNotPayable  = errors.New("order is not payable")
	ErrHoldExpired = errors.New("hold expired")
	errQueued      = errors.New("psp call queued")
)

// Order is what a fan sees of an order.
type Order struct {
	ID         int64            `json:"id"`
	EventID    int64            `json:"event_id"`
	Status     string           `json:"status"`
	TotalCents int64            `json:"total_cents"`
	Currency   string           `json:"currency"`
	CreatedAt  time.Time        `json:"created_at"`
	PaidAt     *time.Time       `json:"paid_at,omitempty"`
	HoldID     int64            `json:"hold_id"`
	HoldStatus string           `json:"hold_status"`
	ExpiresAt  time.Time        `json:"hold_expires_at"`
	Items      []inventory.Item `json:"items"`
	Tickets    []Ticket         `json:"tickets"`
	Payment    *Payment         `json:"payment,omitempty"`
	UserID     int64            `json:"-"`
}

// Payment is the latest payment attempt of an order.
type Payment struct {
	Status  string `json:"status"`
	URL     string `json:"url,omitempty"`
	Failure string `json:"failure,omitempty"`
	Attempt int    `json:"attempt"`
}

// Ticket is one admission; a void one (its order was refunded) admits no
// one. Its code is not here: codes rotate and are shown on the ticket page
// (shared/entry), only to the ticket's holder.
type Ticket struct {
	ID    int64  `json:"id"`
	Label string `json:"label"`
	Void  bool   `json:"void,omitempty"`
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
	shards    *shard.Router
	psp       psp.PSP
	limiter   *ratelimit.Limiter
	queue     Queue
	rate      float64
	publicURL string
	tickets   *Signer
	mailer    Mailer
	addresses func(ctx context.Context, account int64) (string, error)
	events    func(ctx context.Context, id int64) (event.Event, error)
	log       *slog.Logger
	// Paid is told about every sale (to free the fan's waiting-room slot
	// and push the sold seats to watchers).
	Paid func(eventID, account int64, seats []int)
}

// Config wires a Service.
type Config struct {
	Shards    *shard.Router
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
	Log    *slog.Logger
}

// New returns the service.
func New(c Config) *Service {
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.Mailer == nil {
		c.Mailer = LogMailer{Log: c.Log}
	}
	return &Service{shards: c.Shards, psp: c.PSP, limiter: c.Limiter, queue: c.Queue, rate: c.Rate,
		publicURL: c.PublicURL, tickets: c.Tickets, mailer: c.Mailer, addresses: c.Addresses, events: c.Events, log: c.Log}
}

// SetQueue plugs the queue in after construction (the local queue's
// workers need the service).
func (s *Service) SetQueue(q Queue) { s.queue = q }

// callPSP spends a PSP quota token: waiting for one when block is set,
// otherwise failing with errQueued at once. A token bucket of 80 % of the
// quota plus a 20 % burst never passes the quota in any one second.
func (s *Service) callPSP(ctx context.Context, block bool, call func() error) error {
	capacity := max(1, int(s.rate*0.2))
	rate := s.rate * 0.8
	if block {
		if err := s.limiter.Wait(ctx, "psp", capacity, rate); err != nil {
			return err
		}
	} else {
		wait, err := s.limiter.Allow(ctx, "psp", capacity, rate)
		if err != nil {
			// The quota's bucket is unreadable (Redis down): queue the call;
			// the consumer waits for quota and retries until it can.
			s.log.Warn("psp quota unknown, payment queued", "err", err)
			return errQueued
		}
		if wait > 0 {
			return errQueued
		}
	}
	err := call()
	if err != nil && !errors.Is(err, context.Canceled) {
		// One line per failed PSP call: the dashboard's PSP errors.
		s.log.LogAttrs(ctx, slog.LevelWarn, "psp call failed", append([]slog.Attr{slog.String("err", err.Error())},
			metrics.Attrs(map[string]float64{metrics.PSPErrors: 1})...)...)
	}
	return err
}

// EventOf returns the event of an order its owner may see, without
// loading the whole order.
func (s *Service) EventOf(ctx context.Context, id, account int64) (int64, error) {
	pool, err := s.shards.ForRow(id)
	if err != nil {
		return 0, ErrNotFound
	}
	var eventID, user int64
	err = pool.QueryRow(ctx, `SELECT event_id, user_id FROM orders WHERE id = $1`, id).Scan(&eventID, &user)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && user != account) {
		return 0, ErrNotFound
	}
	return eventID, err
}

// Get returns an order its owner may see; others get ErrNotFound.
func (s *Service) Get(ctx context.Context, id, account int64) (Order, error) {
	pool, err := s.shards.ForRow(id)
	if err != nil {
		return Order{}, ErrNotFound
	}
	o, err := load(ctx, pool, id)
	if err != nil {
		return Order{}, err
	}
	if o.UserID != account {
		return Order{}, ErrNotFound
	}
	return o, nil
}

func load(ctx context.Context, q inventory.Querier, id int64) (Order, error) {
	var o Order
	err := q.QueryRow(ctx, `
		SELECT o.id, o.event_id, o.user_id, o.status, o.total_cents, o.currency, o.created_at, o.paid_at,
		       h.id, h.status, h.expires_at
		FROM orders o JOIN holds h ON h.id = o.hold_id WHERE o.id = $1`, id).
		Scan(&o.ID, &o.EventID, &o.UserID, &o.Status, &o.TotalCents, &o.Currency, &o.CreatedAt, &o.PaidAt,
			&o.HoldID, &o.HoldStatus, &o.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Order{}, ErrNotFound
	}
	if err != nil {
		return Order{}, fmt.Errorf("load order %d: %w", id, err)
	}
	o.ExpiresAt = o.ExpiresAt.UTC()
	if o.Items, err = inventory.Items(ctx, q, id); err != nil {
		return Order{}, err
	}
	rows, err := q.Query(ctx, `SELECT t.id, i.label, t.void_at IS NOT NULL FROM tickets t JOIN order_items i ON i.id = t.order_item_id
		WHERE t.order_id = $1 ORDER BY t.id`, id)
	if err != nil {
		return Order{}, err
	}
	o.Tickets, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Ticket, error) {
		var t Ticket
		return t, r.Scan(&t.ID, &t.Label, &t.Void)
	})
	if err != nil {
		return Order{}, err
	}
	var p Payment
	var url, failure *string
	err = q.QueryRow(ctx, `SELECT status, url, failure, attempt FROM payments WHERE order_id = $1 ORDER BY id DESC LIMIT 1`, id).
		Scan(&p.Status, &url, &failure, &p.Attempt)
	if err == nil {
		if url != nil {
			p.URL = *url
		}
		if failure != nil {
			p.Failure = *failure
		}
		o.Payment = &p
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return Order{}, err
	}
	return o, nil
}

// Mine lists an account's orders on every shard, newest first.
func (s *Service) Mine(ctx context.Context, account int64) ([]Order, error) {
	var out []Order
	for _, id := range s.shards.IDs() {
		pool, err := s.shards.ReadPool(id)
		if err != nil {
			return nil, err
		}
		rows, err := pool.Query(ctx, `SELECT id FROM orders WHERE user_id = $1 ORDER BY created_at DESC LIMIT 50`, account)
		if err != nil {
			return nil, err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return nil, err
		}
		for _, oid := range ids {
			o, err := load(ctx, pool, oid)
			if err != nil {
				return nil, err
			}
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b Order) int { return b.CreatedAt.Compare(a.CreatedAt) })
	if out == nil {
		out = []Order{}
	}
	return out, nil
}

// Checkout starts payment of an order: the hold is extended once (up to
// the event's absolute cap), one payment attempt is recorded (a double
// click reuses it), and the PSP payment page is created now if the quota
// allows, otherwise queued (queued = true: poll the order).
func (s *Service) Checkout(ctx context.Context, e event.Event, orderID, account int64) (o Order, queued bool, err error) {
	pool, err := s.shards.ForRow(orderID)
	if err != nil {
		return Order{}, false, ErrNotFound
	}
	var paymentID int64
	var paymentStatus string
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var user, holdID int64
		var status, holdStatus string
		var expires time.Time
		var extended bool
		err := tx.QueryRow(ctx, `
			SELECT o.user_id, o.status, h.id, h.status, h.expires_at, h.extended
			FROM orders o JOIN holds h ON h.id = o.hold_id WHERE o.id = $1 FOR NO KEY UPDATE OF o, h`, orderID).
			Scan(&user, &status, &holdID, &holdStatus, &expires, &extended)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && user != account) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if status != "pending" {
			return fmt.Errorf("%w: it is %s", ErrNotPayable, status)
		}
		if holdStatus != "active" || !expires.After(time.Now()) {
			return ErrHoldExpired
		}
		if !extended {
			// Once, when payment starts: up to the absolute cap from the
			// hold's creation, which the fan cannot move.
			if err := tx.QueryRow(ctx, `
				UPDATE holds SET extended = true,
				  expires_at = greatest(expires_at, least(created_at + make_interval(secs => $2), now() + make_interval(secs => $3)))
				WHERE id = $1 RETURNING expires_at`, holdID, e.HoldCap, e.HoldTTL).Scan(&expires); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE event_seats SET held_until = $2 WHERE hold_id = $1 AND status = 'held'`, holdID, expires); err != nil {
				return err
			}
		}
		err = tx.QueryRow(ctx, `SELECT id, status FROM payments WHERE order_id = $1 AND status IN ('queued', 'requires_action', 'processing')`,
			orderID).Scan(&paymentID, &paymentStatus)
		if err == nil {
			return nil // a double click: reuse the attempt in flight
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		paymentStatus = "queued"
		return tx.QueryRow(ctx, `
			INSERT INTO payments (order_id, idempotency_key, status, amount_cents, currency, attempt)
			SELECT o.id, 'order-' || o.id || '-' || (count(p.id) + 1), 'queued', o.total_cents, o.currency, count(p.id) + 1
			FROM orders o LEFT JOIN payments p ON p.order_id = o.id WHERE o.id = $1 GROUP BY o.id
			RETURNING id`, orderID).Scan(&paymentID)
	})
	if err != nil {
		return Order{}, false, fmt.Errorf("checkout order %d: %w", orderID, err)
	}
	if paymentStatus == "queued" {
		switch err := s.create(ctx, orderID, paymentID, false); {
		case errors.Is(err, errQueued), errors.Is(err, psp.ErrRateLimited), errors.Is(err, psp.ErrUnavailable):
			if err := s.queue.Send(ctx, Job{OrderID: orderID, PaymentID: paymentID}); err != nil {
				return Order{}, false, err
			}
			queued = true
		case err != nil:
			return Order{}, false, err
		}
	}
	o, err = load(ctx, pool, orderID)
	return o, queued, err
}

// Create makes the PSP payment of a queued attempt, waiting for quota; the
// queue consumer calls it, and retries on error.
func (s *Service) Create(ctx context.Context, j Job) error {
	return s.create(ctx, j.OrderID, j.PaymentID, true)
}

func (s *Service) create(ctx context.Context, orderID, paymentID int64, block bool) error {
	pool, err := s.shards.ForRow(orderID)
	if err != nil {
		return err
	}
	var key, status, currency string
	var amount int64
	if err := pool.QueryRow(ctx, `SELECT idempotency_key, status, amount_cents, currency FROM payments WHERE id = $1`, paymentID).
		Scan(&key, &status, &amount, &currency); err != nil {
		return fmt.Errorf("payment %d: %w", paymentID, err)
	}
	if status != "queued" {
		return nil
	}
	var p psp.Payment
	err = s.callPSP(ctx, block, func() error {
		var err error
		p, err = s.psp.CreatePayment(ctx, psp.CreatePayment{Amount: amount, Currency: currency, OrderID: orderID,
			Reference: key, ReturnURL: fmt.Sprintf("%s/orders/%d", s.publicURL, orderID)}, key)
		return err
	})
	if err != nil {
		return err
	}
	// If the hold ended while the PSP made the payment, the attempt is
	// canceled already: the payment is cancelled at the PSP too, so no page
	// can take a card for places given back.
	cancel, _ := json.Marshal(map[string]any{"order_id": orderID, "payment": p.ID})
	_, err = pool.Exec(ctx, `
		WITH made AS (
			UPDATE payments SET psp_payment_id = $2, updated_at = now(),
			  url = CASE WHEN status = 'queued' THEN $3 ELSE url END,
			  status = CASE WHEN status = 'queued' THEN 'requires_action' ELSE status END
			WHERE id = $1 AND psp_payment_id IS NULL RETURNING status
		)
		INSERT INTO outbox (topic, payload) SELECT 'payment.cancel', $4 FROM made WHERE status = 'canceled'`,
		paymentID, p.ID, p.URL, cancel)
	return err
}
