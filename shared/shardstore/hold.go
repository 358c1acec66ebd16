package shardstore

// The hold path, in the order a hold request runs: the hold row, the take
// (seats or GA places) with its pending order, sent as one pipeline; the
// interactive variant for best-available seats and GA near sell-out; then
// the reads that explain a failure or replay an earlier hold.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Why a take can fail, for the rules to explain.
var (
	ErrSeatsTaken  = errors.New("seats taken")                // fewer seats flipped than asked
	ErrOverLimit   = errors.New("over the per-account limit") // as a *LimitError
	ErrNoSlot      = errors.New("no GA slot with enough places")
	ErrKeyUsed     = errors.New("idempotency key already used by this account")
	ErrSaleStopped = errors.New("sale closed, cancelled or ended after the event was read") // see CopyStatus
)

// LimitError is ErrOverLimit with the database's account of the tickets
// the account has.
type LimitError struct {
	Detail string
	// Remaining is how many more tickets the account may hold there.
	Remaining int
}

func (e *LimitError) Error() string { return ErrOverLimit.Error() + ": " + e.Detail }
func (e *LimitError) Unwrap() error { return ErrOverLimit }

// SQLSTATEs raised through assert() (migration 00002).
const (
	stateTaken   = "CT001"
	stateLimit   = "CT002"
	stateNoSlot  = "CT003"
	stateStopped = "CT004"
	stateUnique  = "23505"
)

// classify turns the database's refusals into the errors above.
func classify(err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	switch pgErr.Code {
	case stateTaken:
		return ErrSeatsTaken
	case stateLimit:
		// within_limit's message (shard migration 00014) starts with the
		// counts: "you have H of M tickets for this event, ...".
		le := &LimitError{Detail: pgErr.Message}
		var have, most int
		if _, err := fmt.Sscanf(pgErr.Message, "you have %d of %d", &have, &most); err == nil {
			le.Remaining = max(0, most-have)
		}
		return le
	case stateNoSlot:
		return ErrNoSlot
	case stateStopped:
		return ErrSaleStopped
	case stateUnique:
		return fmt.Errorf("%w: %w", ErrKeyUsed, err)
	}
	return err
}

// NewHold is what a hold records and the rules its take checks.
type NewHold struct {
	EventID, Account int64
	TTL              int // seconds
	Key              string
	Hash             []byte // the request's fingerprint
	Currency         string
	MaxPerAccount    int
	// Version is the version of the event the hold was decided on: a
	// sale closed or cancelled at a later one refuses it (CopyStatus).
	Version int64
}

// Held is a hold just written, with its pending order.
type Held struct {
	ID, OrderID int64
	ExpiresAt   time.Time
	TotalCents  int64
	Items       []Item
}

// Item is one line of an order: a seat, or a quantity of a GA pool.
type Item struct {
	SeatID     int64
	SeatIndex  *int
	Pool       string
	Quantity   int
	Label      string
	PriceLevel string
	PriceCents int
}

// Pool is the immutable part of a GA pool.
type Pool struct {
	ID    int64
	Slots int
}

// step is one statement with its arguments.
type step struct {
	sql  string
	args []any
}

// shortfall is the error a take raises when it gets less than asked.
type shortfall struct{ code, message string }

var (
	seatsTaken = shortfall{stateTaken, "seats taken"}
	noSlot     = shortfall{stateNoSlot, "no slot with enough places"}
)

// LimitLockKey names an account's lock on an event: whatever takes places
// for one account on one event (holds, and payments that re-take the places
// of an ended hold) takes it, so neither can slip past the other's limit
// check.
func LimitLockKey(account, eventID int64) string {
	return "hold:" + strconv.FormatInt(account, 10) + ":" + strconv.FormatInt(eventID, 10)
}

// newHold is the id of the hold a one-statement take writes (its CTE h),
// for the take's own rows.
const newHold = `(SELECT id FROM h)`

// takeSQL is a whole take around ctes (parameters $1..$n), which must
// define src: (event_seat_id, pool_id, seat_id, seat_index, pool_code,
// quantity, label, price_level, price_cents, slots), usually around the take
// itself. It checks the account's limit, writes the pending order and its
// items, and returns the items, each row carrying the order id and total.
//
// With oneStatement the statement first takes the account's limit lock and
// inserts the hold (h: lockAndInsertHold; a reused idempotency key fails
// there with a unique violation, before anything is checked), src begins with the hold's id and expiry (hold_id, expires_at),
// and every row returns them: the whole hold is one statement, one
// implicit transaction, all or nothing. Without it the hold exists already
// and its id is the parameter after the order's (a take done step by step:
// TakeWith).
//
// The limit check, lim, is within_limit() (migrations 00011 and 00013): the
// account's limit lock, then a count in a snapshot of its own taken after
// the lock, so that a hold that committed while this one waited is counted
// although this statement's snapshot is older; in the same query, whether
// the sale was stopped after the version of the event the hold read. It
// reads h, so it runs after the hold's insert (which took the lock it
// takes again); a take should require (SELECT ok FROM lim) so it locks
// nothing for a request over the limit, and the order requires it too, so
// that no take can skip it. The shortfall check calls ensure() only to
// fail: a CASE keeps the plpgsql call off the path of a hold that passes.
// Unless src adds up to want tickets, the statement fails with short.
//
// The items are returned from src, not from the insert: a data-modifying
// CTE runs to completion whether or not the query reads it, and src's rows
// are the items' rows one for one. scanOrder puts them in seat order.
func takeSQL(ctes string, n int, short shortfall, oneStatement bool) string {
	p := func(i int) string { return "$" + strconv.Itoa(n+i) }
	head, lim, hold, rows := `WITH `, ``, p(8), ``
	if oneStatement {
		head = `WITH h AS (` + lockAndInsertHold(p(1), p(2), p(8), p(9), p(10), p(6)) + `), `
		lim, hold, rows = ` FROM h`, newHold, `src.hold_id, src.expires_at, `
	}
	return head + `lim AS (SELECT within_limit(` + p(6) + `, ` + p(2) + `, ` + p(1) + `, ` + p(4) + `, ` + p(5) + `, ` + p(7) + `) AS ok` + lim + `),
		` + ctes + `,
		o AS (
			INSERT INTO orders (event_id, user_id, hold_id, ticket_count, total_cents, currency)
			SELECT ` + p(1) + `, ` + p(2) + `, ` + hold + `, sum(quantity), sum(quantity::bigint * price_cents), ` + p(3) + ` FROM src
			HAVING (SELECT ok FROM lim) AND CASE WHEN coalesce(sum(quantity), 0) = ` + p(4) + ` THEN true
				ELSE ensure(false, '` + short.code + `', '` + short.message + `') END
			RETURNING id, total_cents
		), ins AS (
			INSERT INTO order_items (order_id, event_seat_id, pool_id, quantity, label, price_level, price_cents, slots)
			SELECT o.id, event_seat_id, pool_id, quantity, label, price_level, price_cents, slots FROM src, o
		)
		SELECT ` + rows + `o.id, o.total_cents, src.seat_id, src.seat_index, src.pool_code, src.quantity, src.label, src.price_level, src.price_cents
		FROM o, src`
}

// takeArgs are a take's arguments: its own (args), the order's and the
// hold's (the hold row's, or the id of one that exists: TakeWith).
func takeArgs(h NewHold, args []any, want int, hold ...any) []any {
	return append(append(args, h.EventID, h.Account, h.Currency, want, h.MaxPerAccount, LimitLockKey(h.Account, h.EventID), h.Version), hold...)
}

// oneStatement are the arguments of a one-statement take.
func oneStatement(h NewHold, args []any, want int) []any {
	return takeArgs(h, args, want, h.TTL, h.Key, h.Hash)
}

// seatColumns turns the event_seats columns of alias t into src columns
// for takeSQL.
func seatColumns(t string) string {
	return t + `.id AS event_seat_id, NULL::bigint AS pool_id, ` + t + `.seat_id, ` + t + `.seat_index, '' AS pool_code, 1 AS quantity,
		'Section ' || ` + t + `.section_code || ' · Row ' || ` + t + `.row_label || ' · Seat ' || ` + t + `.seat_number AS label,
		` + t + `.price_level, ` + t + `.price_cents, NULL::int[] AS slots`
}

// poolColumns turns ga_pools alias t, a quantity expression and the slots
// the places came from (one per place) into src columns for takeSQL.
func poolColumns(t, quantity, slots string) string {
	return `NULL::bigint AS event_seat_id, ` + t + `.id AS pool_id, 0::bigint AS seat_id, NULL::int AS seat_index, ` + t + `.code AS pool_code,
		` + quantity + ` AS quantity, ` + t + `.name || ' × ' || ` + quantity + ` AS label, ` + t + `.price_level, ` + t + `.price_cents,
		` + slots + ` AS slots`
}

// The orders of takes done step by step: the seats by layout seat id ($2)
// of event $1, or $2 places of pool $1 taken from slots $3.
var (
	seatsOrder = takeSQL(`src AS (SELECT `+seatColumns("s")+` FROM event_seats s WHERE s.event_id = $1 AND s.seat_id = ANY($2))`,
		2, seatsTaken, false)
	placesOrder = takeSQL(`src AS (SELECT `+poolColumns("p", "$2::int", "$3::int[]")+` FROM ga_pools p WHERE p.id = $1)`, 3, noSlot, false)
)

// seatTake is the compare-and-set on seat rows: only seats that are
// available or whose hold has expired flip to the hold, and the order is
// written from the rows that flipped. held_until equals the hold's
// expires_at: now() is the transaction's start in both.
//
// The UPDATE reaches its seats through their ids sorted ascending, a nested
// loop over the sorted ids (TestSeatTakeUpdatesInIDOrder checks the plan),
// so a hold waits for a seat another transaction is writing only in id
// order, as every other path that locks several seats does: two holds of
// overlapping seats cannot each wait for the other. The rows are not locked
// beforehand (FOR NO KEY UPDATE, then the UPDATE, wrote each seat's tuple
// and a WAL record twice): a seat only waits when its version in the
// snapshot is free, and one another hold has just taken fails the
// compare-and-set on its re-check once that hold commits.
var seatTake = takeSQL(`src AS (
			UPDATE event_seats s SET status = 'held', hold_id = `+newHold+`,
				held_until = now() + make_interval(secs => $3), updated_at = now()
			FROM (SELECT id FROM event_seats WHERE (SELECT ok FROM lim) AND event_id = $1 AND seat_id = ANY($2) ORDER BY id) target
			WHERE s.id = target.id AND (s.status = 'available' OR (s.status = 'held' AND s.held_until < now()))
			RETURNING s.hold_id, s.held_until AS expires_at, `+seatColumns("s")+`
		)`, 3, seatsTaken, true)

// takeSeats holds seats (layout ids, sorted) for a new hold.
func takeSeats(h NewHold, seatIDs []int64) step {
	return step{seatTake, oneStatement(h, []any{h.EventID, seatIDs, h.TTL}, len(seatIDs))}
}

// gaTake claims $2 places from one slot of pool $1 and orders them, the
// item recording the slot: with several slots (many) it starts at slot $3
// and skips slots other buyers have locked; with one slot it is the plain
// counter update and waits its turn.
//
// The claim walks the primary key from the start slot up, and only if that
// finds nothing from slot 0 up to it: each branch stops at its first free
// slot with enough places (a branch does not run once an earlier one found
// a slot), so a hold reads a few slot rows, not all of them sorted.
func gaTake(many bool) string {
	claim := `c1 AS (SELECT slot FROM ga_slots WHERE (SELECT ok FROM lim) AND pool_id = $1 AND slot >= $3 AND remaining >= $2
			ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED),
		c2 AS (SELECT slot FROM ga_slots WHERE (SELECT ok FROM lim) AND pool_id = $1 AND slot < $3 AND remaining >= $2
			ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED),
		c AS (SELECT slot FROM c1 UNION ALL SELECT slot FROM c2 LIMIT 1)`
	if !many {
		claim = `c AS (SELECT slot FROM ga_slots WHERE (SELECT ok FROM lim) AND pool_id = $1 AND remaining >= $2 AND $3::int = 0)`
	}
	return takeSQL(claim+`,
		u AS (UPDATE ga_slots g SET remaining = g.remaining - $2 FROM c
		      WHERE g.pool_id = $1 AND g.slot = c.slot AND g.remaining >= $2 RETURNING g.slot),
		src AS (SELECT h.id AS hold_id, h.expires_at, `+poolColumns("p", "$2::int", "array_fill(u.slot, ARRAY[$2::int])")+`
			FROM h, ga_pools p, u WHERE p.id = $1)`, 3, noSlot, true)
}

// The GA takes of pools of one slot and of several.
var gaTakeOne, gaTakeMany = gaTake(false), gaTake(true)

// takeGAFast holds quantity places from one slot of a pool for a new hold.
func takeGAFast(h NewHold, p Pool, quantity int) step {
	sql := gaTakeMany
	if p.Slots == 1 {
		sql = gaTakeOne
	}
	return step{sql, oneStatement(h, []any{p.ID, quantity, rand.IntN(p.Slots)}, quantity)}
}

// TakeSeats holds seats (layout ids, sorted) and writes the pending order,
// in one statement. It fails with ErrSeatsTaken, ErrOverLimit or ErrKeyUsed.
func (s *Store) TakeSeats(ctx context.Context, h NewHold, seatIDs []int64) (Held, error) {
	return s.take(ctx, takeSeats(h, seatIDs))
}

// TakeGA holds quantity places from one slot of a pool and writes the
// pending order, in one statement. It fails with ErrNoSlot when no slot it
// could lock had enough, or ErrOverLimit or ErrKeyUsed.
func (s *Store) TakeGA(ctx context.Context, h NewHold, p Pool, quantity int) (Held, error) {
	return s.take(ctx, takeGAFast(h, p, quantity))
}

// take runs a one-statement take (a statement outside a transaction is
// one: its failure leaves nothing behind) and reads the hold it wrote.
func (s *Store) take(ctx context.Context, t step) (Held, error) {
	if call, ok := takeCalls[t.sql]; ok && s.unnamed {
		t.sql = call
	}
	var h Held
	rows, err := s.db.Query(ctx, t.sql, t.args...)
	if err == nil {
		err = scanOrder(rows, &h, &h.ID, &h.ExpiresAt)
	}
	if err != nil {
		return Held{}, classify(err)
	}
	h.ExpiresAt = h.ExpiresAt.UTC()
	return h, nil
}

// scanOrder reads a take's rows into h, each row's leading columns into
// lead, then the order and one item, and puts the items in seat order
// (a sort here costs the database's executor a node less per hold).
func scanOrder(rows pgx.Rows, h *Held, lead ...any) error {
	var it Item
	dest := append(lead, &h.OrderID, &h.TotalCents, &it.SeatID, &it.SeatIndex, &it.Pool, &it.Quantity, &it.Label, &it.PriceLevel, &it.PriceCents)
	var err error
	h.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Item, error) {
		it = Item{}
		err := r.Scan(dest...)
		return it, err
	})
	slices.SortFunc(h.Items, func(a, b Item) int { return cmp.Compare(seatOrder(a), seatOrder(b)) })
	return err
}

// seatOrder is an item's place in a hold's items: its seat's index, GA
// places last.
func seatOrder(it Item) int {
	if it.SeatIndex == nil {
		return math.MaxInt
	}
	return *it.SeatIndex
}

// Taken is what a take done step by step hands to TakeWith: the places it
// took, to be ordered.
type Taken struct {
	order string
	args  []any
	want  int
}

// TakenSeats are the seats (layout ids) a take just held.
func TakenSeats(eventID int64, seatIDs []int64) Taken {
	return Taken{seatsOrder, []any{eventID, seatIDs}, len(seatIDs)}
}

// TakenPlaces are the places of pool p that a take just held, by the slot
// each came from (as TakePlaces returns them).
func TakenPlaces(p Pool, slots []int) Taken {
	return Taken{placesOrder, []any{p.ID, len(slots), slots}, len(slots)}
}

// lockAndInsertHold is the statement that takes the account's limit lock
// and inserts a hold, from the SQL of its values, returning the hold's id
// and expiry; a reused idempotency key fails with a unique violation.
//
// Every path takes the lock first, then the key's index entry: the two
// hold paths took them in opposite orders (a one-statement hold inserted,
// then locked in within_limit, which now takes the lock it holds again),
// so a request and its retry with the same key, one on each path while the
// account's lock was busy, each waited for the other until deadlock_timeout
// (TestOneRequestOnBothHoldPathsDoesNotDeadlock). The lock also comes
// before the take's seat or slot locks (and a payment's): taken only by the
// limit check after them, a step-by-step take holding seats could wait for
// a one-statement hold of the same account that waits for those seats.
func lockAndInsertHold(event, account, ttl, key, hash, lockKey string) string {
	return `INSERT INTO holds (event_id, account_id, expires_at, idempotency_key, request_hash)
	SELECT ` + event + `, ` + account + `, now() + make_interval(secs => ` + ttl + `), ` + key + `, ` + hash + `
	FROM (SELECT pg_advisory_xact_lock(hashtextextended(` + lockKey + `, 0))) AS serialized
	RETURNING id, expires_at`
}

// insertHold inserts the hold of a take done step by step, first.
var insertHold = lockAndInsertHold("$1", "$2", "$3", "$4", "$5", "$6")

// TakeWith inserts the hold, runs a take that needs decisions between
// statements, and orders what it took, in one short transaction.
func (s *Store) TakeWith(ctx context.Context, h NewHold, take func(tx Tx, holdID int64, until time.Time) (Taken, error)) (Held, error) {
	var held Held
	err := s.WithTx(ctx, func(tx Tx) error {
		err := tx.tx.QueryRow(ctx, insertHold, h.EventID, h.Account, h.TTL, h.Key, h.Hash, LimitLockKey(h.Account, h.EventID)).
			Scan(&held.ID, &held.ExpiresAt)
		if err != nil {
			return err
		}
		o, err := take(tx, held.ID, held.ExpiresAt)
		if err != nil {
			return err
		}
		rows, err := tx.tx.Query(ctx, o.order, takeArgs(h, o.args, o.want, held.ID)...)
		if err != nil {
			return err
		}
		return scanOrder(rows, &held)
	})
	held.ExpiresAt = held.ExpiresAt.UTC()
	return held, classify(err)
}

// Candidate is a free seat best-available may pick.
type Candidate struct {
	ID      int64 // event seat
	Seat    int64 // layout seat
	Section string
	Row     string
	Number  int
}

// BestWindow is how many candidate seats one page holds.
const BestWindow = 400

// bestCandidates pages through the free seats of event $1 (section $2 or
// any), best first.
const bestCandidates = `SELECT id, seat_id, section_code, row_label, seat_number FROM event_seats
	WHERE event_id = $1 AND ($2 = '' OR section_code = $2)
	  AND (status = 'available' OR (status = 'held' AND held_until < now()))
	ORDER BY section_rank, row_rank, section_code, row_label, seat_number
	LIMIT $3 OFFSET $4`

// BestCandidates reads page (from 0) of the free seats of an event, in one
// section or any, best first.
func (t Tx) BestCandidates(ctx context.Context, eventID int64, section string, page int) ([]Candidate, error) {
	rows, err := t.tx.Query(ctx, bestCandidates, eventID, section, BestWindow, page*BestWindow)
	if err != nil {
		return nil, fmt.Errorf("best available candidates: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Candidate, error) {
		var c Candidate
		return c, r.Scan(&c.ID, &c.Seat, &c.Section, &c.Row, &c.Number)
	})
}

// HasSection tells whether an event has seats in section.
func (t Tx) HasSection(ctx context.Context, eventID int64, section string) (bool, error) {
	var known bool
	err := t.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM event_seats WHERE event_id = $1 AND section_code = $2)`, eventID, section).Scan(&known)
	return known, err
}

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

// ClaimSeats holds event seats for a hold only if every one is free and not
// locked by another buyer (SKIP LOCKED: concurrent buyers skip each other's
// runs instead of waiting); ok tells whether it did.
func (t Tx) ClaimSeats(ctx context.Context, ids []int64, holdID int64, until time.Time) (ok bool, err error) {
	tag, err := t.tx.Exec(ctx, bestClaim, ids, holdID, until, len(ids))
	if err != nil {
		return false, fmt.Errorf("claim best seats: %w", err)
	}
	return tag.RowsAffected() == int64(len(ids)), nil
}

// Statements of the GA slow path, and the check that decides on it.
const (
	slotWithEnough = `SELECT EXISTS (SELECT 1 FROM ga_slots WHERE pool_id = $1 AND remaining >= $2)`
	lockSlots      = `SELECT slot, remaining FROM ga_slots WHERE pool_id = $1 ORDER BY slot FOR UPDATE`
	takeFromSlot   = `UPDATE ga_slots SET remaining = remaining - $3 WHERE pool_id = $1 AND slot = $2`
)

// SlotWithEnough tells whether one slot of a pool has quantity places.
func (r reads) SlotWithEnough(ctx context.Context, poolID int64, quantity int) (bool, error) {
	var enough bool
	err := r.q.QueryRow(ctx, slotWithEnough, poolID, quantity).Scan(&enough)
	return enough, err
}

// TakePlaces takes quantity places of a pool and returns the slot each
// came from (for its order item: TakenPlaces), or nil, having taken
// nothing, when the pool lacks them. It locks every slot of the pool in
// slot order, so concurrent slow paths queue up instead of deadlocking, and
// prefers one slot that has enough.
func (t Tx) TakePlaces(ctx context.Context, poolID int64, quantity int) (slots []int, err error) {
	rows, err := t.tx.Query(ctx, lockSlots, poolID)
	if err != nil {
		return nil, err
	}
	type slotPlaces struct{ slot, n int }
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (slotPlaces, error) {
		var s slotPlaces
		return s, r.Scan(&s.slot, &s.n)
	})
	if err != nil {
		return nil, err
	}
	var taken []slotPlaces
	for _, s := range all {
		if s.n >= quantity {
			taken = []slotPlaces{{s.slot, quantity}}
			break
		}
	}
	if taken == nil {
		need := quantity
		for _, s := range all {
			if q := min(need, s.n); q > 0 {
				taken = append(taken, slotPlaces{s.slot, q})
				need -= q
			}
		}
		if need > 0 {
			return nil, nil
		}
	}
	for _, s := range taken {
		if _, err := t.tx.Exec(ctx, takeFromSlot, poolID, s.slot, s.n); err != nil {
			return nil, err
		}
		for range s.n {
			slots = append(slots, s.slot)
		}
	}
	return slots, nil
}

// seatStates tells, per requested seat ($2) of event $1, whether it is free.
const seatStates = `SELECT seat_id, status = 'available' OR (status = 'held' AND held_until < now())
	FROM event_seats WHERE event_id = $1 AND seat_id = ANY($2)`

// SeatsFree tells, per layout seat id of an event, whether it is free now;
// unknown seats are missing from the map.
func (r reads) SeatsFree(ctx context.Context, eventID int64, seatIDs []int64) (map[int64]bool, error) {
	rows, err := r.q.Query(ctx, seatStates, eventID, seatIDs)
	if err != nil {
		return nil, err
	}
	free := map[int64]bool{}
	var id int64
	var ok bool
	_, err = pgx.ForEachRow(rows, []any{&id, &ok}, func() error {
		free[id] = ok
		return nil
	})
	return free, err
}

// PoolOf reads the GA pool code of an event; found is false when it has none.
func (r reads) PoolOf(ctx context.Context, eventID int64, code string) (p Pool, found bool, err error) {
	found, err = one(r.q.QueryRow(ctx, `SELECT id, slots FROM ga_pools WHERE event_id = $1 AND code = $2`, eventID, code), &p.ID, &p.Slots)
	return p, found, err
}

// HoldByKey finds the hold an account made with an idempotency key, with
// the fingerprint of the request that made it.
func (r reads) HoldByKey(ctx context.Context, account int64, key string) (id int64, hash []byte, found bool, err error) {
	found, err = one(r.q.QueryRow(ctx, `SELECT id, request_hash FROM holds WHERE account_id = $1 AND idempotency_key = $2`,
		account, key), &id, &hash)
	return id, hash, found, err
}

// HoldRow is a hold with its order, as stored.
type HoldRow struct {
	ID, EventID, Account, OrderID int64
	Status                        HoldStatus
	OrderStatus                   OrderStatus
	ExpiresAt                     time.Time
	TotalCents                    int64
	Currency                      string
	Items                         []Item
}

// Hold reads a hold with its order and items.
func (r reads) Hold(ctx context.Context, id int64) (h HoldRow, found bool, err error) {
	found, err = one(r.q.QueryRow(ctx, `
		SELECT h.id, h.event_id, h.account_id, h.status, h.expires_at, o.id, o.status, o.total_cents, o.currency
		FROM holds h JOIN orders o ON o.hold_id = h.id WHERE h.id = $1`, id),
		&h.ID, &h.EventID, &h.Account, &h.Status, &h.ExpiresAt, &h.OrderID, &h.OrderStatus, &h.TotalCents, &h.Currency)
	if !found {
		return HoldRow{}, false, err
	}
	h.ExpiresAt = h.ExpiresAt.UTC()
	h.Items, err = r.Items(ctx, h.OrderID)
	return h, err == nil, err
}

// HoldOwner reads the account that made a hold.
func (r reads) HoldOwner(ctx context.Context, id int64) (account int64, found bool, err error) {
	found, err = one(r.q.QueryRow(ctx, `SELECT account_id FROM holds WHERE id = $1`, id), &account)
	return account, found, err
}

// Items reads the items of an order, with each seat's layout id and index.
func (r reads) Items(ctx context.Context, orderID int64) ([]Item, error) {
	rows, err := r.q.Query(ctx, `
		SELECT coalesce(s.seat_id, 0), s.seat_index, coalesce(p.code, ''), i.quantity, i.label, i.price_level, i.price_cents
		FROM order_items i
		LEFT JOIN event_seats s ON s.id = i.event_seat_id
		LEFT JOIN ga_pools p ON p.id = i.pool_id
		WHERE i.order_id = $1 ORDER BY i.id`, orderID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Item, error) {
		var it Item
		return it, r.Scan(&it.SeatID, &it.SeatIndex, &it.Pool, &it.Quantity, &it.Label, &it.PriceLevel, &it.PriceCents)
	})
}
