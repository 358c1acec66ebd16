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

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/tools/fan"
	"github.com/catraca/catraca/tools/pspsim"
)

// declinedCard is the PSP simulator's declining card; a fan's good card
// is its own (pspsim.PersonCard).
const declinedCard = pspsim.CardDeclined

// shop is one admitted fan: look at the map, think, hold (fewer tickets
// when the wanted number is not there), think again, pay or walk away. A fan who ends
// without tickets leaves the room, as closing the page with "leave" would.
// It returns when the fan's shopping slot was freed: at payment, or when it
// left.
func (r *run) shop(ctx context.Context, s *shopper) (freed time.Time) {
	defer func() {
		if freed.IsZero() {
			s.Leave(ctx, r.event)
			freed = time.Now()
		}
	}()
	snap, err := r.snapshot(ctx, s)
	if err != nil {
		return
	}
	think(ctx, r.o.Think)
	h, err := r.hold(ctx, s, snap, 1+rand.IntN(4))
	if err != nil {
		r.refusedAt(s, err)
		return
	}
	if rand.Float64() < r.o.AbandonRate {
		r.rep.addAbandon()
		return // walks away: the hold expires and the seats come back
	}
	think(ctx, r.o.Think) // reviews the order, types the card
	card := s.card
	if rand.Float64() < r.o.DeclineRate {
		card = declinedCard
	}
	_, freed = r.buy(ctx, s, h, card)
	return freed
}

// buy pays for a hold with card, and with the fan's own card if that one
// is declined, as a fan would; freed is when the purchase freed the
// fan's slot (zero when it did not). A fan whose payment cannot go
// through lets the seats go.
func (r *run) buy(ctx context.Context, s *shopper, h fan.Hold, card string) (o fan.Order, freed time.Time) {
	defer func() {
		if o, err := s.Order(ctx, h.OrderID); err == nil && o.Status == "pending" {
			s.Release(ctx, h.HoldID)
		}
	}()
	for try := 0; try < 2; try++ {
		url, err := r.paymentURL(ctx, s, h.OrderID)
		if err != nil || url == "" {
			return o, freed
		}
		if err := s.PayOnPage(ctx, url, card); err != nil {
			continue
		}
		if o = r.settle(ctx, s, h.OrderID); o.Status == "paid" {
			r.sold.Add(int64(len(o.Tickets)))
			freed = time.Now()
			if o.PaidAt != nil {
				freed = *o.PaidAt // the purchase itself freed the slot
			}
			return o, freed
		}
		card = s.card // declined once: try the other card, like a fan would
	}
	return o, freed
}

// think waits a fan's reaction time, uniformly up to max.
func think(ctx context.Context, max time.Duration) {
	if max <= 0 {
		return
	}
	select {
	case <-time.After(rand.N(max)):
	case <-ctx.Done():
	}
}

// hold tries n tickets, then fewer: a collision on picked seats re-picks
// from the refreshed map, a sold-out answer tries one ticket less.
func (r *run) hold(ctx context.Context, s *shopper, snap []byte, n int) (fan.Hold, error) {
	var h fan.Hold
	var err error
	for attempt := 0; attempt < 6 && n > 0; attempt++ {
		h, err = r.holdOnce(ctx, s, snap, n)
		var e *fan.Error
		switch {
		case err == nil || !errors.As(err, &e):
			return h, err
		case e.Code == "seats-taken":
			r.rep.addCollision()
			if fresh, ferr := r.snapshot(ctx, s); ferr == nil {
				snap = fresh
			}
		case e.Code == "sold-out" && r.left.Load() > 0:
			n-- // not n together any more: take fewer
		default:
			return h, err
		}
	}
	return h, err
}

func (r *run) holdOnce(ctx context.Context, s *shopper, snap []byte, n int) (fan.Hold, error) {
	switch x := rand.Float64(); {
	case x < 0.15 && r.o.GA > 0:
		return fan.Retry(ctx, func() (fan.Hold, error) { return s.HoldGA(ctx, r.event, "FLOOR", n) })
	case x < 0.35:
		return fan.Retry(ctx, func() (fan.Hold, error) { return s.HoldBest(ctx, r.event, n, "") })
	}
	seats := r.pick(snap, n)
	if len(seats) == 0 {
		return fan.Retry(ctx, func() (fan.Hold, error) { return s.HoldBest(ctx, r.event, n, "") })
	}
	return fan.Retry(ctx, func() (fan.Hold, error) { return s.HoldSeats(ctx, r.event, seats) })
}

// snapshot reads the (edge-cached, up to ~2 s old) availability bitmap.
func (r *run) snapshot(ctx context.Context, s *shopper) ([]byte, error) {
	var snap struct {
		Available string `json:"available"`
	}
	if err := s.Call(ctx, "availability", "GET", fmt.Sprintf("/api/events/%d/availability", r.event), nil, &snap); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(snap.Available)
}

// pick chooses n seats of one row that the snapshot shows free.
func (r *run) pick(bits []byte, n int) []int64 {
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
					return out
				}
			} else {
				out = out[:0]
			}
		}
	}
	return nil
}

// paymentURL starts the payment once, then, while it waits behind the PSP
// quota, reads the order until the payment page is there (as the web app
// does).
func (r *run) paymentURL(ctx context.Context, s *shopper, order int64) (string, error) {
	c, err := fan.Retry(ctx, func() (checkout, error) { u, o, err := s.Checkout(ctx, order); return checkout{u, o}, err })
	url, o := c.url, c.order
	deadline := time.Now().Add(90 * time.Second)
	for err == nil && url == "" && time.Now().Before(deadline) && ctx.Err() == nil {
		if o.Payment != nil && o.Payment.URL != "" {
			return o.Payment.URL, nil
		}
		if o.Status != "pending" || (o.Payment != nil && o.Payment.Status == "failed") {
			return "", nil
		}
		time.Sleep(time.Second) // queued behind the PSP quota
		o, err = s.Order(ctx, order)
	}
	return url, err
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
		time.Sleep(time.Second) // the web app reads every 1.5 s
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

// createAccounts inserts n accounts (prefix-1@catraca.dev, …) in one
// statement (made ahead of the sale; nobody logs in during it).
func createAccounts(ctx context.Context, catalog *pgxpool.Pool, prefix string, n int) ([]int64, error) {
	rows, err := catalog.Query(ctx, `INSERT INTO accounts (email, name, password_hash)
		SELECT $2::text || '-' || g || '@catraca.dev', 'Fan ' || g, 'x' FROM generate_series(1, $1) g RETURNING id`, n, prefix)
	if err != nil {
		return nil, fmt.Errorf("create accounts: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// Tune is what the plain on-sale run's configuration turns off: every
// rule of Defenses, as runs before the scalper farm did (each fan now
// pays with a card of its own, so the per-card limit refuses nobody
// there; the farm run measures the rules on and off).
func Tune(c *config.Config) { DefensesOff(c) }
