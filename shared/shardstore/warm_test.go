package shardstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/shardstore"
)

// TestConcurrentWarmUpsDoNotDeadlock: an on-sale burst opens many shard
// connections at once, each warming up. The warm-up runs every hold shape,
// some of which insert the hold before taking the account's lock and some
// after; with one shared idempotency key two warm-ups waited on each
// other's key and lock, and every such cycle cost the connection a
// deadlock_timeout before PostgreSQL broke it.
func TestConcurrentWarmUpsDoNotDeadlock(t *testing.T) {
	t.Parallel()
	pool, _ := freshShard(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	deadlocks := func() int64 {
		var n int64
		require.NoError(t, pool.QueryRow(ctx, `SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&n))
		return n
	}
	before := deadlocks()
	const conns = 8
	for range 3 {
		var wg sync.WaitGroup
		errs := make(chan error, conns)
		for range conns {
			wg.Go(func() {
				conn, err := pgx.Connect(ctx, pool.Config().ConnConfig.ConnString())
				if err != nil {
					errs <- err
					return
				}
				defer conn.Close(ctx)
				if err := shardstore.Warm(ctx, conn); err != nil {
					errs <- err
					return
				}
				// A backend reports its deadlocks when it next goes idle after
				// this; the SELECT 1 answers only after that.
				_, err = conn.Exec(ctx, `SELECT pg_stat_force_next_flush()`)
				if err == nil {
					_, err = conn.Exec(ctx, `SELECT 1`)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
	}
	require.Equal(t, before, deadlocks(), "concurrent warm-ups deadlocked")
}
