package inventory

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/venue"
)

// DefaultGASlots is how many counter rows a GA pool's quantity is spread over
// (see docs/benchmarks.md for the measurement behind it).
const DefaultGASlots = 64

// Instantiate writes the sellable inventory of an event on its shard: one
// event seat per layout seat, with labels and the level's price copied in,
// and one GA pool per standing section. It is idempotent, so a failed event
// creation can simply be retried.
func Instantiate(ctx context.Context, db *pgxpool.Pool, eventID int64, l venue.Layout, prices map[string]int, gaSlots int) error {
	if gaSlots <= 0 {
		gaSlots = DefaultGASlots
	}
	for _, s := range l.Sections {
		if _, ok := prices[s.PriceLevel]; !ok {
			return fmt.Errorf("instantiate event %d: section %s has price level %q with no price", eventID, s.Code, s.PriceLevel)
		}
	}
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		var done bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM event_seats WHERE event_id = $1)
			OR EXISTS (SELECT 1 FROM ga_pools WHERE event_id = $1)`, eventID).Scan(&done); err != nil {
			return err
		}
		if done {
			return nil
		}
		var rows [][]any
		for _, s := range l.Sections {
			if s.Kind == "standing" {
				if err := createPool(ctx, tx, eventID, s, prices[s.PriceLevel], gaSlots); err != nil {
					return err
				}
				continue
			}
			for _, r := range s.Rows {
				for _, st := range r.Seats {
					rows = append(rows, []any{eventID, st.ID, st.Index, s.Code, s.Rank, r.Label, r.Rank, st.Number, s.PriceLevel, prices[s.PriceLevel]})
				}
			}
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"event_seats"},
			[]string{"event_id", "seat_id", "seat_index", "section_code", "section_rank", "row_label", "row_rank", "seat_number", "price_level", "price_cents"},
			pgx.CopyFromRows(rows))
		if err != nil {
			return fmt.Errorf("instantiate seats of event %d: %w", eventID, err)
		}
		return nil
	})
}

func createPool(ctx context.Context, tx pgx.Tx, eventID int64, s venue.Section, price, slots int) error {
	if slots > s.Capacity && s.Capacity > 0 {
		slots = s.Capacity
	}
	var poolID int64
	if err := tx.QueryRow(ctx, `
		INSERT INTO ga_pools (event_id, code, name, price_level, price_cents, capacity, slots)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
		eventID, s.Code, s.Name, s.PriceLevel, price, s.Capacity, slots).Scan(&poolID); err != nil {
		return fmt.Errorf("create pool %s of event %d: %w", s.Code, eventID, err)
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO ga_slots (pool_id, slot, remaining)
		SELECT $1, g, $2 / $3 + CASE WHEN g < $2 % $3 THEN 1 ELSE 0 END FROM generate_series(0, $3 - 1) g`,
		poolID, s.Capacity, slots)
	if err != nil {
		return fmt.Errorf("create slots of pool %s: %w", s.Code, err)
	}
	return nil
}
