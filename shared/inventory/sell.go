package inventory

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Sell turns a hold into a sale inside tx (the payment transaction): its
// seats become sold to orderID and the hold is converted. If the hold had
// ended (expired or released) before the payment landed, Sell re-takes the
// same seats and GA places when they are still free; ok is false when they
// are gone (the caller refunds). It returns the sold seats' layout indexes.
func Sell(ctx context.Context, tx pgx.Tx, holdID, orderID int64) (ok bool, seats []int, err error) {
	var status string
	err = tx.QueryRow(ctx, `SELECT status FROM holds WHERE id = $1 FOR NO KEY UPDATE`, holdID).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil, ErrHoldNotFound
	}
	if err != nil {
		return false, nil, err
	}
	if status == "converted" {
		return true, nil, nil
	}
	sp, err := tx.Begin(ctx) // savepoint: a failed re-take leaves the rest of tx intact
	if err != nil {
		return false, nil, err
	}
	defer sp.Rollback(ctx)
	var want int
	if err := sp.QueryRow(ctx, `SELECT count(*) FROM order_items WHERE order_id = $1 AND event_seat_id IS NOT NULL`, orderID).Scan(&want); err != nil {
		return false, nil, err
	}
	rows, err := sp.Query(ctx, `
		UPDATE event_seats s SET status = 'sold', held_until = NULL, hold_id = $2, order_id = $1, updated_at = now()
		FROM (SELECT id FROM event_seats WHERE id IN (SELECT event_seat_id FROM order_items WHERE order_id = $1)
		      ORDER BY id FOR NO KEY UPDATE) t
		WHERE s.id = t.id AND ((s.hold_id = $2 AND s.status = 'held') OR s.status = 'available'
		                       OR (s.status = 'held' AND s.held_until < now()))
		RETURNING s.seat_index`, orderID, holdID)
	if err != nil {
		return false, nil, fmt.Errorf("sell seats: %w", err)
	}
	if seats, err = pgx.CollectRows(rows, pgx.RowTo[int]); err != nil {
		return false, nil, err
	}
	if len(seats) != want {
		return false, nil, nil
	}
	if status != "active" {
		// The hold's GA places went back to the pool: take them again.
		rows, err := sp.Query(ctx, `SELECT pool_id, quantity FROM order_items WHERE order_id = $1 AND pool_id IS NOT NULL`, orderID)
		if err != nil {
			return false, nil, err
		}
		type ga struct {
			pool int64
			qty  int
		}
		items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ga, error) {
			var g ga
			return g, r.Scan(&g.pool, &g.qty)
		})
		if err != nil {
			return false, nil, err
		}
		// Its old per-slot record was given back when the hold ended.
		if _, err := sp.Exec(ctx, `DELETE FROM hold_ga WHERE hold_id = $1`, holdID); err != nil {
			return false, nil, err
		}
		for _, it := range items {
			taken, err := takeGA(ctx, sp, it.pool, it.qty)
			if err != nil {
				return false, nil, err
			}
			if taken == nil {
				return false, nil, nil
			}
			for slot, q := range taken {
				if _, err := sp.Exec(ctx, `INSERT INTO hold_ga (hold_id, pool_id, slot, quantity) VALUES ($1, $2, $3, $4)
					ON CONFLICT (hold_id, pool_id, slot) DO UPDATE SET quantity = hold_ga.quantity + excluded.quantity`,
					holdID, it.pool, slot, q); err != nil {
					return false, nil, err
				}
			}
		}
	}
	if _, err := sp.Exec(ctx, `UPDATE holds SET status = 'converted' WHERE id = $1`, holdID); err != nil {
		return false, nil, err
	}
	return true, seats, sp.Commit(ctx)
}
