package inventory

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/shard"
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
	ID          int64     `json:"hold_id"`
	OrderID     int64     `json:"order_id"`
	EventID     int64     `json:"event_id"`
	Status      string    `json:"status"`
	OrderStatus string    `json:"order_status"`
	ExpiresAt   time.Time `json:"expires_at"`
	Items       []Item    `json:"items"`
	TotalCents  int64     `json:"total_cents"`
	Currency    string    `json:"currency"`
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

// Service sells inventory on the event shards.
type Service struct {
	shards *shard.Router
	pools  poolCache
	now    func() time.Time
	// Freed, when set, is told what the sweeper gave back (for watchers).
	Freed func(Freed)
}

// New returns the inventory service.
func New(shards *shard.Router) *Service { return &Service{shards: shards, now: time.Now} }

// validate checks the shape of r and the per-hold maximum.
func (r *Request) validate(e event.Event) error {
	shapes := 0
	n := 0
	if len(r.Seats) > 0 {
		shapes++
		n = len(r.Seats)
		seen := map[int64]bool{}
		for _, id := range r.Seats {
			if id <= 0 || seen[id] {
				return invalid("seat ids must be positive and listed once")
			}
			seen[id] = true
		}
	}
	if r.Pool != "" || r.Quantity != 0 {
		shapes++
		if r.Pool == "" {
			return invalid("quantity needs a pool")
		}
		if r.Quantity <= 0 {
			return invalid("quantity must be at least 1")
		}
		n = r.Quantity
	}
	if r.Best != nil {
		shapes++
		if r.Best.Quantity <= 0 {
			return invalid("best.quantity must be at least 1")
		}
		n = r.Best.Quantity
	}
	if shapes != 1 {
		return invalid(`send exactly one of {"seats":[…]}, {"pool","quantity"} or {"best":{"quantity"}}`)
	}
	if n > e.MaxPerHold {
		return invalid("at most %d tickets per hold", e.MaxPerHold)
	}
	if r.Key == "" || len(r.Key) > 255 {
		return invalid("an Idempotency-Key of 1 to 255 characters is required")
	}
	return nil
}

// fingerprint identifies the request body for idempotency.
func (r *Request) fingerprint(eventID int64) []byte {
	seats := slices.Clone(r.Seats)
	slices.Sort(seats)
	var b strings.Builder
	fmt.Fprintf(&b, "e=%d;seats=%v;pool=%s;q=%d", eventID, seats, r.Pool, r.Quantity)
	if r.Best != nil {
		fmt.Fprintf(&b, ";best=%d/%s", r.Best.Quantity, r.Best.Section)
	}
	sum := sha256.Sum256([]byte(b.String()))
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
	if err := req.validate(e); err != nil {
		return Hold{}, false, err
	}
	pool, err := s.shards.Pool(e.Shard)
	if err != nil {
		return Hold{}, false, err
	}
	fp := req.fingerprint(e.ID)
	if !e.OnSale(s.now()) {
		if h, err := s.replay(ctx, pool, req, fp); !errors.Is(err, ErrHoldNotFound) {
			return h, err == nil, err
		}
		return Hold{}, false, ErrSalesClosed
	}
	hold := insertHold(e, req, fp)
	switch {
	case len(req.Seats) > 0:
		seats := slices.Clone(req.Seats)
		slices.Sort(seats)
		h, err = pipeline(ctx, pool, e, hold, takeSeats(e, req.Account, seats))
	case req.Best != nil:
		h, err = interactive(ctx, pool, e, hold, func(tx pgx.Tx, holdID int64, until time.Time) (step, error) {
			ids, err := holdBest(ctx, tx, e.ID, holdID, until, req.Best.Quantity, req.Best.Section)
			return orderStep(e, req.Account, seatSource, []any{e.ID, ids}, len(ids), seatsTaken), err
		})
	default:
		var meta poolMeta
		if meta, err = s.pools.get(ctx, pool, e.ID, req.Pool); err != nil {
			break
		}
		// Every slot with enough places may be locked for a moment by other
		// buyers: retry with fresh random starts. Only when no single slot
		// has enough (near sell-out) does the slow path lock them all.
		for try := 0; try < 20; try++ {
			h, err = pipeline(ctx, pool, e, hold, takeGAFast(e, req.Account, meta, req.Quantity))
			if state, _ := sqlState(err); state != stateNoSlot {
				break
			}
			var enough bool
			if pool.QueryRow(ctx, slotWithEnough, meta.id, req.Quantity).Scan(&enough); !enough {
				break
			}
			time.Sleep(time.Duration(50+rand.IntN(200*(try+1))) * time.Microsecond)
		}
		if state, _ := sqlState(err); state == stateNoSlot {
			h, err = interactive(ctx, pool, e, hold, func(tx pgx.Tx, holdID int64, _ time.Time) (step, error) {
				err := holdGASlow(ctx, tx, e.ID, holdID, meta, req.Pool, req.Quantity)
				return orderStep(e, req.Account, poolSource, []any{meta.id, req.Quantity}, req.Quantity, noSlot), err
			})
		}
	}
	switch state, msg := sqlState(err); state {
	case "":
	case "23505": // this account already used this key
		h, err = s.replay(ctx, pool, req, fp)
		return h, err == nil, err
	case stateTaken:
		err = explainMissing(ctx, pool, e.ID, req.Seats)
	case stateLimit:
		err = fmt.Errorf("%w: %s", ErrAccountLimit, msg)
	}
	if err != nil {
		return Hold{}, false, fmt.Errorf("hold for event %d: %w", e.ID, err)
	}
	return h, false, nil
}

// replay returns the hold an account made with an idempotency key, if the
// request is the same one.
func (s *Service) replay(ctx context.Context, pool *pgxpool.Pool, req Request, fp []byte) (Hold, error) {
	var id int64
	var prev []byte
	err := pool.QueryRow(ctx, `SELECT id, request_hash FROM holds WHERE account_id = $1 AND idempotency_key = $2`,
		req.Account, req.Key).Scan(&id, &prev)
	if errors.Is(err, pgx.ErrNoRows) {
		return Hold{}, ErrHoldNotFound
	}
	if err != nil {
		return Hold{}, err
	}
	if string(prev) != string(fp) {
		return Hold{}, ErrKeyReused
	}
	return load(ctx, pool, id)
}

// interactive inserts the hold, runs a take that needs decisions between
// statements, and the order step the take returns, in one short transaction.
func interactive(ctx context.Context, pool *pgxpool.Pool, e event.Event, hold step,
	take func(tx pgx.Tx, holdID int64, until time.Time) (step, error)) (Hold, error) {
	h := Hold{EventID: e.ID, Status: "active", OrderStatus: "pending", Currency: e.Currency}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, hold.sql, hold.args...).Scan(&h.ID, &h.ExpiresAt); err != nil {
			return err
		}
		order, err := take(tx, h.ID, h.ExpiresAt)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, order.sql, order.args...)
		if err != nil {
			return err
		}
		return scanOrder(rows, &h)
	})
	h.ExpiresAt = h.ExpiresAt.UTC()
	return h, err
}

// seatStates tells, per requested seat ($2) of event $1, whether it is free.
const seatStates = `SELECT seat_id, status = 'available' OR (status = 'held' AND held_until < now())
	FROM event_seats WHERE event_id = $1 AND seat_id = ANY($2)`

// explainMissing tells which requested seats are unknown or taken.
func explainMissing(ctx context.Context, pool *pgxpool.Pool, eventID int64, seatIDs []int64) error {
	rows, err := pool.Query(ctx, seatStates, eventID, seatIDs)
	if err != nil {
		return err
	}
	free := map[int64]bool{}
	for rows.Next() {
		var id int64
		var ok bool
		if err := rows.Scan(&id, &ok); err != nil {
			rows.Close()
			return err
		}
		free[id] = ok
	}
	if err := rows.Err(); err != nil {
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

// bestWindow is how many candidate seats one scan looks at.
const bestWindow = 400

// bestCandidates pages through the free seats of event $1 (section $2 or
// any), best first.
const bestCandidates = `SELECT id, seat_id, section_code, row_label, seat_number FROM event_seats
	WHERE event_id = $1 AND ($2 = '' OR section_code = $2)
	  AND (status = 'available' OR (status = 'held' AND held_until < now()))
	ORDER BY section_rank, row_rank, section_code, row_label, seat_number
	LIMIT $3 OFFSET $4`

// bestClaim holds seats $1 for hold $2 until $3 only if all $4 of them are
// free and not locked by another buyer.
const bestClaim = `WITH claim AS (
		SELECT id FROM event_seats WHERE id = ANY($1)
		  AND (status = 'available' OR (status = 'held' AND held_until < now()))
		ORDER BY id FOR NO KEY UPDATE SKIP LOCKED
	), n AS (SELECT count(*) AS c FROM claim)
	UPDATE event_seats s SET status = 'held', hold_id = $2, held_until = $3, updated_at = now()
	FROM claim, n
	WHERE s.id = claim.id AND n.c = $4`

// holdBest picks quantity adjacent seats (consecutive numbers in one row) in
// the best-ranked rows. Candidates come from a plain read; a run is claimed
// with FOR NO KEY UPDATE SKIP LOCKED, so concurrent buyers skip each other's runs
// instead of waiting.
func holdBest(ctx context.Context, tx pgx.Tx, eventID, holdID int64, until time.Time, quantity int, section string) ([]int64, error) {
	type cand struct {
		id      int64
		seat    int64
		section string
		row     string
		number  int
	}
	for page := 0; page < 25; page++ {
		rows, err := tx.Query(ctx, bestCandidates, eventID, section, bestWindow, page*bestWindow)
		if err != nil {
			return nil, fmt.Errorf("best available candidates: %w", err)
		}
		cands, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (cand, error) {
			var c cand
			return c, r.Scan(&c.id, &c.seat, &c.section, &c.row, &c.number)
		})
		if err != nil {
			return nil, err
		}
		tries := 0
		for start := 0; start+quantity <= len(cands) && tries < 12; start++ {
			run := cands[start : start+quantity]
			adjacent := true
			for i := 1; i < len(run); i++ {
				if run[i].section != run[0].section || run[i].row != run[0].row || run[i].number != run[i-1].number+1 {
					adjacent = false
					break
				}
			}
			if !adjacent {
				continue
			}
			tries++
			ids := make([]int64, len(run))
			for i, c := range run {
				ids[i] = c.id
			}
			tag, err := tx.Exec(ctx, bestClaim, ids, holdID, until, quantity)
			if err != nil {
				return nil, fmt.Errorf("claim best seats: %w", err)
			}
			if tag.RowsAffected() == int64(quantity) {
				seats := make([]int64, len(run))
				for i, c := range run {
					seats[i] = c.seat
				}
				return seats, nil
			}
			start += quantity - 1 // this run is gone; look past it
		}
		if len(cands) < bestWindow {
			break
		}
	}
	return nil, fmt.Errorf("%w: no %d adjacent seats available", ErrSoldOut, quantity)
}

// holdGASlow runs when no slot could give the whole quantity without
// waiting: it waits for a slot that has enough, or takes across slots near
// sell-out, after giving back the places of expired holds.
func holdGASlow(ctx context.Context, tx pgx.Tx, eventID, holdID int64, p poolMeta, code string, quantity int) error {
	taken, err := takeGA(ctx, tx, p.id, quantity)
	if err == nil && taken == nil {
		if _, err := reclaim(ctx, tx, eventID); err != nil {
			return err
		}
		taken, err = takeGA(ctx, tx, p.id, quantity)
	}
	if err != nil {
		return err
	}
	if taken == nil {
		return fmt.Errorf("%w: fewer than %d places left in %s", ErrSoldOut, quantity, code)
	}
	slotsCol, qtyCol := []int{}, []int{}
	for slot, q := range taken {
		slotsCol, qtyCol = append(slotsCol, slot), append(qtyCol, q)
	}
	if _, err := tx.Exec(ctx, recordSlots, holdID, p.id, slotsCol, qtyCol); err != nil {
		return fmt.Errorf("record GA hold: %w", err)
	}
	return nil
}

// Statements of the GA slow path, and the check that decides on it.
const (
	slotWithEnough = `SELECT EXISTS (SELECT 1 FROM ga_slots WHERE pool_id = $1 AND remaining >= $2)`
	lockSlots      = `SELECT slot, remaining FROM ga_slots WHERE pool_id = $1 ORDER BY slot FOR UPDATE`
	takeFromSlot   = `UPDATE ga_slots SET remaining = remaining - $3 WHERE pool_id = $1 AND slot = $2`
	recordSlots    = `INSERT INTO hold_ga (hold_id, pool_id, slot, quantity) SELECT $1, $2, * FROM unnest($3::int[], $4::int[])`
)

// takeGA returns slot → quantity taken, or nil when the pool lacks quantity.
// It locks every slot of the pool in slot order, so concurrent slow paths
// queue up instead of deadlocking, and prefers one slot that has enough.
func takeGA(ctx context.Context, tx pgx.Tx, poolID int64, quantity int) (map[int]int, error) {
	rows, err := tx.Query(ctx, lockSlots, poolID)
	if err != nil {
		return nil, err
	}
	type slotRemaining struct{ slot, remaining int }
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (slotRemaining, error) {
		var s slotRemaining
		return s, r.Scan(&s.slot, &s.remaining)
	})
	if err != nil {
		return nil, err
	}
	taken := map[int]int{}
	for _, s := range all {
		if s.remaining >= quantity {
			taken = map[int]int{s.slot: quantity}
			break
		}
	}
	if len(taken) == 0 {
		need := quantity
		for _, s := range all {
			if q := min(need, s.remaining); q > 0 {
				taken[s.slot] = q
				need -= q
			}
		}
		if need > 0 {
			return nil, nil
		}
	}
	for slot, q := range taken {
		if _, err := tx.Exec(ctx, takeFromSlot, poolID, slot, q); err != nil {
			return nil, err
		}
	}
	return taken, nil
}

// Querier is a pool or a transaction.
type Querier interface {
	QueryRow(context.Context, string, ...any) pgx.Row
	Query(context.Context, string, ...any) (pgx.Rows, error)
}

// Items reads the items of an order, with each seat's layout id and index.
func Items(ctx context.Context, q Querier, orderID int64) ([]Item, error) {
	rows, err := q.Query(ctx, `
		SELECT coalesce(s.seat_id, 0), s.seat_index, coalesce(p.code, ''), i.quantity, i.label, i.price_level, i.price_cents
		FROM order_items i
		LEFT JOIN event_seats s ON s.id = i.event_seat_id
		LEFT JOIN ga_pools p ON p.id = i.pool_id
		WHERE i.order_id = $1 ORDER BY i.id`, orderID)
	if err != nil {
		return nil, err
	}
	return scanItems(rows)
}

// load reads a hold with its order and items.
func load(ctx context.Context, q Querier, holdID int64) (Hold, error) {
	var h Hold
	err := q.QueryRow(ctx, `
		SELECT h.id, h.event_id, h.status, h.expires_at, o.id, o.status, o.total_cents, o.currency
		FROM holds h JOIN orders o ON o.hold_id = h.id WHERE h.id = $1`, holdID).
		Scan(&h.ID, &h.EventID, &h.Status, &h.ExpiresAt, &h.OrderID, &h.OrderStatus, &h.TotalCents, &h.Currency)
	if errors.Is(err, pgx.ErrNoRows) {
		return Hold{}, ErrHoldNotFound
	}
	if err != nil {
		return Hold{}, err
	}
	h.ExpiresAt = h.ExpiresAt.UTC()
	h.Items, err = Items(ctx, q, h.OrderID)
	return h, err
}

// Get returns a hold owned by account.
func (s *Service) Get(ctx context.Context, holdID, account int64) (Hold, error) {
	pool, err := s.shards.ForRow(holdID)
	if err != nil {
		return Hold{}, ErrHoldNotFound
	}
	var owner int64
	err = pool.QueryRow(ctx, `SELECT account_id FROM holds WHERE id = $1`, holdID).Scan(&owner)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && owner != account {
		return Hold{}, ErrHoldNotFound
	}
	if err != nil {
		return Hold{}, fmt.Errorf("get hold %d: %w", holdID, err) // an outage is a 503, not a 404
	}
	return load(ctx, pool, holdID)
}
