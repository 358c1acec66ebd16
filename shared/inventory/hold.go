package inventory

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

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
	now    func() time.Time
}

// New returns the inventory service.
func New(shards *shard.Router) *Service { return &Service{shards: shards, now: time.Now} }

// count validates the shape of r and returns how many tickets it asks for.
func (r *Request) count(e event.Event) (int, error) {
	shapes := 0
	n := 0
	if len(r.Seats) > 0 {
		shapes++
		n = len(r.Seats)
		seen := map[int64]bool{}
		for _, id := range r.Seats {
			if id <= 0 || seen[id] {
				return 0, invalid("seat ids must be positive and listed once")
			}
			seen[id] = true
		}
	}
	if r.Pool != "" || r.Quantity != 0 {
		shapes++
		if r.Pool == "" {
			return 0, invalid("quantity needs a pool")
		}
		if r.Quantity <= 0 {
			return 0, invalid("quantity must be at least 1")
		}
		n = r.Quantity
	}
	if r.Best != nil {
		shapes++
		if r.Best.Quantity <= 0 {
			return 0, invalid("best.quantity must be at least 1")
		}
		n = r.Best.Quantity
	}
	if shapes != 1 {
		return 0, invalid(`send exactly one of {"seats":[…]}, {"pool","quantity"} or {"best":{"quantity"}}`)
	}
	if n > e.MaxPerHold {
		return 0, invalid("at most %d tickets per hold", e.MaxPerHold)
	}
	if r.Key == "" || len(r.Key) > 255 {
		return 0, invalid("an Idempotency-Key of 1 to 255 characters is required")
	}
	return n, nil
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
func (s *Service) Hold(ctx context.Context, e event.Event, req Request) (h Hold, replayed bool, err error) {
	n, err := req.count(e)
	if err != nil {
		return Hold{}, false, err
	}
	pool, err := s.shards.Pool(e.Shard)
	if err != nil {
		return Hold{}, false, err
	}
	fp := req.fingerprint(e.ID)
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// One account's holds on one event are serialized: the per-account
		// limit and the idempotency check cannot race. Fans never wait on
		// each other here.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,
			"hold:"+strconv.FormatInt(req.Account, 10)+":"+strconv.FormatInt(e.ID, 10)); err != nil {
			return err
		}
		var prevID int64
		var prevFP []byte
		err := tx.QueryRow(ctx, `SELECT id, request_hash FROM holds WHERE account_id = $1 AND idempotency_key = $2`,
			req.Account, req.Key).Scan(&prevID, &prevFP)
		if err == nil {
			if string(prevFP) != string(fp) {
				return ErrKeyReused
			}
			replayed = true
			h, err = load(ctx, tx, prevID)
			return err
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if !e.OnSale(s.now()) {
			return ErrSalesClosed
		}
		var have int
		if err := tx.QueryRow(ctx, `
			SELECT coalesce(sum(o.ticket_count), 0) FROM orders o JOIN holds h ON h.id = o.hold_id
			WHERE o.user_id = $1 AND o.event_id = $2
			  AND (o.status = 'paid' OR (o.status = 'pending' AND h.status = 'active' AND h.expires_at > now()))`,
			req.Account, e.ID).Scan(&have); err != nil {
			return err
		}
		if have+n > e.MaxPerAccount {
			return fmt.Errorf("%w: you have %d of %d tickets for this event", ErrAccountLimit, have, e.MaxPerAccount)
		}
		var holdID int64
		var expires time.Time
		if err := tx.QueryRow(ctx, `
			INSERT INTO holds (event_id, account_id, expires_at, idempotency_key, request_hash)
			VALUES ($1, $2, now() + make_interval(secs => $3), $4, $5) RETURNING id, expires_at`,
			e.ID, req.Account, e.HoldTTL, req.Key, fp).Scan(&holdID, &expires); err != nil {
			return fmt.Errorf("insert hold: %w", err)
		}
		var items []Item
		var seatIDs []int64 // event_seats ids of the items, 0 for GA
		var poolIDs []int64
		switch {
		case len(req.Seats) > 0:
			items, seatIDs, err = holdSeats(ctx, tx, e.ID, holdID, expires, req.Seats)
		case req.Best != nil:
			items, seatIDs, err = holdBest(ctx, tx, e.ID, holdID, expires, req.Best.Quantity, req.Best.Section)
		default:
			var it Item
			var poolID int64
			it, poolID, err = s.holdGA(ctx, tx, e.ID, holdID, req.Pool, req.Quantity)
			items, seatIDs, poolIDs = []Item{it}, []int64{0}, []int64{poolID}
		}
		if err != nil {
			return err
		}
		orderID, total, err := insertOrder(ctx, tx, e, req, holdID, n, items, seatIDs, poolIDs)
		if err != nil {
			return err
		}
		h = Hold{ID: holdID, OrderID: orderID, EventID: e.ID, Status: "active", OrderStatus: "pending",
			ExpiresAt: expires.UTC(), Items: items, TotalCents: total, Currency: e.Currency}
		return nil
	})
	if err != nil {
		return Hold{}, false, fmt.Errorf("hold for event %d: %w", e.ID, err)
	}
	return h, replayed, nil
}

func insertOrder(ctx context.Context, tx pgx.Tx, e event.Event, req Request, holdID int64, n int, items []Item, seatIDs, poolIDs []int64) (int64, int64, error) {
	var total int64
	for _, it := range items {
		total += int64(it.PriceCents) * int64(it.Quantity)
	}
	var orderID int64
	if err := tx.QueryRow(ctx, `
		INSERT INTO orders (event_id, user_id, hold_id, ticket_count, total_cents, currency, idempotency_key)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
		e.ID, req.Account, holdID, n, total, e.Currency, "hold:"+strconv.FormatInt(holdID, 10)).Scan(&orderID); err != nil {
		return 0, 0, fmt.Errorf("insert order: %w", err)
	}
	var seatCol, poolCol []*int64
	qty, labels, levels, prices := make([]int, len(items)), make([]string, len(items)), make([]string, len(items)), make([]int, len(items))
	for i, it := range items {
		seatCol = append(seatCol, nonZero(seatIDs[i]))
		var p int64
		if i < len(poolIDs) {
			p = poolIDs[i]
		}
		poolCol = append(poolCol, nonZero(p))
		qty[i], labels[i], levels[i], prices[i] = it.Quantity, it.Label, it.PriceLevel, it.PriceCents
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO order_items (order_id, event_seat_id, pool_id, quantity, label, price_level, price_cents)
		SELECT $1, * FROM unnest($2::bigint[], $3::bigint[], $4::int[], $5::text[], $6::text[], $7::int[])`,
		orderID, seatCol, poolCol, qty, labels, levels, prices); err != nil {
		return 0, 0, fmt.Errorf("insert order items: %w", err)
	}
	return orderID, total, nil
}

func nonZero(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
}

func seatLabel(section, row string, number int) string {
	return "Section " + section + " · Row " + row + " · Seat " + strconv.Itoa(number)
}

// holdSeats is the compare-and-set: lock the requested rows in id order (no
// deadlocks between overlapping requests), then flip only those that are
// available or whose hold has expired. Fewer rows than asked → fail.
func holdSeats(ctx context.Context, tx pgx.Tx, eventID, holdID int64, until time.Time, seatIDs []int64) ([]Item, []int64, error) {
	rows, err := tx.Query(ctx, `
		WITH target AS (
			SELECT id FROM event_seats WHERE event_id = $1 AND seat_id = ANY($2) ORDER BY id FOR UPDATE
		)
		UPDATE event_seats s SET status = 'held', hold_id = $3, held_until = $4, updated_at = now()
		FROM target
		WHERE s.id = target.id AND (s.status = 'available' OR (s.status = 'held' AND s.held_until < now()))
		RETURNING s.id, s.seat_id, s.seat_index, s.section_code, s.row_label, s.seat_number, s.price_level, s.price_cents`,
		eventID, seatIDs, holdID, until)
	if err != nil {
		return nil, nil, fmt.Errorf("hold seats: %w", err)
	}
	items, ids, err := collectSeats(rows)
	if err != nil {
		return nil, nil, err
	}
	if len(items) == len(seatIDs) {
		return items, ids, nil
	}
	return nil, nil, explainMissing(ctx, tx, eventID, holdID, seatIDs)
}

// explainMissing tells which requested seats are unknown or taken by others
// (this transaction has just flipped the rest to its own hold).
func explainMissing(ctx context.Context, tx pgx.Tx, eventID, holdID int64, seatIDs []int64) error {
	rows, err := tx.Query(ctx, `
		SELECT seat_id FROM event_seats WHERE event_id = $1 AND seat_id = ANY($2) AND hold_id IS DISTINCT FROM $3
		  AND NOT (status = 'available' OR (status = 'held' AND held_until < now()))`, eventID, seatIDs, holdID)
	if err != nil {
		return err
	}
	taken, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	var known []int64
	rows, err = tx.Query(ctx, `SELECT seat_id FROM event_seats WHERE event_id = $1 AND seat_id = ANY($2)`, eventID, seatIDs)
	if err != nil {
		return err
	}
	if known, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
		return err
	}
	var unknown []int64
	for _, id := range seatIDs {
		if !slices.Contains(known, id) {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return &SeatError{Err: ErrUnknownSeat, Seats: unknown}
	}
	slices.Sort(taken)
	return &SeatError{Err: ErrSeatsTaken, Seats: taken}
}

func collectSeats(rows pgx.Rows) ([]Item, []int64, error) {
	var items []Item
	var ids []int64
	for rows.Next() {
		var id int64
		var it Item
		var idx, number int
		var section, row string
		if err := rows.Scan(&id, &it.SeatID, &idx, &section, &row, &number, &it.PriceLevel, &it.PriceCents); err != nil {
			rows.Close()
			return nil, nil, err
		}
		it.SeatIndex = &idx
		it.Quantity = 1
		it.Label = seatLabel(section, row, number)
		items = append(items, it)
		ids = append(ids, id)
	}
	return items, ids, rows.Err()
}

// bestWindow is how many candidate seats one scan looks at.
const bestWindow = 400

// holdBest picks quantity adjacent seats (consecutive numbers in one row) in
// the best-ranked rows. Candidates come from a plain read; a run is claimed
// with FOR UPDATE SKIP LOCKED, so concurrent buyers skip each other's runs
// instead of waiting.
func holdBest(ctx context.Context, tx pgx.Tx, eventID, holdID int64, until time.Time, quantity int, section string) ([]Item, []int64, error) {
	type cand struct {
		id      int64
		section string
		row     string
		number  int
	}
	for page := 0; page < 25; page++ {
		rows, err := tx.Query(ctx, `
			SELECT id, section_code, row_label, seat_number FROM event_seats
			WHERE event_id = $1 AND ($2 = '' OR section_code = $2)
			  AND (status = 'available' OR (status = 'held' AND held_until < now()))
			ORDER BY section_rank, row_rank, section_code, row_label, seat_number
			LIMIT $3 OFFSET $4`, eventID, section, bestWindow, page*bestWindow)
		if err != nil {
			return nil, nil, fmt.Errorf("best available candidates: %w", err)
		}
		cands, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (cand, error) {
			var c cand
			return c, r.Scan(&c.id, &c.section, &c.row, &c.number)
		})
		if err != nil {
			return nil, nil, err
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
			rows, err := tx.Query(ctx, `
				WITH claim AS (
					SELECT id FROM event_seats WHERE id = ANY($1)
					  AND (status = 'available' OR (status = 'held' AND held_until < now()))
					ORDER BY id FOR UPDATE SKIP LOCKED
				), n AS (SELECT count(*) AS c FROM claim)
				UPDATE event_seats s SET status = 'held', hold_id = $2, held_until = $3, updated_at = now()
				FROM claim, n
				WHERE s.id = claim.id AND n.c = $4
				RETURNING s.id, s.seat_id, s.seat_index, s.section_code, s.row_label, s.seat_number, s.price_level, s.price_cents`,
				ids, holdID, until, quantity)
			if err != nil {
				return nil, nil, fmt.Errorf("claim best seats: %w", err)
			}
			items, got, err := collectSeats(rows)
			if err != nil {
				return nil, nil, err
			}
			if len(items) == quantity {
				slices.SortFunc(items, func(a, b Item) int { return *a.SeatIndex - *b.SeatIndex })
				return items, got, nil
			}
			start += quantity - 1 // this run is gone; look past it
		}
		if len(cands) < bestWindow {
			break
		}
	}
	return nil, nil, fmt.Errorf("%w: no %d adjacent seats available", ErrSoldOut, quantity)
}

// holdGA takes quantity places from a pool. With several slots, it claims
// one slot that has enough with SKIP LOCKED, starting at a random slot so
// buyers spread over rows; a pool with one slot is the plain counter.
func (s *Service) holdGA(ctx context.Context, tx pgx.Tx, eventID, holdID int64, code string, quantity int) (Item, int64, error) {
	var poolID int64
	var slots int
	it := Item{Pool: code, Quantity: quantity}
	err := tx.QueryRow(ctx, `SELECT id, name, price_level, price_cents, slots FROM ga_pools WHERE event_id = $1 AND code = $2`,
		eventID, code).Scan(&poolID, &it.Label, &it.PriceLevel, &it.PriceCents, &slots)
	if errors.Is(err, pgx.ErrNoRows) {
		return Item{}, 0, fmt.Errorf("%w: no pool %q", ErrUnknownSeat, code)
	}
	if err != nil {
		return Item{}, 0, err
	}
	it.Label = it.Label + " × " + strconv.Itoa(quantity)
	taken, err := takeGA(ctx, tx, poolID, slots, quantity)
	if err == nil && taken == nil {
		// Before saying sold out, give back places of expired holds.
		if _, err := reclaim(ctx, tx, eventID); err != nil {
			return Item{}, 0, err
		}
		taken, err = takeGA(ctx, tx, poolID, slots, quantity)
	}
	if err != nil {
		return Item{}, 0, err
	}
	if taken == nil {
		return Item{}, 0, fmt.Errorf("%w: fewer than %d places left in %s", ErrSoldOut, quantity, code)
	}
	slotsCol, qtyCol := []int{}, []int{}
	for slot, q := range taken {
		slotsCol, qtyCol = append(slotsCol, slot), append(qtyCol, q)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO hold_ga (hold_id, pool_id, slot, quantity) SELECT $1, $2, * FROM unnest($3::int[], $4::int[])`,
		holdID, poolID, slotsCol, qtyCol); err != nil {
		return Item{}, 0, fmt.Errorf("record GA hold: %w", err)
	}
	return it, poolID, nil
}

// takeGA returns slot → quantity taken, or nil when the pool lacks quantity.
func takeGA(ctx context.Context, tx pgx.Tx, poolID int64, slots, quantity int) (map[int]int, error) {
	var slot int
	if slots == 1 {
		err := tx.QueryRow(ctx, `UPDATE ga_slots SET remaining = remaining - $2 WHERE pool_id = $1 AND slot = 0 AND remaining >= $2 RETURNING slot`,
			poolID, quantity).Scan(&slot)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, nil
		}
		return map[int]int{slot: quantity}, err
	}
	err := tx.QueryRow(ctx, `
		UPDATE ga_slots g SET remaining = g.remaining - $3
		FROM (SELECT slot FROM ga_slots WHERE pool_id = $1 AND remaining >= $3
		      ORDER BY (slot - $2 + $4) % $4 LIMIT 1 FOR UPDATE SKIP LOCKED) c
		WHERE g.pool_id = $1 AND g.slot = c.slot RETURNING g.slot`,
		poolID, rand.IntN(slots), quantity, slots).Scan(&slot)
	if err == nil {
		return map[int]int{slot: quantity}, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, err
	}
	// No single free slot has enough (near sell-out, or all busy): lock every
	// slot with places in order and take across them, waiting if needed.
	rows, err := tx.Query(ctx, `SELECT slot, remaining FROM ga_slots WHERE pool_id = $1 AND remaining > 0 ORDER BY slot FOR UPDATE`, poolID)
	if err != nil {
		return nil, err
	}
	taken := map[int]int{}
	need := quantity
	var remaining int
	for rows.Next() {
		if err := rows.Scan(&slot, &remaining); err != nil {
			rows.Close()
			return nil, err
		}
		if need > 0 {
			q := min(need, remaining)
			taken[slot] = q
			need -= q
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if need > 0 {
		return nil, nil
	}
	for slot, q := range taken {
		if _, err := tx.Exec(ctx, `UPDATE ga_slots SET remaining = remaining - $3 WHERE pool_id = $1 AND slot = $2`, poolID, slot, q); err != nil {
			return nil, err
		}
	}
	return taken, nil
}

// load reads a hold with its order and items.
func load(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, holdID int64) (Hold, error) {
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
	rows, err := q.Query(ctx, `
		SELECT coalesce(s.seat_id, 0), s.seat_index, coalesce(p.code, ''), i.quantity, i.label, i.price_level, i.price_cents
		FROM order_items i
		LEFT JOIN event_seats s ON s.id = i.event_seat_id
		LEFT JOIN ga_pools p ON p.id = i.pool_id
		WHERE i.order_id = $1 ORDER BY i.id`, h.OrderID)
	if err != nil {
		return Hold{}, err
	}
	h.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Item, error) {
		var it Item
		return it, r.Scan(&it.SeatID, &it.SeatIndex, &it.Pool, &it.Quantity, &it.Label, &it.PriceLevel, &it.PriceCents)
	})
	return h, err
}

// Get returns a hold owned by account.
func (s *Service) Get(ctx context.Context, holdID, account int64) (Hold, error) {
	pool, err := s.shards.ForRow(holdID)
	if err != nil {
		return Hold{}, ErrHoldNotFound
	}
	var owner int64
	if err := pool.QueryRow(ctx, `SELECT account_id FROM holds WHERE id = $1`, holdID).Scan(&owner); err != nil || owner != account {
		return Hold{}, ErrHoldNotFound
	}
	return load(ctx, pool, holdID)
}
