// Package onsale plays an on-sale against a running local stack: N fans
// with accounts made ahead join the pre-queue, get drawn, wait cheaply,
// shop when admitted (a slightly stale map, so collisions happen), pay on
// the PSP's page or walk away. Chaos can hit Redis, PostgreSQL or the PSP
// mid-sale. Afterwards Check verifies the invariants straight against the
// databases and the PSP simulator.
package onsale

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/fan"
	"github.com/catraca/catraca/tools/loadstat"
	"github.com/catraca/catraca/tools/localenv"
	"github.com/catraca/catraca/tools/stack"
)

// Options shape one on-sale.
type Options struct {
	Fans    int
	Seats   int // reserved seats (at least)
	GA      int // standing places
	Ceiling int // shoppers at once
	Workers int // concurrent HTTP clients
	// Think is the longest a fan looks at the map before holding, and
	// again at the order before paying.
	Think time.Duration
	// PSPRate is the provider's API limit (operations per second); the
	// stack must be configured to stay under it.
	PSPRate     int
	DeclineRate float64
	AbandonRate float64
	Chaos       string // "", redis-kill, redis-failover, pg-restart, psp-outage, dup-webhooks, slow-psp
	// Cluster is the Redis Cluster the stack uses, for redis-failover.
	Cluster  *localenv.Cluster `json:"-"`
	Deadline time.Duration
	// HoldTTL and ActiveTTL (seconds) bound how long a walked-away fan
	// keeps seats and a shopping slot.
	HoldTTL, ActiveTTL int
	// CommitDelay (µs) is the Aurora-like commit latency mode of the
	// shard databases (localenv.Env.SetCommitDelay); 0 is local commits.
	CommitDelay int
	// Farm, when it has bots, plays a scalper farm among the fans.
	Farm     Farm
	Progress func(Sample) `json:"-"` // called about once a second
}

// Sample is one second of the run.
type Sample struct {
	T        float64 `json:"t"`
	Waiting  int64   `json:"waiting"`
	Active   int64   `json:"active"`
	Ceiling  int64   `json:"ceiling"` // the adaptive ceiling's current value
	Admitted int64   `json:"admitted"`
	Sold     int64   `json:"sold"`
	Errors   int64   `json:"errors"`
}

// Run plays the on-sale on st; env is the servers chaos acts on.
func Run(ctx context.Context, st *stack.Stack, env localenv.Env, o Options) (*Report, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Deadline)
	defer cancel()
	r := &run{st: st, env: env, o: o, lat: newLatencies(), rep: &Report{Options: o}}
	if err := r.setup(ctx); err != nil {
		return nil, err
	}
	if err := r.measureCommits(ctx); err != nil {
		return nil, err
	}
	// Accounts and events exist long before a real on-sale and their WAL
	// is long checkpointed; so here, a pg-restart run's crash recovery
	// replays the sale, not the set-up.
	if _, err := st.App.Catalog.Exec(ctx, "CHECKPOINT"); err != nil {
		return nil, fmt.Errorf("checkpoint after set-up: %w", err)
	}
	rep, err := r.play(ctx)
	check, done := context.WithTimeout(context.Background(), 90*time.Second)
	defer done()
	if err != nil {
		// A run cut short still says where the farm's tickets were.
		if o.Farm.Bots > 0 {
			rep.Farm, _ = r.tally(check)
		}
		return rep, err
	}
	// Webhooks, refunds and emails settle asynchronously: check until the
	// state converges (or report what is still wrong after 60 s).
	deadline := time.Now().Add(60 * time.Second)
	for {
		vs, err := r.check(check)
		if err == nil && (len(vs) == 0 || time.Now().After(deadline)) {
			rep.Violations = vs
			if o.Farm.Bots > 0 || o.Farm.FamilyShare > 0 {
				rep.Farm, err = r.tally(check)
			}
			return rep, err
		}
		if err != nil && time.Now().After(deadline) {
			return rep, err
		}
		time.Sleep(2 * time.Second)
	}
}

type run struct {
	st     *stack.Stack
	env    localenv.Env
	o      Options
	event  int64
	layout venue.Layout
	fans   []*shopper
	lat    *latencies
	rep    *Report
	sold   atomic.Int64
	errs   atomic.Int64
	errMu  sync.Mutex
	kinds  map[string]int64 // errors by route and status, for the report
	left   atomic.Int64     // tickets left to hold, as the main loop last counted
	origin atomic.Int64     // queue requests that reached the API
	tr     *http.Transport
	// progress is the shared progress as the main loop last read it.
	progress atomic.Pointer[fan.Progress]
	shoppers sync.WaitGroup
	// maxPerAccount is the event's limit; farm the scalper farm, if any.
	maxPerAccount int
	farm          *farmer
}

type shopper struct {
	*fan.Fan
	place int64 // number in line
	// mu is held while the fan's status is asked: the main loop (near the
	// front) and the heartbeats never ask for one fan at once.
	mu     sync.Mutex
	asked  time.Time
	done   bool
	learnt bool // read its place after the draw
	card   string
	bot    bool // one of the farm's (farm.go)
	// refused: a hold refused by a limit (see refusedAt).
	refused bool
}

func (r *run) setup(ctx context.Context) error {
	a := r.st.App
	org := organizer.New(a.Catalog, a.Shards)
	acc, err := a.Accounts.SignUp(ctx, fmt.Sprintf("onsale-org-%d@catraca.dev", time.Now().UnixNano()), "organizer-password", "Organizer")
	if err != nil {
		return err
	}
	l, err := org.ImportLayoutAs(ctx, acc.ID, 0, venue.Stadium("Simulated Stadium", "Rio de Janeiro", r.o.Seats, r.o.GA))
	if err != nil {
		return err
	}
	r.layout = l
	// Accounts made ahead: one row each, sessions signed as at log-in.
	r.tr = &http.Transport{MaxIdleConnsPerHost: r.o.Workers * 2, MaxConnsPerHost: r.o.Workers * 2}
	if err := r.newShoppers(ctx); err != nil {
		return err
	}
	// The pre-queue opens now; the sale is moved to start once everyone
	// has joined (startSale), however long the joins take on this machine.
	now := time.Now().UTC()
	opens := now.Add(-time.Minute)
	e, err := org.CreateEvent(ctx, acc.ID, organizer.EventSpec{VenueID: l.VenueID, LayoutVersion: l.Version, Name: "Simulated On-Sale",
		Category: "music", StartsAt: now.Add(30 * 24 * time.Hour), SaleStartsAt: now.Add(time.Hour), SaleEndsAt: now.Add(24 * time.Hour),
		HoldTTL: r.o.HoldTTL, MaxPerHold: 4, MaxPerAccount: 4,
		PriceLevels: []event.PriceLevel{{Code: "A", Name: "A", PriceCents: 45000}, {Code: "B", Name: "B", PriceCents: 32000},
			{Code: "C", Name: "C", PriceCents: 18000}, {Code: "GA", Name: "Floor", PriceCents: 25000}},
		WaitingRoom: event.WaitingRoom{Enabled: true, PrequeueOpensAt: &opens, Ceiling: r.o.Ceiling, ActiveTTL: r.o.ActiveTTL, AdmissionTTL: r.o.ActiveTTL}})
	if err != nil {
		return err
	}
	if err := org.SetStatus(ctx, e.ID, "on_sale"); err != nil {
		return err
	}
	r.event, r.maxPerAccount = e.ID, e.MaxPerAccount
	if err := r.st.WaitForRoom(ctx, e.ID); err != nil {
		return err
	}
	r.rep.Event, r.rep.Tickets = e.ID, int64(l.SeatCount()+r.o.GA)
	return nil
}

// measureCommits records what one commit costs on the event's shard: the
// latency the commit mode (Options.CommitDelay) gives.
func (r *run) measureCommits(ctx context.Context) error {
	db, err := r.st.App.Shards.ForEvent(ctx, r.event)
	if err != nil {
		return err
	}
	c, err := loadstat.CommitLatency(ctx, db, 200)
	if err != nil {
		return err
	}
	r.rep.CommitP50, r.rep.CommitP99 = ms(c.P50), ms(c.P99)
	return nil
}

// startSale moves the sale (the draw) to a few seconds from now, as an
// organizer announcing the time would have, once every fan is in the
// pre-queue: the controller publishes it within a tick, and the API's
// event cache (2 s) has the new time before anyone is admitted.
func (r *run) startSale(ctx context.Context) error {
	_, err := r.st.App.Catalog.Exec(ctx, `UPDATE events SET sale_starts_at = now() + interval '3 seconds' WHERE id = $1`, r.event)
	return err
}

func (r *run) observe(route string, status int, d time.Duration) {
	r.lat.add(route, d)
	if strings.HasPrefix(route, "hold.") {
		r.lat.add("hold", d) // every shape together, for the target
	}
	if status == 0 || (status >= 500 && status != 503) {
		what := "transport error"
		if status != 0 {
			what = strconv.Itoa(status)
		}
		r.failed(route + " " + what)
	}
}

// failed counts one error of a kind.
func (r *run) failed(kind string) {
	r.errs.Add(1)
	r.errMu.Lock()
	defer r.errMu.Unlock()
	if r.kinds == nil {
		r.kinds = map[string]int64{}
	}
	r.kinds[kind]++
}

// pool runs fn over items with the configured number of workers.
func pool[T any](ctx context.Context, workers int, items []T, fn func(T)) {
	ch := make(chan T)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range ch {
				fn(it)
			}
		}()
	}
	for _, it := range items {
		select {
		case ch <- it:
		case <-ctx.Done():
		}
	}
	close(ch)
	wg.Wait()
}

// play runs the sale's steps: the pre-queue, the draw, then admission and
// shopping until nothing is left, timed from the draw (what a fan feels)
// and from admission start (what the waiting room controls).
func (r *run) play(ctx context.Context) (*Report, error) {
	start := time.Now()
	stopSampling := r.sample(ctx, start)
	defer stopSampling()
	r.prequeue(ctx)
	r.rep.JoinSeconds = time.Since(start).Seconds()
	if err := r.startSale(ctx); err != nil {
		return r.rep, err
	}
	drawn, admitting := r.awaitDraw(ctx)
	r.rep.DrawAt, r.rep.AdmitAt = drawn.Sub(start).Seconds(), admitting.Sub(start).Seconds()
	chaos := r.startChaos(ctx, admitting)
	soldOutAt := r.sell(ctx, start, drawn)
	r.rep.SellOutSeconds = soldOutAt.Sub(admitting).Seconds()
	r.shoppers.Wait()
	chaos()
	r.rep.finish(r)
	return r.rep, ctx.Err()
}

// prequeue has everyone join before the draw.
func (r *run) prequeue(ctx context.Context) {
	pool(ctx, r.o.Workers, r.fans, func(s *shopper) {
		began := time.Now()
		if _, err := fan.Retry(ctx, func() (fan.QueueStatus, error) { return s.Join(ctx, r.event) }); err != nil {
			r.failed("queue.join gave up")
			slog.Debug("join", "err", err)
		}
		r.origin.Add(1)
		// A fan's whole join, a solved challenge included: what it costs.
		if !s.bot {
			took := time.Since(began)
			r.lat.add(joinFan, took)
			if n, _ := s.Challenged(); n > 0 {
				r.lat.add(joinFanChallenged, took)
			}
		}
	})
}

// awaitDraw waits for the draw and returns when it was seen and when
// admission starts (the stack's RoomAdmitDelay after it, 0 by default).
func (r *run) awaitDraw(ctx context.Context) (drawn, admitting time.Time) {
	for ctx.Err() == nil {
		p, err := r.fans[0].Progress(ctx, r.event)
		if err == nil && p.Phase == "drawn" {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	drawn, admitting = time.Now(), time.Now()
	if p, err := r.fans[0].Progress(ctx, r.event); err == nil && p.AdmitAt.After(drawn) {
		admitting = p.AdmitAt
	}
	return drawn, admitting
}

// sell lets every fan learn its place while admission runs, and polls the
// fans near the front until nothing is left to hold; it returns when that
// was. Learning a place is one status read per fan (100,000 take minutes
// on a loaded machine): done in the background with the heartbeats, it
// delays no turn but that of a fan admitted before it read, who then learns
// it on that read. The fans near the front are polled on their own, so
// neither the first reads nor the heartbeats hold up a turn.
func (r *run) sell(ctx context.Context, start, drawn time.Time) (soldOutAt time.Time) {
	r.progress.Store(&fan.Progress{})
	var stop atomic.Bool
	waiting := make(chan struct{})
	go func() {
		defer close(waiting)
		r.heartbeats(ctx, start, drawn, &stop)
	}()
	defer func() { stop.Store(true); <-waiting }()
	for ctx.Err() == nil {
		p, err := r.fans[0].Progress(ctx, r.event)
		if err == nil {
			r.progress.Store(&p)
		}
		left := r.remaining(ctx)
		r.left.Store(left)
		if p.SoldOut || left == 0 {
			return time.Now()
		}
		near := r.nearFront(*r.progress.Load())
		if len(near) == 0 && allDone(r.fans) {
			break
		}
		pool(ctx, r.o.Workers, near, func(s *shopper) { r.askIf(ctx, s, start, func() bool { return true }) })
		time.Sleep(nearPoll / 2)
	}
	return time.Now()
}

// heartbeats reads every waiting fan's status: first all of them, once,
// to learn their places (the room's first reads after the draw), then each
// one every heartbeat, until stop.
func (r *run) heartbeats(ctx context.Context, start, drawn time.Time, stop *atomic.Bool) {
	for first := true; ctx.Err() == nil && !stop.Load(); first = false {
		pool(ctx, r.o.Workers, r.fans, func(s *shopper) {
			if stop.Load() {
				return
			}
			r.askIf(ctx, s, start, func() bool { return !s.learnt || time.Since(s.asked) > heartbeat })
		})
		if first {
			r.rep.LearnSeconds = time.Since(drawn).Seconds()
		}
		time.Sleep(time.Second)
	}
}

// nearFront are the fans who know their place and, near the front, should
// read their status now (every nearPoll). A fan being asked is skipped.
func (r *run) nearFront(progress fan.Progress) []*shopper {
	var due []*shopper
	for _, s := range r.fans {
		if !s.mu.TryLock() {
			continue
		}
		if s.learnt && !s.done && s.place <= progress.Served+near(progress) && time.Since(s.asked) > nearPoll {
			due = append(due, s)
		}
		s.mu.Unlock()
	}
	return due
}

// askIf asks for s's status when nobody else is asking and when still
// holds; a fan who is done is never asked again.
func (r *run) askIf(ctx context.Context, s *shopper, start time.Time, when func() bool) {
	if !s.mu.TryLock() {
		return
	}
	defer s.mu.Unlock()
	if s.done || !when() {
		return
	}
	r.ask(ctx, s, start)
	s.learnt = true
}

// ask (s.mu held) reads a fan's status: admitted, it goes shopping; still
// waiting, its place is the served count the shared progress last showed
// plus its position (an underestimate while admission moves, so it asks
// early, never late).
func (r *run) ask(ctx context.Context, s *shopper, start time.Time) {
	s.asked = time.Now()
	st, err := fan.Retry(ctx, func() (fan.QueueStatus, error) { return s.Status(ctx, r.event) })
	r.origin.Add(1)
	if err != nil {
		return
	}
	switch st.State {
	case "admitted":
		s.done = true
		r.shoppers.Add(1)
		go func() {
			defer r.shoppers.Done()
			began := time.Now()
			shop := r.shop
			if s.bot {
				shop = r.scalp
			}
			freed := shop(ctx, s)
			r.rep.mu.Lock()
			r.rep.shops = append(r.rep.shops, shopTime{began.Sub(start).Seconds(), freed.Sub(began).Seconds()})
			r.rep.mu.Unlock()
		}()
	case "soldout", "expired", "none":
		s.done = true
	default:
		s.place = r.progress.Load().Served + st.Position
	}
}

// near is how close to the front (in places past the shared, up to ~1 s
// old, served count: two seconds of admissions) a fan reads its own status every nearPoll, as the web app
// does: the turn is picked up about when it comes, not a progress poll later.
func near(p fan.Progress) int64 {
	return 20 + max(p.Ceiling/4, p.PerMin/30)
}

const nearPoll = time.Second

// heartbeat is how often a waiting fan reads its own status regardless
// (the room drops fans silent for 3 minutes).
const heartbeat = 150 * time.Second

// allDone: every fan shopped or learnt it never will (one being asked is
// not done yet).
func allDone(fans []*shopper) bool {
	for _, s := range fans {
		if !s.mu.TryLock() {
			return false
		}
		done := s.done
		s.mu.Unlock()
		if !done {
			return false
		}
	}
	return true
}
