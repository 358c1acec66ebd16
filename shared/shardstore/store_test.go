package shardstore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/dev/testenv"
	"github.com/catraca/catraca/shared/shardstore"
)

// calls counts the statements and batches a pool sends.
type calls struct{ queries, batches atomic.Int64 }

func (c *calls) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.queries.Add(1)
	return ctx
}
func (c *calls) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *calls) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.batches.Add(1)
	return ctx
}
func (c *calls) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *calls) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// newStore returns a store on a fresh migrated shard holding event 1 with
// seats 1..n (price level A, 100 each) and a GA pool "GA" of capacity
// places over slots, and the counter of what the store sends.
func newStore(t *testing.T, seats, capacity, slots int) (*shardstore.Store, *calls) {
	t.Helper()
	ctx := context.Background()
	dbs := testenv.NewDatabases(t, 1)
	cfg, err := pgxpool.ParseConfig(dbs.DSN(dbs.Shards[1]))
	require.NoError(t, err)
	c := &calls{}
	cfg.ConnConfig.Tracer = c
	cfg.MaxConns = 1 // one connection: its statement cache is warm after the first hold
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	st := shardstore.New(pool)
	var rows []shardstore.NewSeat
	for i := range seats {
		rows = append(rows, shardstore.NewSeat{SeatID: int64(i + 1), Index: i, Section: "S", Row: "1", Number: i + 1, PriceLevel: "A", PriceCents: 100})
	}
	require.NoError(t, st.WithTx(ctx, func(tx shardstore.Tx) error {
		if err := tx.CreateSeats(ctx, 1, rows); err != nil {
			return err
		}
		return tx.CreatePool(ctx, 1, shardstore.NewPool{Code: "GA", Name: "Floor", PriceLevel: "A", PriceCents: 50, Capacity: capacity, Slots: slots})
	}))
	return st, c
}

// hold is a hold request of account for event 1.
func hold(account int64, key string) shardstore.NewHold {
	return shardstore.NewHold{EventID: 1, Account: account, TTL: 60, Key: key, Hash: []byte(key), Currency: "BRL", MaxPerAccount: 10}
}

// TestHoldsAreOneRoundTrip: a seat hold and a GA hold (a slot has enough)
// each send the database one batch and nothing else, once the
// connection's statement cache is warm.
func TestHoldsAreOneRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, c := newStore(t, 10, 100, 4)
	pool, found, err := st.PoolOf(ctx, 1, "GA")
	require.NoError(t, err)
	require.True(t, found)
	_, err = st.TakeSeats(ctx, hold(1, "warm"), []int64{1})
	require.NoError(t, err)
	_, err = st.TakeGA(ctx, hold(1, "warm-ga"), pool, 1)
	require.NoError(t, err)

	c.queries.Store(0)
	c.batches.Store(0)
	h, err := st.TakeSeats(ctx, hold(2, "seats"), []int64{2, 3})
	require.NoError(t, err)
	require.Len(t, h.Items, 2)
	require.EqualValues(t, 200, h.TotalCents)
	require.EqualValues(t, 1, c.batches.Load(), "a seat hold is one batch")
	require.Zero(t, c.queries.Load(), "and no other statement")

	c.batches.Store(0)
	h, err = st.TakeGA(ctx, hold(3, "ga"), pool, 2)
	require.NoError(t, err)
	require.EqualValues(t, 100, h.TotalCents)
	require.EqualValues(t, 1, c.batches.Load(), "a GA hold is one batch")
	require.Zero(t, c.queries.Load(), "and no other statement")
}

// TestGAFastTakeFindsTheLastSlot: the one-round-trip GA take starts at a
// random slot, looks above it and then below it, so it finds a slot with
// places wherever it lies; every place of a pool spread one per slot sells
// on the fast path, and the next take finds none.
func TestGAFastTakeFindsTheLastSlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const slots = 16
	st, _ := newStore(t, 1, slots, slots)
	pool, found, err := st.PoolOf(ctx, 1, "GA")
	require.NoError(t, err)
	require.True(t, found)
	for i := range slots {
		_, err := st.TakeGA(ctx, hold(int64(100+i), "ga"), pool, 1)
		require.NoError(t, err, "take %d of %d", i+1, slots)
	}
	_, err = st.TakeGA(ctx, hold(200, "ga"), pool, 1)
	require.ErrorIs(t, err, shardstore.ErrNoSlot)
}

// TestGAPlacesGoBackToTheirSlots: a take split over slots records on its
// order item the slot of every place, and ending the hold gives each slot
// back exactly what it gave (a pool of one place per slot has no slot with
// two afterwards); a payment for the ended hold takes them again.
func TestGAPlacesGoBackToTheirSlots(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := newStore(t, 1, 4, 4)
	pool, _, err := st.PoolOf(ctx, 1, "GA")
	require.NoError(t, err)
	gaLeft := func() int {
		available, _, err := st.Availability(ctx, 1)
		require.NoError(t, err)
		return available - 1 // the seat
	}
	split := func(account int64) shardstore.Held {
		_, err := st.TakeGA(ctx, hold(account, "fast"), pool, 3)
		require.ErrorIs(t, err, shardstore.ErrNoSlot, "no slot has 3 places")
		h, err := st.TakeWith(ctx, hold(account, "split"), func(tx shardstore.Tx, _ int64, _ time.Time) (shardstore.Taken, error) {
			slots, err := tx.TakePlaces(ctx, pool.ID, 3)
			require.Equal(t, []int{0, 1, 2}, slots)
			return shardstore.TakenPlaces(pool, slots), err
		})
		require.NoError(t, err)
		require.Equal(t, 1, gaLeft())
		return h
	}
	end := func(h shardstore.Held) {
		require.NoError(t, st.WithTx(ctx, func(tx shardstore.Tx) error {
			freed, err := tx.EndHolds(ctx, []int64{h.ID}, shardstore.HoldReleased)
			require.Equal(t, []shardstore.Freed{{EventID: 1, Seats: nil, GA: map[string]int{"GA": 3}}}, freed)
			return err
		}))
		require.Equal(t, 4, gaLeft())
	}

	end(split(1))
	_, err = st.TakeGA(ctx, hold(2, "pair"), pool, 2)
	require.ErrorIs(t, err, shardstore.ErrNoSlot, "every slot got its one place back")

	h := split(3)
	end(h)
	require.NoError(t, st.WithTx(ctx, func(tx shardstore.Tx) error {
		ok, _, err := tx.SellHold(ctx, h.ID, h.OrderID)
		require.True(t, ok, "the places are free: the payment takes them again")
		return err
	}))
	require.Equal(t, 1, gaLeft())
}
