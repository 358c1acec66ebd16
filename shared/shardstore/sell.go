package shardstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// LockAccount takes an account's limit lock on an event (see LimitLockKey)
// until the transaction ends.
func (t Tx) LockAccount(ctx context.Context, account, eventID int64) error {
	return t.lock(ctx, LimitLockKey(account, eventID), false)
}

// lock takes the advisory lock named key until the transaction ends,
// alone or (shared) with other sharers.
func (t Tx) lock(ctx context.Context, key string, shared bool) error {
	q := `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`
	if shared {
		q = `SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 0))`
	}
	_, err := t.tx.Exec(ctx, q, key)
	return err
}

// SellHold turns a hold into a sale: its seats become sold to orderID and
// the hold is converted. If the hold had ended (expired or released) before
// the payment landed, it re-takes the same seats and GA places when they are
// still free; ok is false, and nothing changes, when they are gone. It
// returns the sold seats' layout indexes.
func (t Tx) SellHold(ctx context.Context, holdID, orderID int64) (ok bool, seats []int, err error) {
	var status HoldStatus
	found, err := one(t.tx.QueryRow(ctx, `SELECT status FROM holds WHERE id = $1 FOR NO KEY UPDATE`, holdID), &status)
	if err == nil && !found {
		err = fmt.Errorf("hold %d: %w", holdID, pgx.ErrNoRows) // an order's hold always exists
	}
	if err != nil {
		return false, nil, err
	}
	if status == HoldConverted {
		return true, nil, nil
	}
	// A savepoint: a failed re-take leaves the rest of the payment intact.
	ok, err = t.savepoint(ctx, func(sp Tx) (bool, error) {
		if seats, err = sp.sellSeats(ctx, holdID, orderID); err != nil || seats == nil {
			return false, err
		}
		if status != HoldActive {
			// The hold's GA places went back to the pool: take them again.
			if ok, err := sp.retakePlaces(ctx, orderID); !ok || err != nil {
				return false, err
			}
		}
		_, err := sp.tx.Exec(ctx, `UPDATE holds SET status = 'converted' WHERE id = $1`, holdID)
		return err == nil, err
	})
	if !ok {
		seats = nil
	}
	return ok, seats, err
}

// sellSeats marks the order's seats sold if every one is still this hold's
// or free; seats is nil when some are gone.
func (t Tx) sellSeats(ctx context.Context, holdID, orderID int64) (seats []int, err error) {
	var want int
	if err := t.tx.QueryRow(ctx, `SELECT count(*) FROM order_items WHERE order_id = $1 AND event_seat_id IS NOT NULL`, orderID).Scan(&want); err != nil {
		return nil, err
	}
	rows, err := t.tx.Query(ctx, `
		UPDATE event_seats s SET status = 'sold', held_until = NULL, hold_id = $2, order_id = $1, updated_at = now()
		FROM (SELECT id FROM event_seats WHERE id IN (SELECT event_seat_id FROM order_items WHERE order_id = $1)
		      ORDER BY id FOR NO KEY UPDATE) t
		WHERE s.id = t.id AND ((s.hold_id = $2 AND s.status = 'held') OR s.status = 'available'
		                       OR (s.status = 'held' AND s.held_until < now()))
		RETURNING s.seat_index`, orderID, holdID)
	if err != nil {
		return nil, fmt.Errorf("sell seats: %w", err)
	}
	if seats, err = pgx.CollectRows(rows, pgx.RowTo[int]); err != nil || len(seats) != want {
		return nil, err
	}
	if seats == nil {
		seats = []int{} // a GA order sells no seat, and has not failed
	}
	return seats, nil
}

// retakePlaces takes an ended hold's GA places again, recording on each
// item the slots they now come from (the old ones were given back when the
// hold ended); ok is false when the pool lacks them.
func (t Tx) retakePlaces(ctx context.Context, orderID int64) (ok bool, err error) {
	rows, err := t.tx.Query(ctx, `SELECT id, pool_id, quantity FROM order_items WHERE order_id = $1 AND pool_id IS NOT NULL`, orderID)
	if err != nil {
		return false, err
	}
	type ga struct {
		item, pool int64
		qty        int
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ga, error) {
		var g ga
		return g, r.Scan(&g.item, &g.pool, &g.qty)
	})
	if err != nil {
		return false, err
	}
	for _, it := range items {
		slots, err := t.TakePlaces(ctx, it.pool, it.qty)
		if err != nil || slots == nil {
			return false, err
		}
		if _, err := t.tx.Exec(ctx, `UPDATE order_items SET slots = $2 WHERE id = $1`, it.item, slots); err != nil {
			return false, err
		}
	}
	return true, nil
}
