package inventory_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/loadstat"
	"github.com/catraca/catraca/shared/organizer"
)

// benchOps is how many operations each benchmark case runs per b.N.
const benchOps = 1000

var clientCounts = []int{1, 16, 64}

// BenchmarkSeatHolds compares seat holds (two seats each, all distinct, so
// every hold succeeds) with a baseline of plain single-statement UPDATEs
// that make the same change to the same rows (two seats flipped to held),
// without the hold's checks, order and idempotency record; same database,
// same run.
func BenchmarkSeatHolds(b *testing.B) {
	f := newFixture(b, 50000, 10, func(s *organizer.EventSpec) { s.MaxPerAccount, s.MaxPerHold = 4, 4 })
	ctx := context.Background()
	run := 0
	reset := func() {
		_, err := f.shard.Exec(ctx, `TRUNCATE order_items, orders, hold_ga, holds CASCADE`)
		if err == nil {
			_, err = f.shard.Exec(ctx, `UPDATE event_seats SET status = 'available', hold_id = NULL, held_until = NULL WHERE status <> 'available'`)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, clients := range clientCounts {
		b.Run(fmt.Sprintf("baseline-update/clients=%d", clients), func(b *testing.B) {
			for range b.N {
				reset()
				r := loadstat.Run(clients, benchOps, func(seq int) error {
					_, err := f.shard.Exec(ctx, `UPDATE event_seats SET status = 'held', hold_id = $3, held_until = now() + interval '5 minutes'
						WHERE event_id = $1 AND seat_id = ANY($2)`, f.event.ID, f.seats[seq*2:seq*2+2], int64(seq+1))
					return err
				})
				loadstat.Report(b, r, "ops")
			}
		})
		b.Run(fmt.Sprintf("hold/clients=%d", clients), func(b *testing.B) {
			for range b.N {
				reset()
				run++
				r := loadstat.Run(clients, benchOps, func(seq int) error {
					_, _, err := f.app.Inventory.Hold(ctx, f.event, inventory.Request{
						Account: int64(run*1_000_000 + seq), Key: strconv.Itoa(seq), Seats: f.seats[seq*2 : seq*2+2]})
					return err
				})
				loadstat.Report(b, r, "ops")
			}
		})
	}
}

// BenchmarkGAHolds compares a single counter row with the slotted counters
// at growing concurrency; every hold takes one place from a pool that never
// runs out.
func BenchmarkGAHolds(b *testing.B) {
	for _, strategy := range []struct {
		name  string
		slots int
	}{{"single-row", 1}, {"slotted-64", 64}} {
		f := newFixture(b, 100, 10_000_000, func(s *organizer.EventSpec) { s.GASlots = strategy.slots; s.MaxPerAccount = 4 })
		ctx := context.Background()
		for _, clients := range clientCounts {
			b.Run(fmt.Sprintf("%s/clients=%d", strategy.name, clients), func(b *testing.B) {
				for i := range b.N {
					r := loadstat.Run(clients, benchOps, func(seq int) error {
						_, _, err := f.app.Inventory.Hold(ctx, f.event, inventory.Request{
							Account: int64(clients*1_000_000 + i*benchOps + seq), Key: "ga", Pool: "FLOOR", Quantity: 1})
						return err
					})
					loadstat.Report(b, r, "ops")
				}
			})
		}
	}
}
