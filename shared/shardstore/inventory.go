package shardstore

// An event's sellable inventory: created once per event, priced by its
// organizer.

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// HasInventory tells whether an event's seats or pools exist on the shard.
func (t Tx) HasInventory(ctx context.Context, eventID int64) (bool, error) {
	var done bool
	err := t.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM event_seats WHERE event_id = $1)
		OR EXISTS (SELECT 1 FROM ga_pools WHERE event_id = $1)`, eventID).Scan(&done)
	return done, err
}

// NewSeat is one seat of an event's inventory.
type NewSeat struct {
	SeatID          int64
	Index           int
	Section         string
	SectionRank     int
	Row             string
	RowRank, Number int
	PriceLevel      string
	PriceCents      int
}

// CreateSeats writes an event's seats.
func (t Tx) CreateSeats(ctx context.Context, eventID int64, seats []NewSeat) error {
	_, err := t.tx.CopyFrom(ctx, pgx.Identifier{"event_seats"},
		[]string{"event_id", "seat_id", "seat_index", "section_code", "section_rank", "row_label", "row_rank", "seat_number", "price_level", "price_cents"},
		pgx.CopyFromSlice(len(seats), func(i int) ([]any, error) {
			s := seats[i]
			return []any{eventID, s.SeatID, s.Index, s.Section, s.SectionRank, s.Row, s.RowRank, s.Number, s.PriceLevel, s.PriceCents}, nil
		}))
	if err != nil {
		return fmt.Errorf("create seats of event %d: %w", eventID, err)
	}
	return nil
}

// NewPool is a GA pool of an event, its capacity spread over slots.
type NewPool struct {
	Code, Name, PriceLevel string
	PriceCents, Capacity   int
	Slots                  int
}

// CreatePool writes a GA pool of an event and its slots.
func (t Tx) CreatePool(ctx context.Context, eventID int64, p NewPool) error {
	var poolID int64
	if err := t.tx.QueryRow(ctx, `
		INSERT INTO ga_pools (event_id, code, name, price_level, price_cents, capacity, slots)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
		eventID, p.Code, p.Name, p.PriceLevel, p.PriceCents, p.Capacity, p.Slots).Scan(&poolID); err != nil {
		return fmt.Errorf("create pool %s of event %d: %w", p.Code, eventID, err)
	}
	_, err := t.tx.Exec(ctx, `
		INSERT INTO ga_slots (pool_id, slot, remaining)
		SELECT $1, g, $2 / $3 + CASE WHEN g < $2 % $3 THEN 1 ELSE 0 END FROM generate_series(0, $3 - 1) g`,
		poolID, p.Capacity, p.Slots)
	if err != nil {
		return fmt.Errorf("create slots of pool %s: %w", p.Code, err)
	}
	return nil
}

// setSeatPrices prices the seats of level $2 of event $1 at $3, every seat
// whatever its state: a held or sold seat's order keeps the price copied at
// its take, and the seat must offer the new one once it is free again (a
// released or expired hold, a refund), since a take reads the seat's price.
// Seats are locked in id order, as holds lock them, so that a price change
// and a hold of several seats cannot each wait for the other; seats at the
// price already are not written.
const setSeatPrices = `UPDATE event_seats s SET price_cents = $3
	FROM (SELECT id FROM event_seats WHERE event_id = $1 AND price_level = $2 AND price_cents <> $3
	      ORDER BY id FOR NO KEY UPDATE) t
	WHERE s.id = t.id`

// SetPrice prices a level of an event: its seats and GA places are taken at
// this price from now on; held and sold ones keep the price copied into
// their orders.
func (t Tx) SetPrice(ctx context.Context, eventID int64, level string, cents int) error {
	if _, err := t.tx.Exec(ctx, setSeatPrices, eventID, level, cents); err != nil {
		return fmt.Errorf("price seats of level %s: %w", level, err)
	}
	if _, err := t.tx.Exec(ctx, `UPDATE ga_pools SET price_cents = $3 WHERE event_id = $1 AND price_level = $2`,
		eventID, level, cents); err != nil {
		return fmt.Errorf("price pools of level %s: %w", level, err)
	}
	return nil
}

// StatusCopy is an event's status and sale end as the organizer's change
// at catalog version Version left them, for the event's shard (Shard).
type StatusCopy struct {
	EventID    int64
	Shard      int
	Status     string
	SaleEndsAt time.Time
	Version    int64
}

// CopyStatus records an event's status and sale end, unless a later
// change is recorded already, so copies may land late, twice or out of
// order. Holds that read an older version of the event are refused while
// its sale is closed, cancelled or past its end (migrations 00013, 00014),
// and checkout sees a newer cancellation (NewerStatus): both read events
// through a cache that may be behind.
func (s *Store) CopyStatus(ctx context.Context, c StatusCopy) error {
	if _, err := s.db.Exec(ctx, `INSERT INTO event_status AS s (event_id, status, sale_ends_at, version) VALUES ($1, $2, $3, $4)
		ON CONFLICT (event_id) DO UPDATE SET status = excluded.status, sale_ends_at = excluded.sale_ends_at, version = excluded.version
		WHERE s.version < excluded.version`, c.EventID, c.Status, c.SaleEndsAt, c.Version); err != nil {
		return fmt.Errorf("copy status %s of event %d: %w", c.Status, c.EventID, err)
	}
	return nil
}

// NewerStatus is an event's status as recorded by CopyStatus at a version
// after version, or "" if none is.
func (t Tx) NewerStatus(ctx context.Context, eventID, version int64) (string, error) {
	var status string
	if _, err := one(t.tx.QueryRow(ctx, `SELECT status FROM event_status WHERE event_id = $1 AND version > $2`, eventID, version), &status); err != nil {
		return "", fmt.Errorf("status of event %d: %w", eventID, err)
	}
	return status, nil
}

// SeatMap calls seat with every seat of an event and whether it is free as
// of the database's clock, which it returns.
func (r reads) SeatMap(ctx context.Context, eventID int64, seat func(index int, section string, free bool)) (time.Time, error) {
	var now time.Time
	if err := r.q.QueryRow(ctx, `SELECT now()`).Scan(&now); err != nil {
		return time.Time{}, err
	}
	rows, err := r.q.Query(ctx, `
		SELECT seat_index, section_code, status = 'available' OR (status = 'held' AND held_until < $2)
		FROM event_seats WHERE event_id = $1`, eventID, now)
	if err != nil {
		return time.Time{}, err
	}
	var idx int
	var section string
	var free bool
	_, err = pgx.ForEachRow(rows, []any{&idx, &section, &free}, func() error {
		seat(idx, section, free)
		return nil
	})
	return now, err
}

// PoolCounts calls pool with every GA pool of an event, its capacity and
// the places left.
func (r reads) PoolCounts(ctx context.Context, eventID int64, pool func(code string, capacity, remaining int)) error {
	rows, err := r.q.Query(ctx, `
		SELECT p.code, p.capacity, coalesce(sum(s.remaining), 0) FROM ga_pools p JOIN ga_slots s ON s.pool_id = p.id
		WHERE p.event_id = $1 GROUP BY p.id`, eventID)
	if err != nil {
		return err
	}
	var code string
	var capacity, remaining int
	_, err = pgx.ForEachRow(rows, []any{&code, &capacity, &remaining}, func() error {
		pool(code, capacity, remaining)
		return nil
	})
	return err
}
