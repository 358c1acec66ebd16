package inventory_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/shardstore"
)

func TestIdempotentHold(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100, 10)
	ctx := context.Background()
	req := inventory.Request{Account: 1, Key: "same", Seats: []int64{f.seats[0], f.seats[1]}}
	first, replayed, err := f.app.Inventory.Hold(ctx, f.event, req)
	require.NoError(t, err)
	require.False(t, replayed)
	require.EqualValues(t, 600, first.TotalCents, "two level-A seats at 300")
	require.Len(t, first.Items, 2)

	again, replayed, err := f.app.Inventory.Hold(ctx, f.event, req)
	require.NoError(t, err)
	require.True(t, replayed)
	require.Equal(t, first.ID, again.ID)
	require.Equal(t, first.OrderID, again.OrderID)
	require.Equal(t, first.Items, again.Items)

	other := req
	other.Seats = []int64{f.seats[2]}
	_, _, err = f.app.Inventory.Hold(ctx, f.event, other)
	require.ErrorIs(t, err, inventory.ErrKeyReused)

	// A double-click storm with one key makes one hold.
	var wg sync.WaitGroup
	ids := make([]int64, 20)
	for i := range ids {
		wg.Go(func() {
			h, _, err := f.app.Inventory.Hold(ctx, f.event, inventory.Request{Account: 2, Key: "storm", Pool: "FLOOR", Quantity: 2})
			if err == nil {
				ids[i] = h.ID
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		require.Equal(t, ids[0], id)
	}
	require.Equal(t, 2, f.count(t, `SELECT count(*) FROM holds`))
	require.Equal(t, 8, f.count(t, `SELECT sum(remaining) FROM ga_slots`))
}

func TestHoldLimits(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100, 10)
	ctx := context.Background()
	hold := func(account int64, key string, seats ...int64) error {
		_, _, err := f.app.Inventory.Hold(ctx, f.event, inventory.Request{Account: account, Key: key, Seats: seats})
		return err
	}
	require.ErrorIs(t, hold(1, "a", f.seats[:5]...), inventory.ErrInvalidRequest, "max 4 per hold")
	require.ErrorIs(t, hold(1, "b"), inventory.ErrInvalidRequest, "empty request")
	require.ErrorIs(t, hold(1, "c", f.seats[0], f.seats[0]), inventory.ErrInvalidRequest, "duplicate seat")
	_, _, err := f.app.Inventory.Hold(ctx, f.event, inventory.Request{Account: 1, Key: "d", Pool: "FLOOR", Quantity: -1})
	require.ErrorIs(t, err, inventory.ErrInvalidRequest)
	_, _, err = f.app.Inventory.Hold(ctx, f.event, inventory.Request{Account: 1, Key: "e", Pool: "FLOOR", Quantity: 1, Seats: f.seats[:1]})
	require.ErrorIs(t, err, inventory.ErrInvalidRequest, "two shapes at once")
	_, _, err = f.app.Inventory.Hold(ctx, f.event, inventory.Request{Account: 1, Key: "s", Best: &inventory.Best{Quantity: 1, Section: "NOPE"}})
	require.ErrorIs(t, err, inventory.ErrInvalidRequest, "a section the venue lacks is a mistake, not sold out")

	require.NoError(t, hold(1, "f", f.seats[:4]...))
	require.NoError(t, hold(1, "g", f.seats[4:7]...))
	err = hold(1, "g2", f.seats[7:10]...)
	require.ErrorIs(t, err, inventory.ErrAccountLimit, "8 per account, held counts")
	require.ErrorContains(t, err, "you have 7 of 8 tickets for this event, so at most 1 more", "the fan learns how many still fit")
	var le *inventory.LimitError
	require.ErrorAs(t, err, &le)
	require.Equal(t, 1, le.Remaining, "how many still fit, for the fan's page")
	require.NoError(t, hold(1, "g3", f.seats[7]))
	err = hold(1, "h", f.seats[8])
	require.ErrorIs(t, err, inventory.ErrAccountLimit)
	require.ErrorContains(t, err, "you have 8 of 8 tickets for this event, so no more")
	require.ErrorAs(t, err, &le)
	require.Zero(t, le.Remaining)

	require.ErrorIs(t, hold(2, "i", 999999999), inventory.ErrUnknownSeat)
	var se *inventory.SeatError
	err = hold(2, "j", f.seats[0], f.seats[20])
	require.ErrorAs(t, err, &se)
	require.ErrorIs(t, err, inventory.ErrSeatsTaken)
	require.Equal(t, []int64{f.seats[0]}, se.Seats, "the error names the taken seat so the map can resync")

	closed := f.event
	closed.SaleEndsAt = time.Now().Add(-time.Minute)
	_, _, err = f.app.Inventory.Hold(ctx, closed, inventory.Request{Account: 3, Key: "k", Seats: f.seats[30:31]})
	require.ErrorIs(t, err, inventory.ErrSalesClosed)
	require.Equal(t, 3, f.count(t, `SELECT count(*) FROM holds`), "rejected requests wrote nothing")
}

func TestReleaseAndExpiry(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100, 4)
	ctx := context.Background()
	inv := f.app.Inventory

	h, _, err := inv.Hold(ctx, f.event, inventory.Request{Account: 1, Key: "a", Seats: f.seats[:2]})
	require.NoError(t, err)
	_, err = inv.Release(ctx, h.ID, 2)
	require.ErrorIs(t, err, inventory.ErrHoldNotFound, "only the owner can release")
	released, err := inv.Release(ctx, h.ID, 1)
	require.NoError(t, err)
	require.Equal(t, shardstore.HoldReleased, released.Status)
	require.Equal(t, shardstore.OrderCancelled, released.OrderStatus)
	_, err = inv.Release(ctx, h.ID, 1)
	require.NoError(t, err, "releasing twice is harmless")
	require.Zero(t, f.count(t, `SELECT count(*) FROM event_seats WHERE status <> 'available'`))

	// Lazy expiry: an expired hold's seats and places are holdable again
	// before any sweeper runs.
	_, _, err = inv.Hold(ctx, f.event, inventory.Request{Account: 3, Key: "b", Seats: f.seats[:2]})
	require.NoError(t, err)
	_, _, err = inv.Hold(ctx, f.event, inventory.Request{Account: 3, Key: "c", Pool: "FLOOR", Quantity: 4})
	require.NoError(t, err)
	_, _, err = inv.Hold(ctx, f.event, inventory.Request{Account: 4, Key: "d", Pool: "FLOOR", Quantity: 1})
	require.ErrorIs(t, err, inventory.ErrSoldOut)
	f.expireAll(t)
	_, _, err = inv.Hold(ctx, f.event, inventory.Request{Account: 4, Key: "e", Seats: f.seats[:2]})
	require.NoError(t, err, "an expired hold's seats can be taken")
	_, _, err = inv.Hold(ctx, f.event, inventory.Request{Account: 4, Key: "f", Pool: "FLOOR", Quantity: 4})
	require.NoError(t, err, "an expired hold's GA places come back")
	require.Equal(t, 0, f.count(t, `SELECT count(*) FROM holds WHERE account_id = 3 AND status = 'active'`))
	require.Equal(t, 2, f.count(t, `SELECT count(*) FROM orders WHERE user_id = 3 AND status = 'expired'`),
		"the expired holds' orders are expired once reclaimed")
}

func TestSweeperIsSafeTwiceAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 300, 100)
	ctx := context.Background()
	for i := range 50 {
		req := inventory.Request{Account: int64(i + 1), Key: "s", Seats: f.seats[i*2 : i*2+2]}
		if i%2 == 1 {
			req = inventory.Request{Account: int64(i + 1), Key: "s", Pool: "FLOOR", Quantity: 2}
		}
		_, _, err := f.app.Inventory.Hold(ctx, f.event, req)
		require.NoError(t, err)
	}
	f.expireAll(t)
	var wg sync.WaitGroup
	counts := make([]int, 2)
	for i := range counts {
		wg.Go(func() {
			n, err := inventory.SweepExpired(ctx, f.shard, 7)
			if err != nil {
				t.Errorf("sweep: %v", err)
			}
			counts[i] = n
		})
	}
	wg.Wait()
	require.Equal(t, 50, counts[0]+counts[1], "each expired hold released exactly once")
	require.Zero(t, f.count(t, `SELECT count(*) FROM event_seats WHERE status <> 'available'`))
	require.Equal(t, 100, f.count(t, `SELECT sum(remaining) FROM ga_slots`))
	require.Equal(t, 50, f.count(t, `SELECT count(*) FROM orders WHERE status = 'expired'`))
	n, err := inventory.SweepExpired(ctx, f.shard, 7)
	require.NoError(t, err)
	require.Zero(t, n)
}
