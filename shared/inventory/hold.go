package inventory

// One hold request, in the order it runs: its shape is checked, the sale
// must be open, then the take for its shape (seats by id, best available,
// or GA places) writes the hold and its pending order; a refusal is
// explained, a retried request replays the first result.

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/shard"
	"github.com/catraca/catraca/shared/shardstore"
)

// Request is one hold attempt, in one of three shapes: Seats, Pool with
// Quantity, or Best.
type Request struct {
	Account  int64   `json:"-"`
	Key      string  `json:"-"`
	Seats    []int64 `json:"seats,omitempty"`
	Pool     string  `json:"pool,omitempty"`
	Quantity int     `json:"quantity,omitempty"`
	Best     *Best   `json:"best,omitempty"`
}

// Best asks the server to pick Quantity adjacent seats in the best rows.
type Best struct {
	Quantity int    `json:"quantity"`
	Section  string `json:"section,omitempty"`
}

// Hold is a held set of seats or places with its pending order.
type Hold struct {
	ID          int64                  `json:"hold_id"`
	OrderID     int64                  `json:"order_id"`
	EventID     int64                  `json:"event_id"`
	Status      shardstore.HoldStatus  `json:"status"`
	OrderStatus shardstore.OrderStatus `json:"order_status"`
	ExpiresAt   time.Time              `json:"expires_at"`
	Items       []Item                 `json:"items"`
	TotalCents  int64                  `json:"total_cents"`
	Currency    string                 `json:"currency"`
	// Released is set by the Release call that actually freed the hold.
	Released bool `json:"-"`
}

// Item is one line of an order: a seat, or a quantity of a GA pool.
type Item struct {
	SeatID     int64  `json:"seat_id,omitempty"`
	SeatIndex  *int   `json:"seat_index,omitempty"`
	Pool       string `json:"pool,omitempty"`
	Quantity   int    `json:"quantity"`
	Label      string `json:"label"`
	PriceLevel string `json:"price_level"`
	PriceCents int    `json:"price_cents"`
}

// Items converts the store's order lines (shardstore.Rows): the same
// fields, so a Go conversion while they stay so.
func Items(rows []shardstore.Item) []Item {
	return shardstore.Rows(rows, func(r shardstore.Item) Item { return Item(r) })
}

// shards is where inventory finds a shard's store (shardstore.Shards).
type shards interface {
	IDs() []int
	Primary(id int) (*shardstore.Store, error)
	Reader(id int) (*shardstore.Store, error)
	OfRow(id int64) (*shardstore.Store, error)
}

// Service sells inventory on the event shards.
type Service struct {
	shards shards
	pools  poolCache
	now    func() time.Time
	freed  func(Freed)
}

// New returns the inventory service.
func New(r *shard.Router, options ...Option) *Service {
	s := &Service{shards: shardstore.Open(r), now: time.Now}
	for _, o := range options {
		o(s)
	}
	return s
}

// Option adjusts a Service.
type Option func(*Service)

// OnFreed tells fn what the sweeper gave back (for watchers).
func OnFreed(fn func(Freed)) Option { return func(s *Service) { s.freed = fn } }

// validate checks the shape of r and the per-hold maximum; seats are
// r.Seats sorted.
func (r *Request) validate(e event.Event, seats []int64) error {
	shapes := 0
	n := 0
	if len(seats) > 0 {
		shapes++
		n = len(seats)
		for i, id := range seats {
			if id <= 0 || i > 0 && id == seats[i-1] {
				return invalid("/seats", "seat ids must be positive and listed once")
			}
		}
	}
	if r.Pool != "" || r.Quantity != 0 {
		shapes++
		if r.Pool == "" {
			return invalid("/pool", "quantity needs a pool")
		}
		if r.Quantity <= 0 {
			return invalid("/quantity", "quantity must be at least 1")
		}
		n = r.Quantity
	}
	if r.Best != nil {
		shapes++
		if r.Best.Quantity <= 0 {
			return invalid("/best/quantity", "best.quantity must be at least 1")
		}
		n = r.Best.Quantity
	}
	if shapes != 1 {
		return ShapeError()
	}
	if n > e.MaxPerHold {
		return invalid("", "at most %d tickets per hold", e.MaxPerHold)
	}
	if r.Key == "" || len(r.Key) > 255 {
		return invalid("", "an Idempotency-Key of 1 to 255 characters is required")
	}
	return nil
}

// ShapeError refuses a request of no shape or of several. A decoder that
// sees the members sent calls it too: an empty seat list or a null best
// beside another shape reads here as left out.
func ShapeError() error {
	return invalid("", `send exactly one of {"seats":[…]}, {"pool","quantity"} or {"best":{"quantity"}}`)
}

// fingerprint identifies the request body for idempotency; seats are
// r.Seats sorted. The text hashed is "e=1;seats=[3 5];pool=;q=0", then
// ";best=2/A" for best available: holds stored with earlier fingerprints
// must still match their retries.
func (r *Request) fingerprint(eventID int64, seats []int64) []byte {
	b := make([]byte, 0, 64)
	b = strconv.AppendInt(append(b, "e="...), eventID, 10)
	b = append(b, ";seats=["...)
	for i, id := range seats {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	b = strconv.AppendInt(append(append(append(b, "];pool="...), r.Pool...), ";q="...), int64(r.Quantity), 10)
	if r.Best != nil {
		b = append(append(strconv.AppendInt(append(b, ";best="...), int64(r.Best.Quantity), 10), '/'), r.Best.Section...)
	}
	sum := sha256.Sum256(b)
	return sum[:]
}

// Hold takes what req asks for on event e, all or nothing, and writes the
// hold with its pending order in the same transaction. A retry with the same
// key returns the first result (replayed = true) and takes nothing more.
//
// Seat holds and most GA holds are one round trip (a pipelined implicit
// transaction); best-available and a GA pool near sell-out need a short
// interactive transaction.
func (s *Service) Hold(ctx context.Context, e event.Event, req Request) (h Hold, replayed bool, err error) {
	seats := slices.Sorted(slices.Values(req.Seats))
	if err := req.validate(e, seats); err != nil {
		return Hold{}, false, err
	}
	st, err := s.shards.Primary(e.Shard)
	if err != nil {
		return Hold{}, false, err
	}
	nh := shardstore.NewHold{EventID: e.ID, Account: req.Account, TTL: e.HoldTTL, Key: req.Key,
		Hash: req.fingerprint(e.ID, seats), Currency: e.Currency, MaxPerAccount: e.MaxPerAccount, Version: e.Version}
	if !e.OnSale(s.now()) {
		if h, err := replay(ctx, st, nh); !errors.Is(err, ErrHoldNotFound) {
			return h, err == nil, err
		}
		return Hold{}, false, ErrSalesClosed
	}
	var held shardstore.Held
	switch {
	case len(seats) > 0:
		held, err = st.TakeSeats(ctx, nh, seats)
	case req.Best != nil:
		held, err = takeBest(ctx, st, nh, *req.Best)
	default:
		held, err = s.takeGA(ctx, st, nh, req.Pool, req.Quantity)
	}
	switch {
	case errors.Is(err, shardstore.ErrKeyUsed):
		h, err = replay(ctx, st, nh)
		return h, err == nil, err
	case errors.Is(err, shardstore.ErrSeatsTaken):
		err = explainMissing(ctx, st, e.ID, req.Seats)
	case errors.Is(err, shardstore.ErrSaleStopped):
		// e is a cached copy: the sale stopped since it was read.
		err = ErrSalesClosed
	}
	if le := (*shardstore.LimitError)(nil); errors.As(err, &le) {
		err = overLimit(le)
	}
	if err != nil {
		return Hold{}, false, fmt.Errorf("hold for event %d: %w", e.ID, err)
	}
	return Hold{ID: held.ID, OrderID: held.OrderID, EventID: e.ID, Status: shardstore.HoldActive,
		OrderStatus: shardstore.OrderPending, ExpiresAt: held.ExpiresAt, Items: Items(held.Items),
		TotalCents: held.TotalCents, Currency: e.Currency}, false, nil
}

// takeBest picks quantity adjacent seats (consecutive numbers in one row) in
// the best-ranked rows: candidates come from a plain read, and a run is
// claimed only if no other buyer has any of it, so concurrent buyers skip
// each other's runs instead of waiting.
func takeBest(ctx context.Context, st *shardstore.Store, nh shardstore.NewHold, b Best) (shardstore.Held, error) {
	return st.TakeWith(ctx, nh, func(tx shardstore.Tx, holdID int64, until time.Time) (shardstore.Taken, error) {
		for page := 0; page < 25; page++ {
			cands, err := tx.BestCandidates(ctx, nh.EventID, b.Section, page)
			if err != nil {
				return shardstore.Taken{}, err
			}
			tries := 0
			for start := 0; start+b.Quantity <= len(cands) && tries < 12; start++ {
				run := cands[start : start+b.Quantity]
				if !adjacent(run) {
					continue
				}
				tries++
				ids, seats := make([]int64, len(run)), make([]int64, len(run))
				for i, c := range run {
					ids[i], seats[i] = c.ID, c.Seat
				}
				ok, err := tx.ClaimSeats(ctx, ids, holdID, until)
				if err != nil {
					return shardstore.Taken{}, err
				}
				if ok {
					return shardstore.TakenSeats(nh.EventID, seats), nil
				}
				start += b.Quantity - 1 // this run is gone; look past it
			}
			if len(cands) < shardstore.BestWindow {
				break
			}
		}
		if b.Section != "" {
			// Only when nothing was found: a section the venue lacks is the
			// fan's mistake to correct, not a sold-out one.
			if known, err := tx.HasSection(ctx, nh.EventID, b.Section); err != nil || !known {
				return shardstore.Taken{}, cmp.Or(err, invalid("/best/section", "this event has no section %q", b.Section))
			}
		}
		return shardstore.Taken{}, fmt.Errorf("%w: no %d adjacent seats available", ErrSoldOut, b.Quantity)
	})
}

// adjacent tells whether seats are consecutive numbers in one row.
func adjacent(run []shardstore.Candidate) bool {
	for i := 1; i < len(run); i++ {
		if run[i].Section != run[0].Section || run[i].Row != run[0].Row || run[i].Number != run[i-1].Number+1 {
			return false
		}
	}
	return true
}

// takeGA takes quantity places of a pool. Every slot with enough places may
// be locked for a moment by other buyers: the one-round-trip take retries
// with fresh random starts. Only when no single slot has enough (near
// sell-out) does the slow path lock them all, giving back the places of
// expired holds first if it must.
func (s *Service) takeGA(ctx context.Context, st *shardstore.Store, nh shardstore.NewHold, code string, quantity int) (shardstore.Held, error) {
	pool, err := s.pools.get(ctx, st, nh.EventID, code)
	if err != nil {
		return shardstore.Held{}, err
	}
	var held shardstore.Held
	for try := 0; try < 20; try++ {
		held, err = st.TakeGA(ctx, nh, pool, quantity)
		if !errors.Is(err, shardstore.ErrNoSlot) {
			return held, err
		}
		if enough, _ := st.SlotWithEnough(ctx, pool.ID, quantity); !enough {
			break
		}
		time.Sleep(time.Duration(50+rand.IntN(200*(try+1))) * time.Microsecond)
	}
	return st.TakeWith(ctx, nh, func(tx shardstore.Tx, _ int64, _ time.Time) (shardstore.Taken, error) {
		slots, err := tx.TakePlaces(ctx, pool.ID, quantity)
		if err == nil && slots == nil {
			if err := tx.ExpireOfEvent(ctx, nh.EventID); err != nil {
				return shardstore.Taken{}, err
			}
			slots, err = tx.TakePlaces(ctx, pool.ID, quantity)
		}
		if err == nil && slots == nil {
			err = fmt.Errorf("%w: fewer than %d places left in %s", ErrSoldOut, quantity, code)
		}
		return shardstore.TakenPlaces(pool, slots), err
	})
}

// explainMissing tells which requested seats are unknown or taken.
func explainMissing(ctx context.Context, st *shardstore.Store, eventID int64, seatIDs []int64) error {
	free, err := st.SeatsFree(ctx, eventID, seatIDs)
	if err != nil {
		return err
	}
	var unknown, taken []int64
	for _, id := range seatIDs {
		ok, known := free[id]
		switch {
		case !known:
			unknown = append(unknown, id)
		case !ok:
			taken = append(taken, id)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return &SeatError{Err: ErrUnknownSeat, Seats: unknown}
	}
	slices.Sort(taken)
	return &SeatError{Err: ErrSeatsTaken, Seats: taken}
}

// replay returns the hold an account made with an idempotency key, if the
// request is the same one.
func replay(ctx context.Context, st *shardstore.Store, nh shardstore.NewHold) (Hold, error) {
	id, hash, found, err := st.HoldByKey(ctx, nh.Account, nh.Key)
	switch {
	case err != nil:
		return Hold{}, err
	case !found:
		return Hold{}, ErrHoldNotFound
	case string(hash) != string(nh.Hash):
		return Hold{}, ErrKeyReused
	}
	return load(ctx, st, id)
}

// Get returns a hold owned by account.
func (s *Service) Get(ctx context.Context, holdID, account int64) (Hold, error) {
	st, err := s.shards.OfRow(holdID)
	if err != nil {
		return Hold{}, ErrHoldNotFound
	}
	owner, found, err := st.HoldOwner(ctx, holdID)
	if err != nil {
		return Hold{}, fmt.Errorf("get hold %d: %w", holdID, err) // an outage is a 503, not a 404
	}
	if !found || owner != account {
		return Hold{}, ErrHoldNotFound
	}
	return load(ctx, st, holdID)
}

// holdReader is a store or a transaction.
type holdReader interface {
	Hold(ctx context.Context, id int64) (shardstore.HoldRow, bool, error)
}

// load reads a hold with its order and items.
func load(ctx context.Context, r holdReader, id int64) (Hold, error) {
	row, found, err := r.Hold(ctx, id)
	if err != nil {
		return Hold{}, err
	}
	if !found {
		return Hold{}, ErrHoldNotFound
	}
	return Hold{ID: row.ID, OrderID: row.OrderID, EventID: row.EventID, Status: row.Status, OrderStatus: row.OrderStatus,
		ExpiresAt: row.ExpiresAt, Items: Items(row.Items), TotalCents: row.TotalCents, Currency: row.Currency}, nil
}

// poolCache remembers GA pools, which never change once created.
type poolCache struct{ m sync.Map } // "event/code" → shardstore.Pool

func (c *poolCache) get(ctx context.Context, st *shardstore.Store, eventID int64, code string) (shardstore.Pool, error) {
	key := strconv.FormatInt(eventID, 10) + "/" + code
	if v, ok := c.m.Load(key); ok {
		return v.(shardstore.Pool), nil
	}
	p, found, err := st.PoolOf(ctx, eventID, code)
	if err != nil {
		return shardstore.Pool{}, err
	}
	if !found {
		return shardstore.Pool{}, fmt.Errorf("%w: no pool %q", ErrUnknownSeat, code)
	}
	c.m.Store(key, p)
	return p, nil
}
