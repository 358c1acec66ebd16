package inventory

import (
	"context"
	"fmt"

	"github.com/catraca/catraca/shared/shardstore"
	"github.com/catraca/catraca/shared/venue"
)

// DefaultGASlots is how many counter rows a GA pool's quantity is spread over
// (see docs/benchmarks.md for the measurement behind it).
const DefaultGASlots = 64

// Instantiate writes the sellable inventory of an event on its shard: one
// event seat per layout seat, with labels and the level's price copied in,
// and one GA pool per standing section. It is idempotent, so a failed event
// creation can simply be retried.
func Instantiate(ctx context.Context, st *shardstore.Store, eventID int64, l venue.Layout, prices map[string]int, gaSlots int) error {
	if gaSlots <= 0 {
		gaSlots = DefaultGASlots
	}
	for _, s := range l.Sections {
		if _, ok := prices[s.PriceLevel]; !ok {
			return fmt.Errorf("instantiate event %d: section %s has price level %q with no price", eventID, s.Code, s.PriceLevel)
		}
	}
	return st.WithTx(ctx, func(tx shardstore.Tx) error {
		if done, err := tx.HasInventory(ctx, eventID); err != nil || done {
			return err
		}
		var seats []shardstore.NewSeat
		for _, s := range l.Sections {
			if s.Kind == "standing" {
				slots := gaSlots
				if slots > s.Capacity && s.Capacity > 0 {
					slots = s.Capacity
				}
				if err := tx.CreatePool(ctx, eventID, shardstore.NewPool{Code: s.Code, Name: s.Name, PriceLevel: s.PriceLevel,
					PriceCents: prices[s.PriceLevel], Capacity: s.Capacity, Slots: slots}); err != nil {
					return err
				}
				continue
			}
			for _, r := range s.Rows {
				for _, st := range r.Seats {
					seats = append(seats, shardstore.NewSeat{SeatID: st.ID, Index: st.Index, Section: s.Code, SectionRank: s.Rank,
						Row: r.Label, RowRank: r.Rank, Number: st.Number, PriceLevel: s.PriceLevel, PriceCents: prices[s.PriceLevel]})
				}
			}
		}
		return tx.CreateSeats(ctx, eventID, seats)
	})
}
