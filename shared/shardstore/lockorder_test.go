package shardstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/shardstore"
)

// TestOneRequestOnBothHoldPathsDoesNotDeadlock: a GA hold near sell-out
// and its retry (same account, same Idempotency-Key) can run at once on
// the two hold paths, one statement and step by step. The one-statement
// hold inserted its hold row, whose idempotency key its retry then waits
// for, before taking the account's lock, which the step-by-step hold takes
// first: each waited for the other until deadlock_timeout broke the tie
// with a 503. Another transaction holds the account's lock here so that
// both queue for it, the step-by-step one first.
func TestOneRequestOnBothHoldPathsDoesNotDeadlock(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, st := freshShard(t)
	require.NoError(t, st.WithTx(ctx, func(tx shardstore.Tx) error {
		return tx.CreatePool(ctx, 1, shardstore.NewPool{Code: "GA", Name: "Floor", PriceLevel: "A", PriceCents: 50, Capacity: 10, Slots: 1})
	}))
	ga, _, err := st.PoolOf(ctx, 1, "GA")
	require.NoError(t, err)
	deadlocks := func() (n int64) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&n))
		return n
	}
	waiting := func(n int) {
		require.Eventually(t, func() bool {
			var w int
			require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks
				WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&w))
			return w == n
		}, 10*time.Second, 5*time.Millisecond, "%d holds waiting for the account's lock", n)
	}
	before := deadlocks()

	blocker, err := pool.Begin(ctx)
	require.NoError(t, err)
	_, err = blocker.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, shardstore.LimitLockKey(1, 1))
	require.NoError(t, err)
	h := hold(1, "near-sell-out")
	errs := make(chan error, 2)
	go func() {
		_, err := st.TakeWith(ctx, h, func(tx shardstore.Tx, _ int64, _ time.Time) (shardstore.Taken, error) {
			slots, err := tx.TakePlaces(ctx, ga.ID, 1)
			return shardstore.TakenPlaces(ga, slots), err
		})
		errs <- err
	}()
	waiting(1)
	go func() {
		_, err := st.TakeGA(ctx, h, ga, 1)
		errs <- err
	}()
	waiting(2)
	require.NoError(t, blocker.Rollback(ctx))
	var took, replays int
	for range 2 {
		switch err := <-errs; {
		case err == nil:
			took++
		case errors.Is(err, shardstore.ErrKeyUsed):
			replays++
		default:
			t.Errorf("a hold failed: %v", err)
		}
	}
	require.Equal(t, [2]int{1, 1}, [2]int{took, replays}, "one takes, the other finds its key used (and is replayed)")

	// A backend reports its deadlocks when it next goes idle.
	for _, c := range pool.AcquireAllIdle(ctx) {
		_, err := c.Exec(ctx, `SELECT pg_stat_force_next_flush()`)
		require.NoError(t, err)
		_, err = c.Exec(ctx, `SELECT 1`)
		require.NoError(t, err)
		c.Release()
	}
	require.Equal(t, before, deadlocks(), "the two paths deadlocked")
}
