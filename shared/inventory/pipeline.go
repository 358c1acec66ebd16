package inventory

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/event"
)

// SQLSTATEs raised through assert() (migration 00002).
const (
	stateTaken  = "CT001" // fewer seats flipped than asked
	stateLimit  = "CT002" // per-account limit
	stateNoSlot = "CT003" // no GA slot could give the whole quantity at once
)

// curHold is the id of the hold in flight: holds are inserted with nextval,
// so currval names it in the next statement of the same pipeline without a
// round trip. The sub-select makes the planner compute the volatile currval
// once, so index scans on the id still work.
const curHold = `(SELECT currval('holds_seq') * 1024 + shard_id())`

// shortfall is the error a take raises when it gets less than asked.
type shortfall struct{ code, message string }

var (
	seatsTaken = shortfall{stateTaken, "seats taken"}
	noSlot     = shortfall{stateNoSlot, "no slot with enough places"}
)

type step struct {
	sql  string
	args []any
}

// LimitLock is the statement that serializes whatever takes places for one
// account ($1, LimitLockKey) on one event: holds, and payments that re-take
// the places of an ended hold, so neither can slip past the other's limit
// check.
const LimitLock = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`

// LimitLockKey names an account's lock on an event.
func LimitLockKey(account, eventID int64) string {
	return "hold:" + strconv.FormatInt(account, 10) + ":" + strconv.FormatInt(eventID, 10)
}

// insertHold takes the account's limit lock (so the limit check in
// orderStep, whose snapshot comes later, cannot race) and inserts the hold.
// A reused idempotency key fails with a unique violation.
func insertHold(e event.Event, req Request, fp []byte) step {
	return step{`INSERT INTO holds (event_id, account_id, expires_at, idempotency_key, request_hash)
		SELECT $1, $2, now() + make_interval(secs => $3), $4, $5
		FROM (SELECT pg_advisory_xact_lock(hashtextextended($6, 0))) AS serialized
		RETURNING id, expires_at`,
		[]any{e.ID, req.Account, e.HoldTTL, req.Key, fp, LimitLockKey(req.Account, e.ID)}}
}

// orderStep checks the account's limit, writes the pending order and its
// items, and returns the items, each row carrying the order id and total.
// ctes (parameters $1..) must define src: (event_seat_id, pool_id, seat_id,
// seat_index, pool_code, quantity, label, price_level, price_cents), usually
// around the take itself, so limit, take, order and items are one
// statement; a take should require (SELECT ok FROM lim) so it locks nothing
// for a request over the limit. Unless src adds up to want tickets, the
// statement fails with short.
func orderStep(e event.Event, account int64, ctes string, args []any, want int, short shortfall) step {
	n := len(args)
	p := func(i int) string { return "$" + strconv.Itoa(n+i) }
	return step{`WITH lim AS (
			SELECT ensure(coalesce(sum(o.ticket_count), 0) + ` + p(4) + ` <= ` + p(7) + `, 'CT002',
				'you have ' || coalesce(sum(o.ticket_count), 0) || ' of ' || ` + p(7) + ` || ' tickets for this event') AS ok
			FROM orders o JOIN holds h ON h.id = o.hold_id
			WHERE o.user_id = ` + p(2) + ` AND o.event_id = ` + p(1) + `
			  AND (o.status = 'paid' OR (o.status = 'pending' AND h.status = 'active' AND h.expires_at > now()))
		), ` + ctes + `,
		o AS (
			INSERT INTO orders (event_id, user_id, hold_id, ticket_count, total_cents, currency)
			SELECT ` + p(1) + `, ` + p(2) + `, ` + curHold + `, sum(quantity), sum(quantity * price_cents), ` + p(3) + ` FROM src
			HAVING (SELECT ok FROM lim) AND ensure(coalesce(sum(quantity), 0) = ` + p(4) + `, ` + p(5) + `, ` + p(6) + `)
			RETURNING id, total_cents
		), ins AS (
			INSERT INTO order_items (order_id, event_seat_id, pool_id, quantity, label, price_level, price_cents)
			SELECT o.id, event_seat_id, pool_id, quantity, label, price_level, price_cents FROM src, o
			RETURNING id, event_seat_id, pool_id
		)
		SELECT o.id, o.total_cents, src.seat_id, src.seat_index, src.pool_code, src.quantity, src.label, src.price_level, src.price_cents
		FROM ins JOIN src ON src.event_seat_id IS NOT DISTINCT FROM ins.event_seat_id AND src.pool_id IS NOT DISTINCT FROM ins.pool_id
		CROSS JOIN o
		ORDER BY src.seat_index NULLS LAST, ins.id`,
		append(args, e.ID, account, e.Currency, want, short.code, short.message, e.MaxPerAccount)}
}

// seatColumns turns the event_seats columns of alias t into src columns
// for orderStep.
func seatColumns(t string) string {
	return t + `.id AS event_seat_id, NULL::bigint AS pool_id, ` + t + `.seat_id, ` + t + `.seat_index, '' AS pool_code, 1 AS quantity,
		'Section ' || ` + t + `.section_code || ' · Row ' || ` + t + `.row_label || ' · Seat ' || ` + t + `.seat_number AS label,
		` + t + `.price_level, ` + t + `.price_cents`
}

// seatSource selects seats of an event by layout seat id ($2) for orderStep.
var seatSource = `src AS (SELECT ` + seatColumns("s") + ` FROM event_seats s WHERE s.event_id = $1 AND s.seat_id = ANY($2))`

// poolColumns turns ga_pools alias t and a quantity expression into src
// columns for orderStep.
func poolColumns(t, quantity string) string {
	return `NULL::bigint AS event_seat_id, ` + t + `.id AS pool_id, 0::bigint AS seat_id, NULL::int AS seat_index, ` + t + `.code AS pool_code,
		` + quantity + ` AS quantity, ` + t + `.name || ' × ' || ` + quantity + ` AS label, ` + t + `.price_level, ` + t + `.price_cents`
}

// poolSource selects $2 places of pool $1 for orderStep.
var poolSource = `src AS (SELECT ` + poolColumns("p", "$2::int") + ` FROM ga_pools p WHERE p.id = $1)`

// takeSeats is the compare-and-set on seat rows, locked in id order: only
// seats that are available or whose hold has expired flip to this hold, and
// the order is written from the rows that flipped. held_until equals the
// hold's expires_at: now() is the transaction's start in both.
func takeSeats(e event.Event, account int64, seatIDs []int64) step {
	return orderStep(e, account, `target AS (
			SELECT id FROM event_seats WHERE (SELECT ok FROM lim) AND event_id = $1 AND seat_id = ANY($2) ORDER BY id FOR NO KEY UPDATE
		), src AS (
			UPDATE event_seats s SET status = 'held', hold_id = `+curHold+`,
				held_until = now() + make_interval(secs => $3), updated_at = now()
			FROM target
			WHERE s.id = target.id AND (s.status = 'available' OR (s.status = 'held' AND s.held_until < now()))
			RETURNING `+seatColumns("s")+`
		)`, []any{e.ID, seatIDs, e.HoldTTL}, len(seatIDs), seatsTaken)
}

// takeGAFast claims quantity from one slot of a pool and orders it: with
// several slots it starts at a random one and skips slots other buyers have
// locked; with one slot it is the plain counter update and waits its turn.
func takeGAFast(e event.Event, account int64, p poolMeta, quantity int) step {
	claim := `SELECT slot FROM ga_slots WHERE (SELECT ok FROM lim) AND pool_id = $1 AND remaining >= $2
			ORDER BY (slot - $3 + $4) % $4 LIMIT 1 FOR UPDATE SKIP LOCKED`
	if p.slots == 1 {
		claim = `SELECT slot FROM ga_slots WHERE (SELECT ok FROM lim) AND pool_id = $1 AND remaining >= $2 AND $3::int >= 0 AND $4::int = 1`
	}
	return orderStep(e, account, `c AS (`+claim+`),
		u AS (UPDATE ga_slots g SET remaining = g.remaining - $2 FROM c
		      WHERE g.pool_id = $1 AND g.slot = c.slot AND g.remaining >= $2 RETURNING g.slot),
		hg AS (INSERT INTO hold_ga (hold_id, pool_id, slot, quantity) SELECT `+curHold+`, $1, slot, $2 FROM u RETURNING quantity),
		src AS (SELECT `+poolColumns("p", "hg.quantity")+` FROM ga_pools p, hg WHERE p.id = $1)`,
		[]any{p.id, quantity, rand.IntN(p.slots), p.slots}, quantity, noSlot)
}

func scanItems(rows pgx.Rows) ([]Item, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Item, error) {
		var it Item
		return it, r.Scan(&it.SeatID, &it.SeatIndex, &it.Pool, &it.Quantity, &it.Label, &it.PriceLevel, &it.PriceCents)
	})
}

// pipeline sends the hold insert and the take-and-order step as one round
// trip. Without an explicit BEGIN, PostgreSQL runs every statement up to the
// batch's Sync as one implicit transaction: the first failure rolls all of
// them back.
func pipeline(ctx context.Context, pool *pgxpool.Pool, e event.Event, hold, take step) (Hold, error) {
	b := &pgx.Batch{}
	b.Queue(hold.sql, hold.args...)
	b.Queue(take.sql, take.args...)
	br := pool.SendBatch(ctx, b)
	defer br.Close()
	h := Hold{EventID: e.ID, Status: "active", OrderStatus: "pending", Currency: e.Currency}
	if err := br.QueryRow().Scan(&h.ID, &h.ExpiresAt); err != nil {
		return Hold{}, err
	}
	rows, err := br.Query()
	if err == nil {
		err = scanOrder(rows, &h)
	}
	if err != nil {
		return Hold{}, err
	}
	h.ExpiresAt = h.ExpiresAt.UTC()
	return h, br.Close()
}

// scanOrder reads orderStep's rows into h.
func scanOrder(rows pgx.Rows, h *Hold) error {
	var err error
	h.Items, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Item, error) {
		var it Item
		return it, r.Scan(&h.OrderID, &h.TotalCents, &it.SeatID, &it.SeatIndex, &it.Pool, &it.Quantity, &it.Label, &it.PriceLevel, &it.PriceCents)
	})
	return err
}

// poolMeta is the immutable part of a GA pool.
type poolMeta struct {
	id    int64
	slots int
}

type poolCache struct{ m sync.Map } // "event/code" → poolMeta

func (c *poolCache) get(ctx context.Context, db interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, eventID int64, code string) (poolMeta, error) {
	key := strconv.FormatInt(eventID, 10) + "/" + code
	if v, ok := c.m.Load(key); ok {
		return v.(poolMeta), nil
	}
	var p poolMeta
	err := db.QueryRow(ctx, `SELECT id, slots FROM ga_pools WHERE event_id = $1 AND code = $2`, eventID, code).Scan(&p.id, &p.slots)
	if errors.Is(err, pgx.ErrNoRows) {
		return poolMeta{}, fmt.Errorf("%w: no pool %q", ErrUnknownSeat, code)
	}
	if err != nil {
		return poolMeta{}, err
	}
	c.m.Store(key, p)
	return p, nil
}

// sqlState returns the SQLSTATE of a PostgreSQL error, or "".
func sqlState(err error) (string, string) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code, pgErr.Message
	}
	return "", ""
}
