package inventory_test

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/shard"
)

// TestWarmPlansTheHoldPath runs every hold shape, a collision and a GA
// hold near sell-out on one warmed connection: none of them may prepare a
// statement the warm-up did not, and the warmed ones already have a plan.
func TestWarmPlansTheHoldPath(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100, 10)
	ctx := context.Background()
	cfg := f.shard.Config() // keeps the app's AfterConnect: inventory.Warm
	cfg.MinConns, cfg.MaxConns = 1, 1
	one, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	defer one.Close()
	inv := inventory.New(shard.New(f.app.Catalog, map[int]*pgxpool.Pool{f.event.Shard: one}, nil))

	// A statement prepared again (pgx drops one whose query failed) has a
	// new prepare_time.
	statements := func() (texts []string, planned int) {
		rows, err := one.Query(ctx, `SELECT name || ' ' || prepare_time || ' ' || statement, generic_plans
			FROM pg_prepared_statements WHERE statement ~ 'holds|event_seats|ga_slots'`)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var s string
			var generic int
			require.NoError(t, rows.Scan(&s, &generic))
			texts = append(texts, s)
			if generic > 0 {
				planned++
			}
		}
		require.NoError(t, rows.Err())
		slices.Sort(texts)
		return texts, planned
	}
	warmed, planned := statements()
	require.GreaterOrEqual(t, len(warmed), 10, "the warm-up prepares the hold path's statements")
	require.Equal(t, len(warmed), planned, "and plans each of them")

	key := 0
	hold := func(r inventory.Request) error {
		key++
		r.Account, r.Key = int64(key), strconv.Itoa(key)
		_, _, err := inv.Hold(ctx, f.event, r)
		return err
	}
	require.NoError(t, hold(inventory.Request{Seats: f.seats[:2]}))
	require.ErrorIs(t, hold(inventory.Request{Seats: f.seats[1:3]}), inventory.ErrSeatsTaken)
	require.NoError(t, hold(inventory.Request{Best: &inventory.Best{Quantity: 2}}))
	require.NoError(t, hold(inventory.Request{Pool: "FLOOR", Quantity: 4}))
	require.NoError(t, hold(inventory.Request{Pool: "FLOOR", Quantity: 4}))
	require.Error(t, hold(inventory.Request{Pool: "FLOOR", Quantity: 4}), "only 2 places left: the slow path runs")
	after, _ := statements()
	require.Equal(t, warmed, after, "no hold statement was prepared after the warm-up, nor again after a failure")
}
