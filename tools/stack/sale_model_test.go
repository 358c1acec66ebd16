package stack_test

// The model-based test of the whole sale (issue 15, "make the class
// impossible"): rapid draws random interleavings of what fans, the
// organizer, the PSP and the scheduled workers do, plays them through the
// public HTTP API of the in-process stack on real PostgreSQL and Redis, and
// checks the sale's invariants after every step. A failing sequence shrinks
// to a minimal one; -rapid.seed replays it. docs/testing.md lists the
// invariants and the commands.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"pgregory.net/rapid"

	"github.com/catraca/catraca/shared/account/pgstore"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/fan"
	"github.com/catraca/catraca/tools/pspsim"
	"github.com/catraca/catraca/tools/stack"
	"github.com/catraca/catraca/tools/testenv"
	"github.com/stripe/stripe-go/v82"
)

// The invariants, as failures name them.
const (
	noDoubleSale   = "no seat or place sold twice"
	withinLimit    = "paid tickets per account ≤ limit"
	paidInFull     = "every paid order was paid its total in its currency"
	priceInForce   = "every sale is charged the price in force when its place was taken"
	moneyConserves = "money conserves (charges − refunds and disputes at the PSP = paid orders)"
	placeOrder     = "admission follows place order among fans still waiting"
	noRestore      = "no served or given-up place is restored"
	withinCeiling  = "active shoppers ≤ ceiling"
	no5xx          = "no 5xx (nor a failed worker or a refused genuine webhook)"
	withinCap      = "no hold outlives its cap (a Pix's wait included)"
)

// only narrows the checks, to shrink one failure at a time.
var only = flag.String("sale.only", "", "check only the invariants whose name contains this")

// shortChecks is the number of sequences make test plays (make model
// passes -rapid.checks for a long run); steps is their average length:
// a purchase is a chain of seven steps among twenty kinds.
const (
	shortChecks = 8
	steps       = 100
)

// weights repeat the steps of a purchase among the actions rapid draws
// from, so that sequences reach payments and refunds often.
var weights = map[string]int{"Join": 2, "Tick": 2, "Status": 2, "Hold": 3, "Checkout": 3, "Pay": 3, "Deliver": 3, "Release": 2}

func (m *model) actions() map[string]func(*rapid.T) {
	actions := rapid.StateMachineActions(m)
	for name, w := range weights {
		for i := 2; i <= w; i++ {
			actions[fmt.Sprintf("%s (%d)", name, i)] = actions[name]
		}
	}
	return actions
}

func TestSaleModel(t *testing.T) {
	for name, value := range map[string]int{"checks": shortChecks, "steps": steps} {
		if !flagGiven("rapid."+name) && os.Getenv("RAPID_"+strings.ToUpper(name)) == "" {
			flag.Set("rapid."+name, strconv.Itoa(value))
		}
	}
	s := newSale(t)
	rapid.Check(t, func(rt *rapid.T) {
		m := s.newModel(rt)
		rt.Repeat(m.actions())
		m.finish(rt)
	})
	t.Logf("over %d sequences: %v", s.checks, s.seen)
}

func flagGiven(name string) bool {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// Sale sizes: small, so that sequences of a few dozen steps collide, sell
// out and hit the limits.
const (
	rows, perRow  = 2, 4
	floorCapacity = 6
	maxPerHold    = 2
	maxPerAccount = 3
	holdTTL       = 120 // seconds
	holdCap       = 900 // seconds, the catalog's default hold_cap_seconds
	activeTTL     = 900 // seconds, a shopping slot and its token
	maxFans       = 5
	password      = "model-password-1"
)

// sale is what every sequence shares: one stack, its organizer and venue,
// and the webhook capture.
type sale struct {
	st      *stack.Stack
	ctx     context.Context
	hooks   *capture
	psp     *psp.Stripe
	secret  string
	org     *fan.Fan
	venue   int64
	seats   []int64
	tr      *http.Transport
	checks  int
	emailNo int
	seen    map[string]int // what the sequences reached, for the log
	// roomNow is the waiting room's clock (Unix nanoseconds): it stands
	// still but for ticks and Expire, so that a replay sees the same times
	// (shopping slots, heartbeats, the hold rate limit's refills).
	roomNow atomic.Int64
}

func newSale(t *testing.T) *sale {
	ctx := context.Background()
	cfg := testenv.Config(t, testenv.NewDatabases(t, 2))
	cfg.PSPRate = 100_000 // no checkout queued behind the quota: a queued one completes in the background, out of step
	st, err := stack.Start(ctx, cfg, stack.Options{Manual: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	s := &sale{st: st, ctx: ctx, hooks: &capture{}, psp: psp.NewStripe(st.PSPURL, cfg.PSPAPIKey),
		secret: cfg.PSPWebhookSecrets[0], seen: map[string]int{}, tr: &http.Transport{MaxIdleConnsPerHost: 16}}
	// The simulator's deliveries come to the test, which replays them to
	// the shop in the order (and as many times) the sequence says.
	st.SetRoomClock(func() time.Time { return time.Unix(0, s.roomNow.Load()) })
	hooks := httptest.NewServer(s.hooks)
	t.Cleanup(hooks.Close)
	st.Sim.SetWebhookURL(hooks.URL)

	s.org = fan.New(st.URL, s.tr)
	if err := s.org.SignUp(ctx, "organizer@model.test", password, "Organizer"); err != nil {
		t.Fatal(err)
	}
	if err := pgstore.New(st.App.Catalog).SetRole(ctx, s.org.Account, "organizer"); err != nil {
		t.Fatal(err)
	}
	if err := s.org.LogIn(ctx, "organizer@model.test", password); err != nil {
		t.Fatal(err)
	}
	var v struct {
		VenueID int64 `json:"venue_id"`
	}
	if err := s.org.Call(ctx, "venue", http.MethodPost, "/api/venues", smallVenue(), &v); err != nil {
		t.Fatal(err)
	}
	l, err := venue.NewStore(st.App.Catalog).Load(ctx, v.VenueID, 1)
	if err != nil {
		t.Fatal(err)
	}
	s.venue = v.VenueID
	for _, sec := range l.Sections {
		for _, r := range sec.Rows {
			for _, seat := range r.Seats {
				s.seats = append(s.seats, seat.ID)
			}
		}
	}
	return s
}

// smallVenue is one seated section (rows × perRow) and a standing floor.
func smallVenue() venue.Layout {
	sec := venue.Section{Code: "S1", Name: "Section 1", Kind: "seated", Rank: 1, PriceLevel: "A",
		Shape: [][2]int{{10, 10}, {90, 10}, {90, 40}, {10, 40}}}
	for r := range rows {
		row := venue.Row{Label: string(rune('A' + r)), Rank: r + 1}
		for n := range perRow {
			row.Seats = append(row.Seats, venue.Seat{Number: n + 1, X: float32(20 + 15*n), Y: float32(15 + 10*r)})
		}
		sec.Rows = append(sec.Rows, row)
	}
	return venue.Layout{Name: "Model Hall", City: "Recife", Width: 100, Height: 100, Sections: []venue.Section{
		{Code: "FLOOR", Name: "Floor", Kind: "standing", Rank: 0, PriceLevel: "GA", Capacity: floorCapacity,
			Shape: [][2]int{{10, 50}, {90, 50}, {90, 90}, {10, 90}}}, sec}}
}

// capture records the simulator's webhook deliveries.
type capture struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.bodies = append(c.bodies, b)
	c.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (c *capture) since(n int) (int, [][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.bodies), slices.Clone(c.bodies[n:])
}

// model is one sequence: a fresh event, its fans and what the test knows.
type model struct {
	s     *sale
	ctx   context.Context
	event int64
	start time.Time
	// room tells whether the event has a waiting room: most sequences
	// do; without one, anyone holds and a payment after its hold ended
	// may take the places again (a payment carries no admission).
	room    bool
	ceiling int
	prices  map[string]int
	fans    []*shopper
	orders  []*order
	byID    map[int64]*order
	// Simulator payments the test made itself (wrong amounts, currencies,
	// references or orders), and every payment of this sequence.
	forged             map[string]bool
	hooksSeen          int
	pending, delivered [][]byte
	maxPlace           int64
	failures           []string // 5xx answers seen since the last check
	// clock is how far Expire moved the hold clock, in seconds; pixes
	// are the Pix codes shown, which expire on the PSP's side when that
	// clock passes them.
	clock int64
	pixes []*pix
}

// pix is a Pix code shown on an order's page.
type pix struct {
	session string
	order   *order
	expires time.Time // on the PSP's clock (real time)
	clock   int64     // the model's clock when it was shown
}

// overdue tells whether the model's time is past the code's expiry.
func (p *pix) overdue(clock int64) bool {
	return !time.Now().Add(time.Duration(clock-p.clock) * time.Second).Before(p.expires)
}

type shopper struct {
	*fan.Fan
	ticket   string // last queue ticket
	place    int64  // place number of the current place (0: unknown)
	inLine   bool   // holds a place (waiting or admitted)
	hadPlace bool   // had a place before (given up, served or dropped)
	served   bool   // the current place was admitted
	slot     bool   // admitted, token picked up, not left or bought since
}

type order struct {
	id, hold int64
	owner    *shopper
	urls     []string
	status   string
	total    int64
	currency string
	prices   map[string]int // the levels' prices when the hold took its places
	seats    []int64        // the layout ids of its seats
	levels   []string       // the price levels of its places
}

func (s *sale) newModel(t *rapid.T) *model {
	s.checks++
	if now := time.Now().UnixNano(); now > s.roomNow.Load() {
		s.roomNow.Store(now) // each sequence starts at real time or later
	}
	m := &model{s: s, ctx: s.ctx, start: time.Now(), ceiling: 2,
		prices: map[string]int{"A": 9000, "GA": 5000}, byID: map[int64]*order{}, forged: map[string]bool{}}
	m.room = rapid.IntRange(0, 2).Draw(t, "waiting room") > 0
	now := time.Now().UTC()
	var e struct {
		ID int64 `json:"id"`
	}
	err := s.org.Call(m.ctx, "event", http.MethodPost, "/api/events", map[string]any{
		"venue_id": s.venue, "layout_version": 1, "name": fmt.Sprintf("Model sale %d", s.checks), "category": "music",
		"starts_at": now.Add(72 * time.Hour), "sale_starts_at": now.Add(-time.Hour), "sale_ends_at": now.Add(71 * time.Hour),
		"max_per_hold": maxPerHold, "max_per_account": maxPerAccount, "hold_ttl_seconds": holdTTL,
		"price_levels": levels(m.prices),
		"waiting_room": map[string]any{"enabled": m.room, "ceiling": m.ceiling, "active_ttl_seconds": activeTTL, "admission_ttl_seconds": activeTTL},
	}, &e)
	if err != nil {
		t.Fatalf("create event: %v", err)
	}
	m.event = e.ID
	if err := s.org.Call(m.ctx, "status", http.MethodPut, fmt.Sprintf("/api/events/%d/status", m.event), map[string]string{"status": "on_sale"}, nil); err != nil {
		t.Fatalf("open sales: %v", err)
	}
	s.st.PublishKeys(m.ctx)
	if m.room {
		m.tick(t) // publishes the room
	}
	m.hooksSeen, _ = s.hooks.since(0)
	for range 2 {
		m.SignUp(t)
	}
	if len(m.fans) == 0 {
		t.Fatalf("no fan could sign up")
	}
	return m
}

func levels(prices map[string]int) []map[string]any {
	return []map[string]any{{"code": "A", "price_cents": prices["A"]}, {"code": "GA", "price_cents": prices["GA"]}}
}

// fail reports a violated invariant.
func (m *model) fail(t *rapid.T, inv, format string, args ...any) {
	if *only == "" || strings.Contains(inv, *only) {
		t.Fatalf("%s: %s", inv, fmt.Sprintf(format, args...))
	}
}

// observe sees every answer of the API.
func (m *model) observe(route string, status int, _ time.Duration) {
	if status == 0 || status >= 500 {
		m.failures = append(m.failures, fmt.Sprintf("%s answered %d", route, status))
	}
}

func (m *model) newFan() *fan.Fan {
	f := fan.New(m.s.st.URL, m.s.tr)
	f.Observe = m.observe
	return f
}

// ---- fans ----

func (m *model) SignUp(t *rapid.T) {
	if len(m.fans) >= maxFans {
		t.Skip("enough fans")
	}
	m.s.emailNo++
	f := m.newFan()
	if err := f.SignUp(m.ctx, fmt.Sprintf("fan%d@model.test", m.s.emailNo), password, "Fan"); err != nil {
		t.Logf("sign-up: %v", err)
		return
	}
	m.fans = append(m.fans, &shopper{Fan: f})
}

// rarely skips two times in three: steps that undo purchases (expiry,
// disputes, charges that must be given back) would otherwise leave few
// sequences with paid orders.
func rarely(t *rapid.T, what string) {
	if rapid.IntRange(0, 2).Draw(t, what) != 2 {
		t.Skip("no " + what + " this time")
	}
}

// pickFan draws a fan, mostly one for which pred holds (when there is).
func (m *model) pickFan(t *rapid.T, pred func(*shopper) bool) *shopper {
	var some []*shopper
	for _, f := range m.fans {
		if pred(f) {
			some = append(some, f)
		}
	}
	// Drawn whether or not it is needed, so that shrinking a sequence
	// keeps the later draws in step.
	if anyFan := rapid.IntRange(0, 3).Draw(t, "any fan") == 0; anyFan || len(some) == 0 {
		some = m.fans
	}
	return some[rapid.IntRange(0, len(some)-1).Draw(t, "fan")]
}

type queueAnswer struct {
	State  string `json:"state"`
	Ahead  int64  `json:"ahead"`
	Ticket string `json:"queue_ticket"`
}

// Join takes a place, sometimes presenting the last queue ticket in the
// header (as a client that kept it would) besides the cookie.
func (m *model) Join(t *rapid.T) {
	if !m.room {
		return // a step that does nothing: a skip would cut the sequence short
	}
	f := m.pickFan(t, func(f *shopper) bool { return !f.inLine })
	var header []string
	if f.ticket != "" && rapid.Bool().Draw(t, "replay ticket") {
		header = []string{"X-Queue-Ticket", f.ticket}
	}
	var a queueAnswer
	if err := f.Call(m.ctx, "queue.join", http.MethodPost, fmt.Sprintf("/api/events/%d/queue", m.event), nil, &a, header...); err != nil {
		t.Logf("join: %v", err)
		return
	}
	if a.State != "waiting" && a.State != "admitted" {
		return
	}
	claims, err := m.s.st.App.Tickets.Verify(a.Ticket)
	if err != nil {
		t.Fatalf("join answered %s with a bad queue ticket: %v", a.State, err)
	}
	f.ticket = a.Ticket
	if !f.inLine && f.hadPlace && claims.Place <= m.maxPlace {
		m.fail(t, noRestore, "account %d got place %d back (%s) after giving up or using its place; places up to %d were handed out",
			f.Account, claims.Place, a.State, m.maxPlace)
	}
	if !f.inLine || claims.Place != f.place {
		f.served = false
	}
	f.inLine, f.place = true, claims.Place
	m.maxPlace = max(m.maxPlace, claims.Place)
	t.Logf("account %d joined: place %d, %s", f.Account, claims.Place, a.State)
	if a.State == "admitted" {
		f.served, f.slot = true, true
	}
}

// Status is the fan's heartbeat; it picks up the admission token.
func (m *model) Status(t *rapid.T) {
	if !m.room {
		return
	}
	f := m.pickFan(t, func(f *shopper) bool { return f.inLine && !f.slot })
	var a queueAnswer
	if err := f.Call(m.ctx, "queue.status", http.MethodGet, fmt.Sprintf("/api/events/%d/queue", m.event), nil, &a); err != nil {
		t.Logf("status: %v", err)
		return
	}
	t.Logf("account %d: %s, %d ahead", f.Account, a.State, a.Ahead)
	switch a.State {
	case "admitted", "waiting":
		if !f.inLine {
			// The cookie put the fan back in line: only at the back.
			if a.State == "admitted" {
				m.fail(t, noRestore, "account %d, out of line, was admitted again by its queue ticket", f.Account)
			} else if waiting := m.waitingOthers(f); a.Ahead < waiting {
				m.fail(t, noRestore, "account %d, out of line, came back with %d ahead of it while %d wait", f.Account, a.Ahead, waiting)
			}
			f.inLine, f.place, f.served = true, 0, false // its number is not told: unknown until it joins
		}
		if a.State == "admitted" {
			f.served, f.slot = true, true
		}
	case "none", "expired", "soldout":
		f.inLine, f.slot = false, false
		f.hadPlace = f.hadPlace || f.place > 0
	}
}

func (m *model) waitingOthers(self *shopper) int64 {
	n := int64(0)
	for _, f := range m.fans {
		if f != self && f.inLine && !f.served {
			n++
		}
	}
	return n
}

func (m *model) Leave(t *rapid.T) {
	if !m.room {
		return
	}
	f := m.pickFan(t, func(f *shopper) bool { return f.inLine })
	if err := f.Leave(m.ctx, m.event); err != nil {
		t.Logf("leave: %v", err)
		return
	}
	t.Logf("account %d left", f.Account)
	f.endPlace()
}

func (f *shopper) endPlace() {
	f.hadPlace = f.hadPlace || f.inLine
	f.inLine, f.slot = false, false
}

// ---- the admission controller ----

// heartbeat reads a fan's state through its heartbeat. Every call spends
// from the fan's bucket, which refills slower than a tick a second spends
// on each fan in line: when told to slow down, the fan waits as asked (the
// room's clock moves on) and calls again, as a browser does.
func (m *model) heartbeat(f *shopper) (queue.Status, error) {
	for {
		st, err := m.s.st.App.Room.Status(m.ctx, m.event, f.Account, 0)
		var slow queue.SlowDown
		if !errors.As(err, &slow) {
			return st, err
		}
		m.s.roomNow.Add(int64(slow.Wait))
	}
}

func (m *model) Tick(t *rapid.T) {
	if m.room {
		m.tick(t)
	}
}

// tick is one admission tick, a second after the last one on the room's
// clock (the ceiling adapts at most once a second).
func (m *model) tick(t *rapid.T) {
	m.s.roomNow.Add(int64(time.Second))
	room := m.s.st.App.Room
	before, err := room.Progress(m.ctx, m.event)
	if err != nil {
		t.Fatalf("progress: %v", err)
	}
	ctl := m.s.st.Functions.Admission
	events, err := ctl.Events.WaitingRoomEvents(m.ctx, time.Now())
	if err != nil {
		t.Fatalf("waiting-room events: %v", err)
	}
	i := slices.IndexFunc(events, func(e event.Event) bool { return e.ID == m.event })
	if i < 0 {
		t.Fatalf("event %d has no live waiting room", m.event)
	}
	if _, err := ctl.Tick(m.ctx, events[i]); err != nil {
		m.failures = append(m.failures, "admission tick: "+err.Error())
		return
	}
	after, err := room.Progress(m.ctx, m.event)
	if err != nil {
		t.Fatalf("progress: %v", err)
	}
	if after.Admitted > before.Admitted && after.Active > int64(m.ceiling) {
		m.fail(t, withinCeiling, "a tick admitted %d with %d active shoppers over a ceiling of %d",
			after.Admitted-before.Admitted, after.Active, m.ceiling)
	}
	// Who is in now, as the room sees it.
	var admitted, waiting []*shopper
	for _, f := range m.fans {
		if !f.inLine {
			continue
		}
		st, err := m.heartbeat(f)
		if err != nil {
			t.Fatalf("room status: %v", err)
		}
		switch st.State {
		case "admitted":
			if !f.served {
				admitted = append(admitted, f)
			}
		case "waiting":
			waiting = append(waiting, f)
		case "none", "expired":
			f.endPlace() // dropped: missed heartbeats, or the turn ran out
		}
	}
	m.s.seen["admissions"] += len(admitted)
	for _, a := range admitted {
		t.Logf("tick admitted account %d (place %d)", a.Account, a.place)
	}
	for _, a := range admitted {
		for _, w := range waiting {
			if w.place > 0 && w.place < a.place {
				m.fail(t, placeOrder, "place %d (account %d) was admitted while place %d (account %d) waits",
					a.place, a.Account, w.place, w.Account)
			}
		}
		a.served = true
	}
}

// ---- holds ----

func (m *model) Hold(t *rapid.T) {
	f := m.pickFan(t, func(f *shopper) bool { return f.slot || !m.room })
	var h fan.Hold
	var err error
	switch rapid.SampledFrom([]string{"seats", "best", "ga"}).Draw(t, "shape") {
	case "seats":
		n := rapid.IntRange(1, maxPerHold).Draw(t, "seats")
		// Often seats whose holds ended (their prices may have changed
		// while they were held).
		seats := m.s.seats
		if freed := m.freedSeats(); rapid.Bool().Draw(t, "freed seats") && len(freed) >= n {
			seats = freed
		}
		ids := rapid.SliceOfNDistinct(rapid.SampledFrom(seats), n, n, rapid.ID).Draw(t, "seat ids")
		h, err = f.HoldSeats(m.ctx, m.event, ids)
	case "best":
		h, err = f.HoldBest(m.ctx, m.event, rapid.IntRange(1, maxPerHold).Draw(t, "quantity"), "")
	default:
		h, err = f.HoldGA(m.ctx, m.event, "FLOOR", rapid.IntRange(1, maxPerHold).Draw(t, "quantity"))
	}
	if err != nil {
		t.Logf("hold: %v", err)
		return
	}
	if m.room && !f.slot {
		m.fail(t, withinCeiling, "account %d held (hold %d) without a live shopping slot: it left or bought since its admission",
			f.Account, h.HoldID)
	}
	t.Logf("account %d holds %d place(s): hold %d, order %d, %d cents", f.Account, len(h.Items), h.HoldID, h.OrderID, h.Total)
	for _, it := range h.Items {
		if want := m.prices[it.PriceLevel]; it.PriceCents != want {
			m.fail(t, priceInForce, "hold %d took %s at %d cents while level %s costs %d", h.HoldID, it.Label, it.PriceCents, it.PriceLevel, want)
		}
	}
	o := &order{id: h.OrderID, hold: h.HoldID, owner: f, status: "pending", total: h.Total, prices: maps.Clone(m.prices)}
	m.s.seen["holds"]++
	for _, it := range h.Items {
		o.levels = append(o.levels, it.PriceLevel)
		if it.SeatID != 0 {
			if slices.Contains(m.freedSeats(), it.SeatID) {
				m.s.seen["freed seats held again"]++
			}
			o.seats = append(o.seats, it.SeatID)
		}
	}
	m.orders = append(m.orders, o)
	m.byID[o.id] = o
}

// freedSeats are the seats of the orders whose holds ended unsold
// (released, expired or refunded, as of the last check), sorted.
func (m *model) freedSeats() []int64 {
	var freed []int64
	for _, o := range m.orders {
		if o.status != "pending" && o.status != "paid" {
			freed = append(freed, o.seats...)
		}
	}
	slices.Sort(freed)
	return slices.Compact(freed)
}

// pickOrder draws an order, mostly one for which pred holds.
func (m *model) pickOrder(t *rapid.T, pred func(*order) bool) *order {
	if len(m.orders) == 0 {
		t.Skip("no orders yet")
	}
	some := slices.DeleteFunc(slices.Clone(m.orders), func(o *order) bool { return !pred(o) })
	if anyOrder := rapid.IntRange(0, 3).Draw(t, "any order") == 0; anyOrder || len(some) == 0 {
		some = m.orders
	}
	return some[rapid.IntRange(0, len(some)-1).Draw(t, "order")]
}

func pending(o *order) bool { return o.status == "pending" }

func (m *model) Release(t *rapid.T) {
	o := m.pickOrder(t, pending)
	if err := o.owner.Release(m.ctx, o.hold); err != nil {
		t.Logf("release: %v", err)
		return
	}
	t.Logf("account %d released hold %d", o.owner.Account, o.hold)
}

// Expire advances the clocks: half a hold's lifetime, a whole one, or a
// whole shopping slot's. PostgreSQL's now() decides hold expiry, so the
// deadlines of this event's live holds move into the past instead; the
// waiting room's clock moves forward.
func (m *model) Expire(t *rapid.T) {
	rarely(t, "time passes")
	secs := rapid.SampledFrom([]int{holdTTL / 4, holdTTL / 2, holdTTL + 1, activeTTL + 1}).Draw(t, "seconds")
	m.s.roomNow.Add(int64(secs) * int64(time.Second))
	if secs > activeTTL {
		for _, f := range m.fans {
			if f.served {
				f.endPlace() // the turn is over
			}
		}
	}
	m.clock += int64(secs)
	for _, p := range m.pixes {
		if p.overdue(m.clock) {
			if _, err := m.s.st.Sim.ExpirePix(p.session); err == nil { // else paid or expired already
				t.Logf("order %d: the Pix code of %s expired", p.order.id, p.session)
			}
		}
	}
	db := m.shard(t)
	for _, q := range []string{
		`UPDATE holds SET expires_at = expires_at - make_interval(secs => $2), created_at = created_at - make_interval(secs => $2)
			WHERE event_id = $1 AND status = 'active'`,
		`UPDATE event_seats SET held_until = held_until - make_interval(secs => $2) WHERE event_id = $1 AND status = 'held'`,
	} {
		if _, err := db.Exec(m.ctx, q, m.event, secs); err != nil {
			t.Fatalf("advance the hold clock: %v", err)
		}
	}
}

// Sweep is the sweeper Lambda.
func (m *model) Sweep(t *rapid.T) {
	if _, err := m.s.st.Functions.Sweep.SweepAll(m.ctx, 500); err != nil {
		m.failures = append(m.failures, "sweep: "+err.Error())
	}
}

// ---- payments ----

func (m *model) Checkout(t *rapid.T) {
	o := m.pickOrder(t, func(o *order) bool { return pending(o) && len(o.urls) == 0 })
	url, _, err := o.owner.Checkout(m.ctx, o.id)
	if err != nil {
		t.Logf("checkout: %v", err)
		return
	}
	t.Logf("order %d: checkout, page %s", o.id, url)
	if url != "" && !slices.Contains(o.urls, url) {
		o.urls = append(o.urls, url)
	}
}

// Pay types a card on one of the order's payment pages.
func (m *model) Pay(t *rapid.T) {
	o := m.pickOrder(t, func(o *order) bool { return len(o.urls) > 0 })
	if len(o.urls) == 0 {
		// A checkout queued behind the PSP quota gets its page later.
		if v, err := o.owner.Order(m.ctx, o.id); err == nil && v.Payment != nil && v.Payment.URL != "" {
			o.urls = append(o.urls, v.Payment.URL)
		}
	}
	if len(o.urls) == 0 {
		t.Skip("no payment page")
	}
	url := rapid.SampledFrom(o.urls).Draw(t, "page")
	card := rapid.SampledFrom([]string{pspsim.CardSuccess, pspsim.CardDeclined}).Draw(t, "card")
	if err := o.owner.PayOnPage(m.ctx, url, card); err != nil {
		t.Logf("pay: %v", err)
		return
	}
	t.Logf("order %d: card %s typed on %s", o.id, card, url)
}

// ChoosePix chooses Pix on one of an order's payment pages: the session
// completes unpaid and the code waits for the fan's bank.
func (m *model) ChoosePix(t *rapid.T) {
	o := m.pickOrder(t, func(o *order) bool { return len(o.urls) > 0 })
	if len(o.urls) == 0 {
		t.Skip("no payment page")
	}
	url := rapid.SampledFrom(o.urls).Draw(t, "page")
	session := url[strings.LastIndex(url, "/")+1:]
	v, err := m.s.st.Sim.ChoosePix(session)
	if err != nil {
		t.Logf("pix: %v", err) // paid, expired, or a card-only page
		return
	}
	m.pixes = append(m.pixes, &pix{session: session, order: o, expires: v.ExpiresAt, clock: m.clock})
	m.s.seen["pix chosen"]++
	t.Logf("order %d: Pix chosen on %s, its code expires %s", o.id, session, v.ExpiresAt.Format(time.TimeOnly))
}

// BankPays is a fan's bank paying a Pix code still valid on the model's
// clock (the hold may be gone: a late payment).
func (m *model) BankPays(t *rapid.T) {
	live := slices.DeleteFunc(slices.Clone(m.pixes), func(p *pix) bool { return p.overdue(m.clock) })
	if len(live) == 0 {
		t.Skip("no Pix code to pay")
	}
	p := rapid.SampledFrom(live).Draw(t, "pix")
	if _, err := m.s.st.Sim.PayPix(p.session); err != nil {
		t.Logf("bank: %v", err)
		return
	}
	m.s.seen["pix paid"]++
	t.Logf("order %d: the bank paid the Pix of %s", p.order.id, p.session)
}

// PayWrong is a charge the shop did not ask for, made at the PSP: a wrong
// amount or currency on the order's own payment reference or a new one, or
// a charge for an order that does not exist.
func (m *model) PayWrong(t *rapid.T) {
	rarely(t, "wrong charge")
	o := m.pickOrder(t, pending)
	c := psp.CreatePayment{Amount: o.total, Currency: "BRL", OrderID: o.id, Reference: fmt.Sprintf("forged-%d-%d", m.event, len(m.forged)),
		ReturnURL: m.s.st.URL}
	kind := rapid.SampledFrom([]string{"one cent", "other currency", "own reference, one cent", "other reference", "unknown order"}).Draw(t, "charge")
	switch kind {
	case "one cent":
		c.Amount = 1
	case "other currency":
		c.Currency = "JPY"
	case "own reference, one cent":
		c.Amount, c.Reference = 1, fmt.Sprintf("order-%d-1", o.id)
	case "unknown order":
		c.OrderID = o.id + 1024*1_000_000
	}
	p, err := m.s.psp.CreatePayment(m.ctx, c, c.Reference+"-create")
	if err != nil {
		t.Fatalf("create a payment at the PSP: %v", err)
	}
	m.forged[p.ID] = true
	t.Logf("order %d: the PSP charged %d %s as %s (%s)", o.id, c.Amount, c.Currency, p.ID, kind)
	m.s.seen["wrong charges"]++
	if _, err := m.s.st.Sim.Pay(p.ID, pspsim.CardSuccess); err != nil {
		t.Fatalf("pay at the PSP: %v", err)
	}
}

// Refund is a refund made at the PSP (its dashboard, a dispute).
func (m *model) Refund(t *rapid.T) {
	rarely(t, "dispute")
	var paid []psp.Payment
	for _, p := range m.payments() {
		if p.Status == psp.StatusSucceeded && !p.Refunded && !p.Disputed {
			paid = append(paid, p)
		}
	}
	if len(paid) == 0 {
		t.Skip("nothing to refund")
	}
	slices.SortFunc(paid, func(a, b psp.Payment) int { return a.Created.Compare(b.Created) })
	p := paid[rapid.IntRange(0, len(paid)-1).Draw(t, "payment")]
	giveBack, how := m.s.st.Sim.RefundAtPSP, "refunded"
	if rapid.Bool().Draw(t, "disputed") {
		giveBack, how = m.s.st.Sim.Dispute, "lost a dispute over"
	}
	if _, err := giveBack(p.ID); err != nil {
		t.Fatalf("%s at the PSP: %v", how, err)
	}
	m.s.seen["refunds at the PSP"]++
	t.Logf("the PSP %s %s (order %d)", how, p.ID, p.OrderID)
}

// payments lists the simulator's payments of this sequence.
func (m *model) payments() []psp.Payment {
	var out []psp.Payment
	for _, p := range m.s.st.Sim.Payments() {
		if m.byID[p.OrderID] != nil || m.forged[p.ID] {
			out = append(out, p)
		}
	}
	return out
}

// Deliver hands one pending delivery to the shop, in any order.
func (m *model) Deliver(t *rapid.T) {
	if len(m.pending) == 0 {
		t.Skip("no pending webhook")
	}
	i := rapid.IntRange(0, len(m.pending)-1).Draw(t, "delivery")
	body := m.pending[i]
	m.pending = slices.Delete(m.pending, i, i+1)
	m.deliver(t, body)
}

// Redeliver repeats a delivery, as providers do.
func (m *model) Redeliver(t *rapid.T) {
	if len(m.delivered) == 0 {
		t.Skip("nothing delivered yet")
	}
	m.deliver(t, rapid.SampledFrom(m.delivered).Draw(t, "delivery"))
}

func (m *model) deliver(t *rapid.T, body []byte) {
	m.delivered = append(m.delivered, body)
	defer m.sales(t)()
	req, _ := http.NewRequestWithContext(m.ctx, http.MethodPost, m.s.st.URL+"/api/psp/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Stripe-Signature", pspsim.Sign(m.s.secret, time.Now(), body))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		m.failures = append(m.failures, "webhook: "+err.Error())
		return
	}
	res.Body.Close()
	var e stripe.Event
	json.Unmarshal(body, &e)
	var obj struct {
		ID       string            `json:"id"`
		Metadata map[string]string `json:"metadata"`
	}
	json.Unmarshal(e.Data.Raw, &obj)
	t.Logf("webhook %s %s (%s, order %s): %d", e.ID, e.Type, obj.ID, obj.Metadata[psp.MetaOrder], res.StatusCode)
	if res.StatusCode/100 != 2 {
		m.failures = append(m.failures, fmt.Sprintf("a genuine webhook answered %d: %s", res.StatusCode, body))
	}
}

// Reconcile is the reconciler Lambda.
func (m *model) Reconcile(t *rapid.T) {
	defer m.sales(t)()
	if _, err := m.s.st.Functions.Reconcile.Reconcile(m.ctx, m.start); err != nil {
		m.failures = append(m.failures, "reconcile: "+err.Error())
	}
}

// ---- the organizer ----

// ChangePrice raises or lowers the price of the seats' level or of GA, at
// any moment: while places of that level are held, on open payment pages.
func (m *model) ChangePrice(t *rapid.T) {
	codes := []string{"A", "GA"}
	var held []string // mostly a level of places held now, or on a payment page
	for _, o := range m.orders {
		if pending(o) {
			held = append(held, o.levels...)
		}
	}
	if rapid.Bool().Draw(t, "a held level") && len(held) > 0 {
		codes = held
	}
	level := rapid.SampledFrom(codes).Draw(t, "level")
	old := m.prices[level]
	prices := maps.Clone(m.prices)
	prices[level] = rapid.SampledFrom(slices.DeleteFunc([]int{3000, 9000, 15000}, func(p int) bool { return p == old })).Draw(t, "price")
	if err := m.s.org.Call(m.ctx, "prices", http.MethodPut, fmt.Sprintf("/api/events/%d/price-levels", m.event), levels(prices), nil); err != nil {
		t.Logf("change prices: %v", err)
		return
	}
	m.prices = prices
	m.s.seen["price changes"]++
	t.Logf("price of %s changed from %d to %d", level, old, prices[level])
}

func (m *model) ChangeCeiling(t *rapid.T) {
	if !m.room {
		return
	}
	c := rapid.IntRange(1, 3).Draw(t, "ceiling")
	err := m.s.org.Call(m.ctx, "ceiling", http.MethodPut, fmt.Sprintf("/api/events/%d/waiting-room", m.event),
		map[string]any{"enabled": true, "ceiling": c, "active_ttl_seconds": activeTTL, "admission_ttl_seconds": activeTTL}, nil)
	if err != nil {
		t.Logf("change ceiling: %v", err)
		return
	}
	m.ceiling = c
	t.Logf("ceiling set to %d", c)
}

// ---- invariants ----

// sales is called before what may sell orders (a webhook, the reconciler)
// and returns what checks, after it, that every order it sold was charged
// the price in force when its places were taken: by its hold (the prices
// then), or by the payment itself when the hold had ended and the places
// were taken again (the prices now).
func (m *model) sales(t *rapid.T) func() {
	db := m.shard(t)
	rows, err := db.Query(m.ctx, `SELECT o.id, NOT (h.status = 'active' AND h.expires_at > now()) FROM orders o
		JOIN holds h ON h.id = o.hold_id WHERE o.event_id = $1 AND o.status NOT IN ('paid', 'refunded')`, m.event)
	if err != nil {
		t.Fatal(err)
	}
	ended := map[int64]bool{}
	var id int64
	var gone bool
	if _, err := pgx.ForEachRow(rows, []any{&id, &gone}, func() error { ended[id] = gone; return nil }); err != nil {
		t.Fatal(err)
	}
	return func() {
		rows, err := db.Query(m.ctx, `SELECT o.id, i.label, i.price_level, i.price_cents FROM orders o JOIN order_items i ON i.order_id = o.id
			WHERE o.id = ANY($1) AND o.status = 'paid' ORDER BY i.id`, slices.Collect(maps.Keys(ended)))
		if err != nil {
			t.Fatal(err)
		}
		var label, level string
		var cents int
		if _, err := pgx.ForEachRow(rows, []any{&id, &label, &level, &cents}, func() error {
			want, when := m.byID[id].prices[level], "its hold took it"
			if ended[id] {
				want, when = m.prices[level], "the payment took it again, its hold having ended"
			}
			if cents != want {
				m.fail(t, priceInForce, "order %d was sold %s at %d cents; level %s cost %d when %s", id, label, cents, level, want, when)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// shard is the event's shard.
func (m *model) shard(t *rapid.T) *pgxpool.Pool {
	db, err := m.s.st.App.Shards.ForEvent(m.ctx, m.event)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// Check lets the always-running workers catch up (the outbox, the
// simulator's deliveries reaching the capture) and checks every invariant;
// money is checked once no delivery is pending.
func (m *model) Check(t *rapid.T) {
	m.settle(t)
	m.check(t, len(m.pending) == 0)
}

func (m *model) settle(t *rapid.T) {
	if _, err := m.s.st.Functions.Fulfil.Fulfil(m.ctx); err != nil {
		m.failures = append(m.failures, "fulfil: "+err.Error())
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		n, bodies := m.s.hooks.since(m.hooksSeen)
		if n >= m.s.st.Sim.Stats().Events {
			// Deliveries race each other to the capture: keep the
			// simulator's order, so that a seed replays the same sequence.
			slices.SortFunc(bodies, func(a, b []byte) int { return strings.Compare(eventID(a), eventID(b)) })
			m.hooksSeen = n
			m.pending = append(m.pending, bodies...)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the simulator's webhooks did not arrive: %d of %d", n, m.s.st.Sim.Stats().Events)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func eventID(body []byte) string {
	var e struct {
		ID string `json:"id"`
	}
	json.Unmarshal(body, &e)
	return e.ID
}

// finish delivers whatever is still pending, in order, and checks
// everything, money included.
func (m *model) finish(t *rapid.T) {
	for range 20 {
		m.settle(t)
		if len(m.pending) == 0 {
			break
		}
		for _, b := range m.pending {
			m.deliver(t, b)
		}
		m.pending = nil
	}
	m.settle(t)
	m.check(t, true)
	for _, o := range m.orders {
		m.s.seen["orders "+o.status]++
	}
	m.s.seen["deliveries"] += len(m.delivered)
	m.s.seen["charges at the PSP"] += len(m.payments())
}

func (m *model) check(t *rapid.T, money bool) {
	if len(m.failures) > 0 {
		failures := m.failures
		m.failures = nil
		m.fail(t, no5xx, "%v", failures)
	}
	db := m.shard(t)
	rows, err := db.Query(m.ctx, `SELECT id, status, user_id, total_cents, currency FROM orders WHERE event_id = $1`, m.event)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, user, total int64
		var status, currency string
		if err := rows.Scan(&id, &status, &user, &total, &currency); err != nil {
			t.Fatal(err)
		}
		o := m.byID[id]
		if o == nil {
			t.Fatalf("order %d of account %d was never answered to a hold", id, user)
		}
		if status == "paid" && o.status != "paid" {
			o.owner.endPlace() // a purchase hands the slot on
		}
		o.status, o.total, o.currency = status, total, currency
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct{ inv, what, q string }{
		{noDoubleSale, "seats in more than one paid order", `SELECT count(*) FROM (SELECT i.event_seat_id FROM order_items i
			JOIN orders o ON o.id = i.order_id WHERE o.event_id = $1 AND o.status = 'paid' AND i.event_seat_id IS NOT NULL
			GROUP BY 1 HAVING count(*) > 1) x`},
		{noDoubleSale, "paid seats sold to another order", `SELECT count(*) FROM order_items i JOIN orders o ON o.id = i.order_id
			JOIN event_seats s ON s.id = i.event_seat_id WHERE o.event_id = $1 AND o.status = 'paid' AND (s.status <> 'sold' OR s.order_id <> o.id)`},
		{noDoubleSale, "GA pools with more places paid than their capacity", `SELECT count(*) FROM ga_pools p WHERE p.event_id = $1
			AND p.capacity < (SELECT coalesce(sum(i.quantity), 0) FROM order_items i JOIN orders o ON o.id = i.order_id
			WHERE i.pool_id = p.id AND o.status = 'paid')`},
		{withinLimit, "accounts with more paid tickets than the limit", `SELECT count(*) FROM (SELECT user_id FROM orders
			WHERE event_id = $1 AND status = 'paid' GROUP BY 1 HAVING sum(ticket_count) > ` + strconv.Itoa(maxPerAccount) + `) x`},
		{withinCap, "live holds past their cap", `SELECT count(*) FROM holds WHERE event_id = $1 AND status = 'active'
			AND expires_at > created_at + make_interval(secs => ` + strconv.Itoa(holdCap) + `)`},
	} {
		var n int
		if err := db.QueryRow(m.ctx, c.q, m.event).Scan(&n); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if n > 0 {
			m.fail(t, c.inv, "%s: %d", c.what, n)
		}
	}

	payments := m.payments()
	kept, worth := map[string]int64{}, map[string]int64{}
	for _, e := range m.s.st.Sim.Ledger() {
		if m.byID[e.OrderID] != nil || m.forged[e.Payment] {
			kept[e.Currency] += e.Amount
		}
	}
	for _, o := range m.orders {
		if o.status != "paid" {
			continue
		}
		worth[strings.ToUpper(o.currency)] += o.total
		if !slices.ContainsFunc(payments, func(p psp.Payment) bool {
			return p.OrderID == o.id && !m.forged[p.ID] && p.Status == psp.StatusSucceeded && p.Amount == o.total && strings.EqualFold(p.Currency, o.currency)
		}) {
			m.fail(t, paidInFull, "order %d is paid but the PSP never charged its checkout %d %s", o.id, o.total, o.currency)
		}
	}
	if money {
		for _, cur := range slices.Sorted(func(yield func(string) bool) {
			for c := range kept {
				yield(c)
			}
			for c := range worth {
				yield(c)
			}
		}) {
			if kept[cur] != worth[cur] {
				m.fail(t, moneyConserves, "%s: charged − given back = %d at the PSP, paid orders are worth %d", cur, kept[cur], worth[cur])
			}
		}
	}
}
