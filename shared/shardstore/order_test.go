package shardstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/shardstore"
	"github.com/catraca/catraca/tools/testenv"
)

// TestCheckoutLocksTheHoldBeforeTheOrder: a charge (a payment's webhook,
// LockCharge) locks an order's hold, then the order; a checkout of the same
// order must wait for the hold before it takes the order, or each waits for
// the other and PostgreSQL aborts one of them as a deadlock.
func TestCheckoutLocksTheHoldBeforeTheOrder(t *testing.T) {
	t.Parallel()
	// A regression would wait for a lock forever (or until the deadlock
	// detector): fail in a minute, not at go test's timeout.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, st, h := oneSeatHeld(t)

	charge, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer charge.Rollback(ctx)
	_, err = charge.Exec(ctx, `SELECT 1 FROM holds WHERE id = $1 FOR NO KEY UPDATE`, h.ID)
	require.NoError(t, err)

	checkout := make(chan error, 1)
	go func() {
		checkout <- st.WithTx(ctx, func(tx shardstore.Tx) error {
			_, _, err := tx.LockCheckout(ctx, h.OrderID)
			return err
		})
	}()
	require.Eventually(t, func() bool {
		var waiting int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting)
		return err == nil && waiting == 1
	}, time.Minute, 10*time.Millisecond, "the checkout should wait for the charge's lock on the hold")

	_, err = charge.Exec(ctx, `SELECT 1 FROM orders WHERE id = $1 FOR NO KEY UPDATE`, h.OrderID)
	require.NoError(t, err)
	require.NoError(t, charge.Commit(ctx))
	require.NoError(t, <-checkout, "the checkout must get both locks once the charge commits")
}

// freshShard returns a pool and a store on a fresh migrated shard.
func freshShard(t *testing.T) (*pgxpool.Pool, *shardstore.Store) {
	t.Helper()
	dbs := testenv.NewDatabases(t, 1)
	pool, err := pgxpool.New(context.Background(), dbs.DSN(dbs.Shards[1]))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool, shardstore.New(pool)
}

// oneSeat returns a fresh shard's pool and store, with one seat (1) of
// event 1.
func oneSeat(t *testing.T) (*pgxpool.Pool, *shardstore.Store) {
	t.Helper()
	ctx := context.Background()
	pool, st := freshShard(t)
	require.NoError(t, st.WithTx(ctx, func(tx shardstore.Tx) error {
		return tx.CreateSeats(ctx, 1, []shardstore.NewSeat{{SeatID: 1, Section: "S", Row: "1", Number: 1, PriceLevel: "A", PriceCents: 100}})
	}))
	return pool, st
}

// oneSeatHeld returns a fresh shard's pool and store, with one seat of
// event 1 held by account 1.
func oneSeatHeld(t *testing.T) (*pgxpool.Pool, *shardstore.Store, shardstore.Held) {
	t.Helper()
	pool, st := oneSeat(t)
	h, err := st.TakeSeats(context.Background(), hold(1, "k"), []int64{1})
	require.NoError(t, err)
	return pool, st, h
}

// TestOrderOfAnExpiredHoldReadsExpired: a hold past its expiry is expired
// to whoever reads its order, before the sweeper ends it.
func TestOrderOfAnExpiredHoldReadsExpired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, st, h := oneSeatHeld(t)
	o, found, err := st.Order(ctx, h.OrderID)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, shardstore.HoldActive, o.HoldStatus)
	_, err = pool.Exec(ctx, `UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = $1`, h.ID)
	require.NoError(t, err)
	o, _, err = st.Order(ctx, h.OrderID)
	require.NoError(t, err)
	require.Equal(t, shardstore.HoldExpired, o.HoldStatus)
}
