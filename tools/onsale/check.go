package onsale

import (
	"context"
	"fmt"
)

// check verifies the invariants of a finished on-sale against the shard
// and the PSP simulator; it returns every violation found.
func (r *run) check(ctx context.Context) ([]string, error) {
	db, err := r.st.App.Shards.ForEvent(ctx, r.event)
	if err != nil {
		return nil, err
	}
	var out []string
	count := func(what, q string, args ...any) error {
		var n int64
		if err := db.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if n != 0 {
			out = append(out, fmt.Sprintf("%s: %d", what, n))
		}
		return nil
	}
	checks := []struct{ what, q string }{
		{"seats in more than one paid order", `SELECT count(*) FROM (SELECT i.event_seat_id FROM order_items i JOIN orders o ON o.id = i.order_id
			WHERE o.event_id = $1 AND o.status = 'paid' AND i.event_seat_id IS NOT NULL GROUP BY 1 HAVING count(*) > 1) x`},
		{"sold seats without a paid order", `SELECT count(*) FROM event_seats s WHERE s.event_id = $1 AND s.status = 'sold'
			AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.id = s.order_id AND o.status = 'paid')`},
		{"paid seats not marked sold", `SELECT count(*) FROM order_items i JOIN orders o ON o.id = i.order_id JOIN event_seats s ON s.id = i.event_seat_id
			WHERE o.event_id = $1 AND o.status = 'paid' AND (s.status <> 'sold' OR s.order_id <> o.id)`},
		{"GA places not conserved (capacity ≠ left + held + sold)", `SELECT count(*) FROM ga_pools p WHERE p.event_id = $1 AND p.capacity <>
			(SELECT coalesce(sum(remaining), 0) FROM ga_slots WHERE pool_id = p.id)
			+ (SELECT coalesce(sum(cardinality(i.slots)), 0) FROM order_items i JOIN orders o ON o.id = i.order_id JOIN holds h ON h.id = o.hold_id
			   WHERE i.pool_id = p.id AND h.status IN ('active', 'converted'))`},
		{"paid orders whose tickets are missing", `SELECT count(*) FROM orders o WHERE o.event_id = $1 AND o.status = 'paid'
			AND (SELECT count(*) FROM tickets t WHERE t.order_id = o.id) <> o.ticket_count`},
		{"paid orders without a succeeded payment", `SELECT count(*) FROM orders o WHERE o.event_id = $1 AND o.status = 'paid'
			AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.id AND p.status = 'succeeded')`},
	}
	for _, c := range checks {
		if err := count(c.what, c.q, r.event); err != nil {
			return nil, err
		}
	}

	stats := r.st.Sim.Stats()
	rows, err := db.Query(ctx, `SELECT id, status FROM orders WHERE event_id = $1`, r.event)
	if err != nil {
		return nil, err
	}
	status := map[int64]string{}
	for rows.Next() {
		var id int64
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			return nil, err
		}
		status[id] = s
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for id, s := range status {
		charges, refunds := stats.Charges[id], stats.Refunds[id]
		switch {
		case s == "paid" && charges != 1:
			out = append(out, fmt.Sprintf("order %d is paid with %d successful charges", id, charges))
		case s == "paid" && refunds != 0:
			out = append(out, fmt.Sprintf("order %d is paid and refunded", id))
		case s != "paid" && charges != refunds:
			out = append(out, fmt.Sprintf("order %d (%s) was charged %d times and refunded %d times", id, s, charges, refunds))
		case refunds > 0 && s != "refunded":
			out = append(out, fmt.Sprintf("order %d refunded by the PSP but %s here", id, s))
		}
	}
	if stats.RateLimited > 0 {
		out = append(out, fmt.Sprintf("the PSP rate limit was hit %d times (max %d ops/s)", stats.RateLimited, stats.MaxOpsPerSecond))
	}
	r.rep.mu.Lock()
	for _, s := range r.rep.Samples {
		if s.Active > int64(r.o.Ceiling) {
			out = append(out, fmt.Sprintf("%d shoppers at once at t=%.0fs, ceiling %d", s.Active, s.T, r.o.Ceiling))
			break
		}
	}
	r.rep.mu.Unlock()
	return out, nil
}
