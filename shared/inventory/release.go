package inventory

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/event"
)

// Release frees a hold at once and cancels its pending order. Releasing a
// hold that already ended is a no-op; a paid hold cannot be released.
func (s *Service) Release(ctx context.Context, holdID, account int64) (Hold, error) {
	pool, err := s.shards.ForRow(holdID)
	if err != nil {
		return Hold{}, ErrHoldNotFound
	}
	var h Hold
	released := false
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var owner int64
		var status string
		err := tx.QueryRow(ctx, `SELECT account_id, status FROM holds WHERE id = $1 FOR NO KEY UPDATE`, holdID).Scan(&owner, &status)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && owner != account) {
			return ErrHoldNotFound
		}
		if err != nil {
			return err
		}
		switch status {
		case "converted":
			return ErrHoldNotReleasable
		case "active":
			if err := end(ctx, tx, []int64{holdID}, "released"); err != nil {
				return err
			}
			released = true
		}
		h, err = load(ctx, tx, holdID)
		return err
	})
	if err != nil {
		return Hold{}, fmt.Errorf("release hold %d: %w", holdID, err)
	}
	h.Released = released
	return h, nil
}

// end closes active holds (status released or expired): their seats become
// available, their GA places return to the slots they came from, their
// pending orders and unpaid payments are cancelled. Seats already re-held
// by someone else (lazy expiry) are left alone: they no longer carry this
// hold's id.
func end(ctx context.Context, tx pgx.Tx, ids []int64, status string) error {
	_, err := endFreed(ctx, tx, ids, status)
	return err
}

// Freed is what ending holds gave back to one event, for watchers.
type Freed struct {
	EventID int64
	Seats   []int          // layout seat indexes now available
	GA      map[string]int // pool code → places returned
}

// endFreed is end that also reports what came back, per event.
func endFreed(ctx context.Context, tx pgx.Tx, ids []int64, status string) (map[int64]*Freed, error) {
	freed := map[int64]*Freed{}
	of := func(eventID int64) *Freed {
		if freed[eventID] == nil {
			freed[eventID] = &Freed{EventID: eventID, GA: map[string]int{}}
		}
		return freed[eventID]
	}
	if len(ids) == 0 {
		return freed, nil
	}
	orderStatus := "expired"
	if status == "released" {
		orderStatus = "cancelled"
	}
	if _, err := tx.Exec(ctx, `UPDATE holds SET status = $2 WHERE id = ANY($1) AND status = 'active'`, ids, status); err != nil {
		return nil, fmt.Errorf("end holds: %w", err)
	}
	rows, err := tx.Query(ctx, `
		UPDATE event_seats s SET status = 'available', hold_id = NULL, held_until = NULL, updated_at = now()
		FROM (SELECT id FROM event_seats WHERE hold_id = ANY($1) AND status = 'held' ORDER BY id FOR NO KEY UPDATE) t
		WHERE s.id = t.id RETURNING s.event_id, s.seat_index`, ids)
	if err != nil {
		return nil, fmt.Errorf("free seats: %w", err)
	}
	for rows.Next() {
		var eventID int64
		var idx int
		if err := rows.Scan(&eventID, &idx); err != nil {
			rows.Close()
			return nil, err
		}
		f := of(eventID)
		f.Seats = append(f.Seats, idx)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Lock the slots in key order before adding back, so concurrent
	// sweepers and releases cannot deadlock on them.
	rows, err = tx.Query(ctx, `
		WITH back AS (
			SELECT pool_id, slot, sum(quantity) AS q FROM hold_ga WHERE hold_id = ANY($1) GROUP BY pool_id, slot
		), locked AS (
			SELECT g.pool_id, g.slot FROM ga_slots g JOIN back USING (pool_id, slot) ORDER BY g.pool_id, g.slot FOR UPDATE OF g
		), upd AS (
			UPDATE ga_slots g SET remaining = g.remaining + back.q
			FROM back, locked WHERE g.pool_id = back.pool_id AND g.slot = back.slot
			  AND locked.pool_id = back.pool_id AND locked.slot = back.slot
			RETURNING g.pool_id, back.q
		)
		SELECT p.event_id, p.code, sum(upd.q)::int FROM upd JOIN ga_pools p ON p.id = upd.pool_id GROUP BY p.event_id, p.code`, ids)
	if err != nil {
		return nil, fmt.Errorf("return GA places: %w", err)
	}
	for rows.Next() {
		var eventID int64
		var code string
		var q int
		if err := rows.Scan(&eventID, &code, &q); err != nil {
			rows.Close()
			return nil, err
		}
		of(eventID).GA[code] += q
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `UPDATE orders SET status = $2, updated_at = now() WHERE hold_id = ANY($1) AND status = 'pending'`,
		ids, orderStatus); err != nil {
		return nil, fmt.Errorf("cancel orders: %w", err)
	}
	// Their unpaid payments end too, at the PSP through the outbox, so an
	// open payment page cannot charge for places given back. A payment
	// already processing is left to its webhook.
	if _, err := tx.Exec(ctx, `
		WITH ended AS (
			UPDATE payments p SET status = 'canceled', updated_at = now()
			FROM orders o WHERE o.hold_id = ANY($1) AND p.order_id = o.id AND p.status IN ('queued', 'requires_action')
			RETURNING p.order_id, p.psp_payment_id
		)
		INSERT INTO outbox (topic, payload)
		SELECT 'payment.cancel', jsonb_build_object('order_id', order_id, 'payment', psp_payment_id) FROM ended
		WHERE psp_payment_id IS NOT NULL`, ids); err != nil {
		return nil, fmt.Errorf("cancel payments: %w", err)
	}
	return freed, nil
}

// expiredOfEvent locks a batch of event $1's expired holds.
const expiredOfEvent = `SELECT id FROM holds WHERE event_id = $1 AND status = 'active' AND expires_at < now()
	ORDER BY expires_at LIMIT 200 FOR NO KEY UPDATE SKIP LOCKED`

// reclaim expires up to a batch of expired holds of one event inside tx,
// skipping any another transaction is working on.
func reclaim(ctx context.Context, tx pgx.Tx, eventID int64) (int, error) {
	rows, err := tx.Query(ctx, expiredOfEvent, eventID)
	if err != nil {
		return 0, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, err
	}
	return len(ids), end(ctx, tx, ids, "expired")
}

// SweepExpired releases expired holds of one shard in batches, walking the
// partial index on active holds' expiry. Two sweepers at once are safe: each
// batch skips the holds another has locked.
func SweepExpired(ctx context.Context, pool *pgxpool.Pool, batch int) (int, error) {
	return sweep(ctx, pool, batch, nil)
}

// sweep is SweepExpired that tells freed about each batch after commit.
func sweep(ctx context.Context, pool *pgxpool.Pool, batch int, freed func(Freed)) (int, error) {
	total := 0
	for {
		var back map[int64]*Freed
		var n int
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `
				SELECT id FROM holds WHERE status = 'active' AND expires_at < now()
				ORDER BY expires_at LIMIT $1 FOR NO KEY UPDATE SKIP LOCKED`, batch)
			if err != nil {
				return err
			}
			ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			if err != nil {
				return err
			}
			n = len(ids)
			back, err = endFreed(ctx, tx, ids, "expired")
			return err
		})
		if err != nil {
			return total, fmt.Errorf("sweep expired holds: %w", err)
		}
		if freed != nil {
			for _, f := range back {
				freed(*f)
			}
		}
		total += n
		if n < batch {
			return total, nil
		}
	}
}

// SweepAll sweeps every shard; it reports how many holds each released.
func (s *Service) SweepAll(ctx context.Context, batch int) (map[int]int, error) {
	out := map[int]int{}
	var errs []error
	for _, id := range s.shards.IDs() {
		pool, err := s.shards.Pool(id)
		if err == nil {
			out[id], err = sweep(ctx, pool, batch, s.Freed)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("shard %d: %w", id, err))
		}
	}
	return out, errors.Join(errs...)
}

// Availability counts what an event can still sell now (free seats and GA
// places, counting expired holds as free) and what active holds may still
// give back.
func (s *Service) Availability(ctx context.Context, e event.Event) (available, held int, err error) {
	pool, err := s.shards.ReadPool(e.Shard)
	if err != nil {
		return 0, 0, err
	}
	err = pool.QueryRow(ctx, `
		SELECT
		  (SELECT count(*) FROM event_seats WHERE event_id = $1 AND (status = 'available' OR (status = 'held' AND held_until < now())))
		  + (SELECT coalesce(sum(s.remaining), 0) FROM ga_slots s JOIN ga_pools p ON p.id = s.pool_id WHERE p.event_id = $1),
		  (SELECT count(*) FROM event_seats WHERE event_id = $1 AND status = 'held' AND held_until >= now())
		  + (SELECT coalesce(sum(g.quantity), 0) FROM hold_ga g JOIN holds h ON h.id = g.hold_id WHERE h.event_id = $1 AND h.status = 'active')`,
		e.ID).Scan(&available, &held)
	if err != nil {
		return 0, 0, fmt.Errorf("availability of event %d: %w", e.ID, err)
	}
	return available, held, nil
}
