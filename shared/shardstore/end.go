package shardstore

// Ending holds: released by their fan, or expired (lazily by a take, or by
// the sweeper).

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// LockHold locks a hold for a change of state and reads its owner and
// state.
func (t Tx) LockHold(ctx context.Context, id int64) (account int64, status HoldStatus, found bool, err error) {
	found, err = one(t.tx.QueryRow(ctx, `SELECT account_id, status FROM holds WHERE id = $1 FOR NO KEY UPDATE`, id), &account, &status)
	return account, status, found, err
}

// expiredOfEvent locks a batch of event $1's expired holds.
const expiredOfEvent = `SELECT id FROM holds WHERE event_id = $1 AND status = 'active' AND expires_at < now()
	ORDER BY expires_at LIMIT 200 FOR NO KEY UPDATE SKIP LOCKED`

// ExpireOfEvent ends up to a batch of an event's expired holds, skipping
// any another transaction is working on.
func (t Tx) ExpireOfEvent(ctx context.Context, eventID int64) error {
	rows, err := t.tx.Query(ctx, expiredOfEvent, eventID)
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	_, err = t.EndHolds(ctx, ids, HoldExpired)
	return err
}

// ExpireBatch ends up to batch expired holds of the shard, oldest first,
// skipping any another transaction has locked; n is how many it ended.
func (t Tx) ExpireBatch(ctx context.Context, batch int) (n int, freed []Freed, err error) {
	rows, err := t.tx.Query(ctx, `
		SELECT id FROM holds WHERE status = 'active' AND expires_at < now()
		ORDER BY expires_at LIMIT $1 FOR NO KEY UPDATE SKIP LOCKED`, batch)
	if err != nil {
		return 0, nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, nil, err
	}
	freed, err = t.EndHolds(ctx, ids, HoldExpired)
	return len(ids), freed, err
}

// Freed is what ending holds gave back to one event, for watchers.
type Freed struct {
	EventID int64
	Seats   []int          // layout seat indexes now available
	GA      map[string]int // pool code → places returned
}

// freedByEvent collects Freed per event, in the order events appear.
type freedByEvent struct {
	order []int64
	by    map[int64]*Freed
}

func (f *freedByEvent) of(eventID int64) *Freed {
	if f.by[eventID] == nil {
		f.by[eventID] = &Freed{EventID: eventID, GA: map[string]int{}}
		f.order = append(f.order, eventID)
	}
	return f.by[eventID]
}

func (f *freedByEvent) list() []Freed {
	out := make([]Freed, 0, len(f.order))
	for _, id := range f.order {
		out = append(out, *f.by[id])
	}
	return out
}

// EndHolds closes active holds (status released or expired): their seats
// become available, their GA places return to the slots they came from,
// their pending orders and unpaid payments are cancelled. Seats already
// re-held by someone else (lazy expiry) are left alone: they no longer carry
// this hold's id. It reports what came back, per event.
func (t Tx) EndHolds(ctx context.Context, ids []int64, status HoldStatus) ([]Freed, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if _, err := t.tx.Exec(ctx, `UPDATE holds SET status = $2 WHERE id = ANY($1) AND status = 'active'`, ids, status); err != nil {
		return nil, fmt.Errorf("end holds: %w", err)
	}
	freed := &freedByEvent{by: map[int64]*Freed{}}
	if err := t.freeSeats(ctx, ids, freed); err != nil {
		return nil, fmt.Errorf("free seats: %w", err)
	}
	if err := t.returnPlaces(ctx, ids, freed); err != nil {
		return nil, fmt.Errorf("return GA places: %w", err)
	}
	if _, err := t.tx.Exec(ctx, `UPDATE orders SET status = $2, updated_at = now() WHERE hold_id = ANY($1) AND status = 'pending'`,
		ids, EndedOrder(status)); err != nil {
		return nil, fmt.Errorf("cancel orders: %w", err)
	}
	if err := t.cancelPayments(ctx, ids); err != nil {
		return nil, fmt.Errorf("cancel payments: %w", err)
	}
	return freed.list(), nil
}

// freeSeats makes the seats the holds still have available.
func (t Tx) freeSeats(ctx context.Context, ids []int64, freed *freedByEvent) error {
	rows, err := t.tx.Query(ctx, `
		UPDATE event_seats s SET status = 'available', hold_id = NULL, held_until = NULL, updated_at = now()
		FROM (SELECT id FROM event_seats WHERE hold_id = ANY($1) AND status = 'held' ORDER BY id FOR NO KEY UPDATE) t
		WHERE s.id = t.id RETURNING s.event_id, s.seat_index`, ids)
	if err != nil {
		return err
	}
	var eventID int64
	var idx int
	_, err = pgx.ForEachRow(rows, []any{&eventID, &idx}, func() error {
		f := freed.of(eventID)
		f.Seats = append(f.Seats, idx)
		return nil
	})
	return err
}

// placesBack adds the GA places of holds $1 back to the slots their order
// items record and sums them per event and pool.
const placesBack = `WITH back AS (
		SELECT i.pool_id, s.slot, count(*) AS q
		FROM orders o JOIN order_items i ON i.order_id = o.id CROSS JOIN unnest(i.slots) AS s (slot)
		WHERE o.hold_id = ANY($1) GROUP BY i.pool_id, s.slot
	), locked AS (
		SELECT g.pool_id, g.slot FROM ga_slots g JOIN back USING (pool_id, slot) ORDER BY g.pool_id, g.slot FOR UPDATE OF g
	), upd AS (
		UPDATE ga_slots g SET remaining = g.remaining + back.q
		FROM back, locked WHERE g.pool_id = back.pool_id AND g.slot = back.slot
		  AND locked.pool_id = back.pool_id AND locked.slot = back.slot
		RETURNING g.pool_id, back.q
	)
	SELECT p.event_id, p.code, sum(upd.q)::int FROM upd JOIN ga_pools p ON p.id = upd.pool_id GROUP BY p.event_id, p.code`

// returnPlaces adds the holds' GA places back to the slots they came from
// (placesBack). It locks the slots in key order first, so concurrent
// sweepers and releases cannot deadlock on them.
func (t Tx) returnPlaces(ctx context.Context, ids []int64, freed *freedByEvent) error {
	rows, err := t.tx.Query(ctx, placesBack, ids)
	if err != nil {
		return err
	}
	var eventID int64
	var code string
	var q int
	_, err = pgx.ForEachRow(rows, []any{&eventID, &code, &q}, func() error {
		freed.of(eventID).GA[code] += q
		return nil
	})
	return err
}

// cancelPayments ends the holds' unpaid payments, at the PSP too through the
// outbox, so an open payment page cannot charge for places given back. A
// payment already processing is left to its webhook.
func (t Tx) cancelPayments(ctx context.Context, ids []int64) error {
	_, err := t.tx.Exec(ctx, `
		WITH ended AS (
			UPDATE payments p SET status = 'canceled', updated_at = now()
			FROM orders o WHERE o.hold_id = ANY($1) AND p.order_id = o.id AND p.status IN ('queued', 'requires_action')
			RETURNING p.order_id, p.psp_payment_id
		)
		INSERT INTO outbox (topic, payload)
		SELECT 'payment.cancel', jsonb_build_object('order_id', order_id, 'payment', psp_payment_id) FROM ended
		WHERE psp_payment_id IS NOT NULL`, ids)
	return err
}

// Availability counts what an event can still sell now (free seats and GA
// places, counting expired holds as free) and what active holds may still
// give back.
func (r reads) Availability(ctx context.Context, eventID int64) (available, held int, err error) {
	err = r.q.QueryRow(ctx, `
		SELECT
		  (SELECT count(*) FROM event_seats WHERE event_id = $1 AND (status = 'available' OR (status = 'held' AND held_until < now())))
		  + (SELECT coalesce(sum(s.remaining), 0) FROM ga_slots s JOIN ga_pools p ON p.id = s.pool_id WHERE p.event_id = $1),
		  (SELECT count(*) FROM event_seats WHERE event_id = $1 AND status = 'held' AND held_until >= now())
		  + (SELECT coalesce(sum(cardinality(i.slots)), 0) FROM holds h JOIN orders o ON o.hold_id = h.id JOIN order_items i ON i.order_id = o.id
		     WHERE h.event_id = $1 AND h.status = 'active')`,
		eventID).Scan(&available, &held)
	return available, held, err
}
