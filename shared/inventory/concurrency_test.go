package inventory_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/inventory"
)

// TestNaiveReadThenWriteDoubleSells shows the race the compare-and-set
// prevents: fans who all read "available" before any of them writes each
// believe they got the seat.
func TestNaiveReadThenWriteDoubleSells(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100, 10)
	ctx := context.Background()
	seat := f.seats[0]
	const fans = 50
	var read, start sync.WaitGroup
	read.Add(fans)
	start.Add(1)
	var winners atomic.Int32
	var wg sync.WaitGroup
	for i := range fans {
		wg.Go(func() {
			var status string
			err := f.shard.QueryRow(ctx, `SELECT status FROM event_seats WHERE event_id = $1 AND seat_id = $2`, f.event.ID, seat).Scan(&status)
			read.Done()
			start.Wait() // every fan has looked before anyone writes
			if err != nil || status != "available" {
				return
			}
			tag, err := f.shard.Exec(ctx, `UPDATE event_seats SET status = 'held', hold_id = $3, held_until = now() + interval '5 minutes'
				WHERE event_id = $1 AND seat_id = $2`, f.event.ID, seat, int64(i+1))
			if err == nil && tag.RowsAffected() == 1 {
				winners.Add(1)
			}
		})
	}
	read.Wait()
	start.Done()
	wg.Wait()
	require.Greater(t, int(winners.Load()), 1, "without the guard, several fans 'hold' the same seat")
}

// TestCompareAndSetHoldsOneSeatOnce runs the same stampede through the real
// hold: exactly one fan gets the seat, everyone else gets ErrSeatsTaken.
func TestCompareAndSetHoldsOneSeatOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100, 10)
	ctx := context.Background()
	seat := f.seats[0]
	const fans = 50
	var start sync.WaitGroup
	start.Add(1)
	var winners, taken atomic.Int32
	var wg sync.WaitGroup
	for i := range fans {
		wg.Go(func() {
			start.Wait()
			_, _, err := f.app.Inventory.Hold(ctx, f.event, inventory.Request{Account: int64(i + 1), Key: "k", Seats: []int64{seat}})
			switch {
			case err == nil:
				winners.Add(1)
			case errors.Is(err, inventory.ErrSeatsTaken):
				taken.Add(1)
			default:
				t.Errorf("unexpected error: %v", err)
			}
		})
	}
	start.Done()
	wg.Wait()
	require.EqualValues(t, 1, winners.Load())
	require.EqualValues(t, fans-1, taken.Load())
	require.Equal(t, 1, f.count(t, `SELECT count(*) FROM holds`), "failed attempts leave no hold behind")
	require.Equal(t, 1, f.count(t, `SELECT count(*) FROM orders`), "failed attempts leave no order behind")
}

// TestOneFansRacingHoldsKeepTheLimit: a fan's holds sent at once, each
// within the limit but not together, get at most the limit: one wins and
// the other is over it (its check counts the winner's tickets although its
// statement began before the winner committed).
func TestOneFansRacingHoldsKeepTheLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 200, 10) // 8 per account, 4 per hold
	ctx := context.Background()
	const fans, holds = 10, 3
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([][]error, fans)
	for fan := range fans {
		errs[fan] = make([]error, holds)
		for i := range holds {
			wg.Go(func() {
				first := (fan*holds + i) * 4
				<-start
				_, _, errs[fan][i] = f.app.Inventory.Hold(ctx, f.event, inventory.Request{Account: int64(100 + fan),
					Key: fmt.Sprint(i), Seats: f.seats[first : first+4]})
			})
		}
	}
	close(start)
	wg.Wait()
	for fan, fanErrs := range errs {
		won := 0
		for _, err := range fanErrs {
			if err == nil {
				won++
			} else {
				require.ErrorIs(t, err, inventory.ErrAccountLimit, "fan %d", fan)
			}
		}
		require.Equal(t, 2, won, "fan %d: two holds of 4 fill the limit of 8", fan)
	}
	require.Zero(t, f.count(t, `SELECT count(*) FROM (SELECT user_id FROM orders GROUP BY user_id HAVING sum(ticket_count) > 8) o`))
}

// TestConcurrentMixedHolds throws 240 concurrent requests of all three
// shapes at a small event whose demand exceeds supply, then checks the
// invariants straight in the database.
func TestConcurrentMixedHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100, 60)
	ctx := context.Background()
	hot := f.seats[:40] // everyone fights over the best 40 seats
	const clients = 240
	type outcome struct {
		hold inventory.Hold
		err  error
		req  inventory.Request
	}
	results := make([]outcome, clients)
	var start sync.WaitGroup
	start.Add(1)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			req := inventory.Request{Account: int64(1000 + i), Key: fmt.Sprintf("req-%d", i)}
			switch i % 3 {
			case 0:
				for _, j := range rng.Perm(len(hot))[:1+rng.IntN(4)] {
					req.Seats = append(req.Seats, hot[j])
				}
			case 1:
				req.Pool, req.Quantity = "FLOOR", 1+rng.IntN(4)
			case 2:
				req.Best = &inventory.Best{Quantity: 1 + rng.IntN(4)}
			}
			start.Wait()
			h, _, err := f.app.Inventory.Hold(ctx, f.event, req)
			results[i] = outcome{hold: h, err: err, req: req}
		})
	}
	start.Done()
	wg.Wait()

	ok, seatItems, gaHeld := 0, 0, 0
	minFailedGA := 1 << 30
	seatOwner := map[int64]int64{}
	for _, r := range results {
		if r.err != nil {
			require.True(t, errors.Is(r.err, inventory.ErrSeatsTaken) || errors.Is(r.err, inventory.ErrSoldOut),
				"only contention errors are expected, got %v", r.err)
			if r.req.Pool != "" {
				minFailedGA = min(minFailedGA, r.req.Quantity)
			}
			continue
		}
		ok++
		for _, it := range r.hold.Items {
			if it.Pool != "" {
				gaHeld += it.Quantity
				continue
			}
			seatItems++
			prev, dup := seatOwner[it.SeatID]
			require.False(t, dup, "seat %d held by holds %d and %d", it.SeatID, prev, r.hold.ID)
			seatOwner[it.SeatID] = r.hold.ID
		}
	}
	require.Positive(t, ok)
	require.Equal(t, ok, f.count(t, `SELECT count(*) FROM holds`), "every failed request left nothing behind")
	require.Equal(t, ok, f.count(t, `SELECT count(*) FROM orders WHERE status = 'pending'`))
	require.Equal(t, seatItems, f.count(t, `SELECT count(*) FROM event_seats WHERE status = 'held'`))
	require.Zero(t, f.count(t, `
		SELECT count(*) FROM (SELECT event_seat_id FROM order_items WHERE event_seat_id IS NOT NULL
		GROUP BY event_seat_id HAVING count(*) > 1) d`), "no seat is in two orders")
	require.Zero(t, f.count(t, `
		SELECT count(*) FROM event_seats s JOIN order_items i ON i.event_seat_id = s.id JOIN orders o ON o.id = i.order_id
		WHERE s.hold_id IS DISTINCT FROM o.hold_id`), "each held seat carries the hold of its order")

	remaining := f.count(t, `SELECT sum(remaining) FROM ga_slots`)
	require.Equal(t, 60, remaining+gaHeld, "GA places are conserved")
	require.Equal(t, gaHeld, f.count(t, `SELECT coalesce(sum(cardinality(slots)), 0) FROM order_items`))
	require.Less(t, remaining, minFailedGA, "GA said sold out only when fewer places than asked were left")

	// Demand of one place at a time fills the pool exactly to capacity.
	for i := 0; remaining > 0; i++ {
		_, _, err := f.app.Inventory.Hold(ctx, f.event, inventory.Request{Account: int64(5000 + i), Key: "fill", Pool: "FLOOR", Quantity: 1})
		require.NoError(t, err)
		remaining--
	}
	_, _, err := f.app.Inventory.Hold(ctx, f.event, inventory.Request{Account: 9999, Key: "over", Pool: "FLOOR", Quantity: 1})
	require.ErrorIs(t, err, inventory.ErrSoldOut)
	require.Zero(t, f.count(t, `SELECT sum(remaining) FROM ga_slots`))
	require.Equal(t, 60, f.count(t, `SELECT sum(cardinality(slots)) FROM order_items`), "GA holds reach capacity exactly")
}

// TestBestAvailableGivesAdjacentSeatsToConcurrentBuyers checks that parallel
// best-available buyers get disjoint runs of adjacent seats.
func TestBestAvailableGivesAdjacentSeatsToConcurrentBuyers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 300, 10)
	ctx := context.Background()
	var wg sync.WaitGroup
	holds := make([]inventory.Hold, 40)
	for i := range holds {
		wg.Go(func() {
			h, _, err := f.app.Inventory.Hold(ctx, f.event, inventory.Request{Account: int64(i + 1), Key: "b", Best: &inventory.Best{Quantity: 3}})
			assert.NoError(t, err)
			holds[i] = h
		})
	}
	wg.Wait()
	seen := map[int64]bool{}
	for _, h := range holds {
		require.Len(t, h.Items, 3)
		for j, it := range h.Items {
			require.False(t, seen[it.SeatID], "seat %d given twice", it.SeatID)
			seen[it.SeatID] = true
			if j > 0 {
				require.Equal(t, *h.Items[j-1].SeatIndex+1, *it.SeatIndex, "best-available seats are adjacent: %v", h.Items)
			}
		}
	}
	require.Equal(t, 120, f.count(t, `SELECT count(*) FROM event_seats WHERE status = 'held'`))
}
