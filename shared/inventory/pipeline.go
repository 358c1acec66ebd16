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

// The hold and order ids of the transaction in flight: holds and orders are
// inserted with nextval, so currval names them in later statements of the
// same pipeline without a round trip. The sub-select makes the planner
// compute the volatile currval once, so index scans on the id still work.
const (
	curHold  = `(SELECT currval('holds_seq') * 1024 + shard_id())`
	curOrder = `(SELECT currval('orders_seq') * 1024 + shard_id())`
)

type step struct {
	sql  string
	args []any
}

// prelude serializes one account's holds on one event (so the limit check
// cannot race), checks the per-account limit and inserts the hold. A reused
// idempotency key fails the insert with a unique violation.
func prelude(e event.Event, req Request, fp []byte, n int) []step {
	return []step{
		{`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,
			[]any{"hold:" + strconv.FormatInt(req.Account, 10) + ":" + strconv.FormatInt(e.ID, 10)}},
		{`SELECT assert(coalesce(sum(o.ticket_count), 0) + $3 <= $4, 'CT002', 'you have ' || coalesce(sum(o.ticket_count), 0) || ' of ' || $4 || ' tickets for this event')
			FROM orders o JOIN holds h ON h.id = o.hold_id
			WHERE o.user_id = $1 AND o.event_id = $2
			  AND (o.status = 'paid' OR (o.status = 'pending' AND h.status = 'active' AND h.expires_at > now()))`,
			[]any{req.Account, e.ID, n, e.MaxPerAccount}},
		{`INSERT INTO holds (event_id, account_id, expires_at, idempotency_key, request_hash)
			VALUES ($1, $2, now() + make_interval(secs => $3), $4, $5) RETURNING id, expires_at`,
			[]any{e.ID, req.Account, e.HoldTTL, req.Key, fp}},
	}
}

// orderSteps writes the pending order and its items for what the hold asks,
// copying labels and prices, and returns the items. They run before the
// take, so the contended rows stay locked only for the take and the commit.
// src selects (event_seat_id, pool_id, seat_id, seat_index, pool_code,
// quantity, label, price_level, price_cents) with parameters $1.. srcArgs.
func orderSteps(e event.Event, src string, srcArgs ...any) []step {
	currency := "$" + strconv.Itoa(len(srcArgs)+1)
	return []step{
		{`WITH src AS (` + src + `)
			INSERT INTO orders (event_id, user_id, hold_id, ticket_count, total_cents, currency, idempotency_key)
			SELECT h.event_id, h.account_id, h.id, coalesce(sum(src.quantity), 0), coalesce(sum(src.quantity * src.price_cents), 0),
				` + currency + `, 'hold:' || h.id
			FROM holds h LEFT JOIN src ON true WHERE h.id = ` + curHold + ` GROUP BY h.id
			HAVING count(src.quantity) > 0
			RETURNING id, total_cents`, append(srcArgs, e.Currency)},
		{`WITH src AS (` + src + `), ins AS (
				INSERT INTO order_items (order_id, event_seat_id, pool_id, quantity, label, price_level, price_cents)
				SELECT ` + curOrder + `, event_seat_id, pool_id, quantity, label, price_level, price_cents FROM src
				RETURNING id, event_seat_id, pool_id
			)
			SELECT src.seat_id, src.seat_index, src.pool_code, src.quantity, src.label, src.price_level, src.price_cents
			FROM ins JOIN src ON src.event_seat_id IS NOT DISTINCT FROM ins.event_seat_id AND src.pool_id IS NOT DISTINCT FROM ins.pool_id
			ORDER BY src.seat_index NULLS LAST, ins.id`, srcArgs},
	}
}

// seatSource selects seats of an event by layout seat id ($2) for orderSteps.
const seatSource = `SELECT id AS event_seat_id, NULL::bigint AS pool_id, seat_id, seat_index, '' AS pool_code, 1 AS quantity,
	'Section ' || section_code || ' · Row ' || row_label || ' · Seat ' || seat_number AS label, price_level, price_cents
	FROM event_seats WHERE event_id = $1 AND seat_id = ANY($2)`

// poolSource selects $2 places of pool $1 for orderSteps.
const poolSource = `SELECT NULL::bigint AS event_seat_id, id AS pool_id, 0::bigint AS seat_id, NULL::int AS seat_index, code AS pool_code,
	$2::int AS quantity, name || ' × ' || $2::int AS label, price_level, price_cents
	FROM ga_pools WHERE id = $1`

// takeSeats is the compare-and-set on seat rows, locked in id order: only
// seats that are available or whose hold has expired flip to this hold.
func takeSeats(eventID int64, seatIDs []int64) []step {
	return []step{
		{`WITH target AS (
				SELECT id FROM event_seats WHERE event_id = $1 AND seat_id = ANY($2) ORDER BY id FOR NO KEY UPDATE
			)
			UPDATE event_seats s SET status = 'held', hold_id = ` + curHold + `,
				held_until = (SELECT expires_at FROM holds WHERE id = ` + curHold + `), updated_at = now()
			FROM target
			WHERE s.id = target.id AND (s.status = 'available' OR (s.status = 'held' AND s.held_until < now()))`,
			[]any{eventID, seatIDs}},
		{`SELECT assert(count(*) = $1, 'CT001', 'seats taken') FROM event_seats WHERE hold_id = ` + curHold,
			[]any{len(seatIDs)}},
	}
}

// takeGAFast claims quantity from one slot of a pool: with several slots it
// starts at a random one and skips slots other buyers have locked; with one
// slot it is the plain counter update and waits its turn.
func takeGAFast(p poolMeta, quantity int) []step {
	claim := `SELECT slot FROM ga_slots WHERE pool_id = $1 AND remaining >= $2
			ORDER BY (slot - $3 + $4) % $4 LIMIT 1 FOR UPDATE SKIP LOCKED`
	if p.slots == 1 {
		claim = `SELECT slot FROM ga_slots WHERE pool_id = $1 AND remaining >= $2 AND $3::int >= 0 AND $4::int = 1`
	}
	return []step{
		{`WITH c AS (` + claim + `),
			u AS (UPDATE ga_slots g SET remaining = g.remaining - $2 FROM c
			      WHERE g.pool_id = $1 AND g.slot = c.slot AND g.remaining >= $2 RETURNING g.slot)
			INSERT INTO hold_ga (hold_id, pool_id, slot, quantity) SELECT ` + curHold + `, $1, slot, $2 FROM u`,
			[]any{p.id, quantity, rand.IntN(p.slots), p.slots}},
		{`SELECT assert(EXISTS (SELECT 1 FROM hold_ga WHERE hold_id = ` + curHold + `), 'CT003', 'no slot with enough places')`, nil},
	}
}

func scanItems(rows pgx.Rows) ([]Item, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Item, error) {
		var it Item
		return it, r.Scan(&it.SeatID, &it.SeatIndex, &it.Pool, &it.Quantity, &it.Label, &it.PriceLevel, &it.PriceCents)
	})
}

// pipeline sends steps as one round trip. Without an explicit BEGIN,
// PostgreSQL runs every statement up to the batch's Sync as one implicit
// transaction: the first failure rolls all of them back. Steps are the
// prelude, the two order steps, then the take.
func pipeline(ctx context.Context, pool *pgxpool.Pool, e event.Event, steps []step) (Hold, error) {
	b := &pgx.Batch{}
	for _, s := range steps {
		b.Queue(s.sql, s.args...)
	}
	br := pool.SendBatch(ctx, b)
	defer br.Close()
	h := Hold{EventID: e.ID, Status: "active", OrderStatus: "pending", Currency: e.Currency}
	for i := range steps {
		var err error
		switch i {
		case 2:
			err = br.QueryRow().Scan(&h.ID, &h.ExpiresAt)
		case 3:
			err = br.QueryRow().Scan(&h.OrderID, &h.TotalCents)
		case 4:
			var rows pgx.Rows
			if rows, err = br.Query(); err == nil {
				h.Items, err = scanItems(rows)
			}
		default:
			_, err = br.Exec()
		}
		if errors.Is(err, pgx.ErrNoRows) {
			// Nothing to order (e.g. unknown seats): the take's assert
			// further down the pipeline holds the real reason.
			if cerr := br.Close(); cerr != nil {
				err = cerr
			}
		}
		if err != nil {
			return Hold{}, err
		}
	}
	h.ExpiresAt = h.ExpiresAt.UTC()
	return h, br.Close()
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
