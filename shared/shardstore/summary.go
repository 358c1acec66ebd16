package shardstore

// The live control room's sales summary of one event: four aggregate
// queries sent as one batch (one round trip). Each reads one event through
// an index on event_id: seats and pools by the venue's size, orders by the
// sale's; none by the number of fans waiting.

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Summary is an event's sales now.
type Summary struct {
	Seats    SeatSummary
	Pools    []PoolSummary
	Sales    Sales
	Payments InFlight
}

// SeatSummary are the reserved seats by state: per section, and as bitsets
// by layout index (bit i, least significant first in each byte) for a map.
type SeatSummary struct {
	Sections []SectionSummary
	Sold     string
	Held     string
	Count    int
}

// SectionSummary counts one section's seats.
type SectionSummary struct {
	Code      string
	Sold      int
	Held      int
	Available int
	Total     int
}

// PoolSummary counts one general-admission pool's places.
type PoolSummary struct {
	Code      string
	Name      string
	Sold      int
	Held      int
	Available int
	Total     int
}

// Sales are an event's orders so far.
type Sales struct {
	RevenueCents  int64
	OrdersPaid    int64
	TicketsSold   int64
	OrdersPending int64
	Refunded      int64
	RefundedCents int64
}

// InFlight are an event's payments in flight: queued behind the PSP's rate
// limit, waiting on the fan at the PSP's page, or processing at the bank.
type InFlight struct {
	Queued         int64
	RequiresAction int64
	Processing     int64
}

const (
	summarySeats = `SELECT seat_index, section_code, status, status = 'held' AND held_until > now()
		FROM event_seats WHERE event_id = $1 ORDER BY section_rank, section_code`
	summaryPools = `WITH sold AS (
			SELECT i.pool_id, sum(i.quantity) AS n FROM orders o JOIN order_items i ON i.order_id = o.id
			WHERE o.event_id = $1 AND o.status = 'paid' AND i.pool_id IS NOT NULL GROUP BY i.pool_id)
		SELECT p.code, p.name, p.capacity, coalesce(sum(s.remaining), 0)::int, coalesce(max(sold.n), 0)::int
		FROM ga_pools p LEFT JOIN ga_slots s ON s.pool_id = p.id LEFT JOIN sold ON sold.pool_id = p.id
		WHERE p.event_id = $1 GROUP BY p.id ORDER BY p.code`
	summarySales = `SELECT coalesce(sum(total_cents) FILTER (WHERE status = 'paid'), 0)::bigint,
			count(*) FILTER (WHERE status = 'paid'), coalesce(sum(ticket_count) FILTER (WHERE status = 'paid'), 0)::bigint,
			count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE status = 'refunded'),
			coalesce(sum(total_cents) FILTER (WHERE status = 'refunded'), 0)::bigint
		FROM orders WHERE event_id = $1`
	summaryPayments = `SELECT count(*) FILTER (WHERE p.status = 'queued'), count(*) FILTER (WHERE p.status = 'requires_action'),
			count(*) FILTER (WHERE p.status = 'processing')
		FROM payments p JOIN orders o ON o.id = p.order_id
		WHERE p.status IN ('queued', 'requires_action', 'processing') AND o.event_id = $1`
)

// Summary reads an event's sales summary in one round trip.
func (s *Store) Summary(ctx context.Context, eventID int64) (Summary, error) {
	var sum Summary
	var b pgx.Batch
	sections := map[string]int{}
	var sold, held []byte
	b.Queue(summarySeats, eventID).Query(func(rows pgx.Rows) error {
		var idx int
		var code string
		var status SeatStatus
		var live bool
		_, err := pgx.ForEachRow(rows, []any{&idx, &code, &status, &live}, func() error {
			i, ok := sections[code]
			if !ok {
				i = len(sum.Seats.Sections)
				sections[code] = i
				sum.Seats.Sections = append(sum.Seats.Sections, SectionSummary{Code: code})
			}
			for len(sold) <= idx/8 {
				sold, held = append(sold, 0), append(held, 0)
			}
			sec := &sum.Seats.Sections[i]
			sec.Total++
			sum.Seats.Count++
			switch {
			case status == SeatSold:
				sec.Sold++
				sold[idx/8] |= 1 << (idx % 8)
			case live:
				sec.Held++
				held[idx/8] |= 1 << (idx % 8)
			case status == SeatAvailable || status == SeatHeld: // a lapsed hold is free
				sec.Available++
			}
			return nil
		})
		return err
	})
	b.Queue(summaryPools, eventID).Query(func(rows pgx.Rows) error {
		var p PoolSummary
		_, err := pgx.ForEachRow(rows, []any{&p.Code, &p.Name, &p.Total, &p.Available, &p.Sold}, func() error {
			p.Held = max(0, p.Total-p.Available-p.Sold)
			sum.Pools = append(sum.Pools, p)
			return nil
		})
		return err
	})
	b.Queue(summarySales, eventID).QueryRow(func(row pgx.Row) error {
		x := &sum.Sales
		return row.Scan(&x.RevenueCents, &x.OrdersPaid, &x.TicketsSold, &x.OrdersPending, &x.Refunded, &x.RefundedCents)
	})
	b.Queue(summaryPayments, eventID).QueryRow(func(row pgx.Row) error {
		return row.Scan(&sum.Payments.Queued, &sum.Payments.RequiresAction, &sum.Payments.Processing)
	})
	if err := s.db.SendBatch(ctx, &b).Close(); err != nil {
		return Summary{}, fmt.Errorf("summary of event %d: %w", eventID, err)
	}
	sum.Seats.Sold, sum.Seats.Held = base64.StdEncoding.EncodeToString(sold), base64.StdEncoding.EncodeToString(held)
	if sum.Seats.Sections == nil {
		sum.Seats.Sections = []SectionSummary{}
	}
	if sum.Pools == nil {
		sum.Pools = []PoolSummary{}
	}
	return sum, nil
}
