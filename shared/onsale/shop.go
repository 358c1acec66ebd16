package onsale

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/fan"
)

// Cards of the PSP simulator.
const (
	goodCard     = "4242424242424242"
	declinedCard = "4000000000000002"
)

// shop is one admitted fan: pick from a stale map, hold, pay or walk away.
func (r *run) shop(ctx context.Context, s *shopper) {
	var h fan.Hold
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		h, err = r.hold(ctx, s)
		var e *fan.Error
		if err == nil || !errors.As(err, &e) || e.Code != "seats-taken" {
			break
		}
		r.rep.addCollision()
	}
	var e *fan.Error
	if err != nil {
		if errors.As(err, &e) && e.Code == "sold-out" {
			r.soldOut.Store(r.remaining(ctx) == 0)
		}
		return
	}
	if rand.Float64() < r.o.AbandonRate {
		r.rep.addAbandon()
		return // walks away: the hold expires and the seats come back
	}
	card := goodCard
	if rand.Float64() < r.o.DeclineRate {
		card = declinedCard
	}
	// A fan whose payment cannot go through lets the seats go.
	defer func() {
		if o, err := s.Order(ctx, h.OrderID); err == nil && o.Status == "pending" {
			s.Release(ctx, h.HoldID)
		}
	}()
	for try := 0; try < 2; try++ {
		url, err := r.paymentURL(ctx, s, h.OrderID)
		if err != nil || url == "" {
			return
		}
		if err := s.PayOnPage(ctx, url, card); err != nil {
			continue
		}
		if o := r.settle(ctx, s, h.OrderID); o.Status == "paid" {
			r.sold.Add(int64(len(o.Tickets)))
			return
		}
		card = goodCard // declined once: try the other card, like a fan would
	}
}

func (r *run) hold(ctx context.Context, s *shopper) (fan.Hold, error) {
	n := 1 + rand.IntN(4)
	switch x := rand.Float64(); {
	case x < 0.15 && r.o.GA > 0:
		return fan.Retry(ctx, func() (fan.Hold, error) { return s.HoldGA(ctx, r.event, "FLOOR", n) })
	case x < 0.35:
		return fan.Retry(ctx, func() (fan.Hold, error) { return s.HoldBest(ctx, r.event, n, "") })
	}
	seats, err := r.pick(ctx, s, n)
	if err != nil || len(seats) == 0 {
		return fan.Retry(ctx, func() (fan.Hold, error) { return s.HoldBest(ctx, r.event, n, "") })
	}
	return fan.Retry(ctx, func() (fan.Hold, error) { return s.HoldSeats(ctx, r.event, seats) })
}

// pick chooses n seats of one row that the (edge-cached, up to ~2 s old)
// snapshot shows free.
func (r *run) pick(ctx context.Context, s *shopper, n int) ([]int64, error) {
	var snap struct {
		Available string `json:"available"`
	}
	if err := s.Call(ctx, "availability", "GET", fmt.Sprintf("/api/events/%d/availability", r.event), nil, &snap); err != nil {
		return nil, err
	}
	bits, err := base64.StdEncoding.DecodeString(snap.Available)
	if err != nil {
		return nil, err
	}
	free := func(i int) bool { return i/8 < len(bits) && bits[i/8]>>(i%8)&1 == 1 }
	secs := r.layout.Sections
	for tries := 0; tries < 20; tries++ {
		sec := secs[rand.IntN(len(secs))]
		if len(sec.Rows) == 0 {
			continue
		}
		row := sec.Rows[rand.IntN(len(sec.Rows))]
		var out []int64
		for _, seat := range row.Seats {
			if free(seat.Index) {
				out = append(out, seat.ID)
				if len(out) == n {
					return out, nil
				}
			} else {
				out = out[:0]
			}
		}
	}
	return nil, nil
}

func (r *run) paymentURL(ctx context.Context, s *shopper, order int64) (string, error) {
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		c, err := fan.Retry(ctx, func() (checkout, error) { u, o, err := s.Checkout(ctx, order); return checkout{u, o}, err })
		if err != nil {
			return "", err
		}
		if c.url != "" {
			return c.url, nil
		}
		if c.order.Payment != nil && c.order.Payment.URL != "" {
			return c.order.Payment.URL, nil
		}
		time.Sleep(time.Second) // queued behind the PSP quota
	}
	return "", ctx.Err()
}

type checkout struct {
	url   string
	order fan.Order
}

// settle waits for the webhook to land.
func (r *run) settle(ctx context.Context, s *shopper, order int64) fan.Order {
	var o fan.Order
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		var err error
		if o, err = s.Order(ctx, order); err == nil {
			if o.Status != "pending" || (o.Payment != nil && o.Payment.Status == "failed") {
				if o.Status == "paid" && len(o.Tickets) == 0 {
					time.Sleep(300 * time.Millisecond)
					continue
				}
				return o
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	return o
}

// remaining counts what is still available (lazy expiry included).
func (r *run) remaining(ctx context.Context) int64 {
	db, err := r.st.App.Shards.ForEvent(ctx, r.event)
	if err != nil {
		return -1
	}
	var n int64
	err = db.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM event_seats WHERE event_id = $1 AND (status = 'available' OR status = 'held' AND held_until < now()))
		+ (SELECT coalesce(sum(s.remaining), 0) FROM ga_slots s JOIN ga_pools p ON p.id = s.pool_id WHERE p.event_id = $1)`, r.event).Scan(&n)
	if err != nil {
		return -1
	}
	return n
}

// createAccounts inserts fans' accounts in one statement (made ahead of the
// sale; nobody logs in during it).
func createAccounts(ctx context.Context, catalog *pgxpool.Pool, n int) ([]int64, error) {
	stamp := time.Now().UnixNano()
	rows, err := catalog.Query(ctx, `INSERT INTO accounts (email, name, password_hash)
		SELECT 'sim-' || $2::text || '-' || g || '@catraca.dev', 'Fan ' || g, 'x' FROM generate_series(1, $1) g RETURNING id`, n, fmt.Sprint(stamp))
	if err != nil {
		return nil, fmt.Errorf("create accounts: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}
