package migrate_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/migrate"
	"github.com/catraca/catraca/tools/testenv"
)

func TestUpTwiceIsNoOp(t *testing.T) {
	t.Parallel()
	e := testenv.Env(t)
	ctx := context.Background()
	for _, kind := range []migrate.Kind{migrate.Catalog, migrate.Shard} {
		t.Run(string(kind), func(t *testing.T) {
			db := "t_migrate_" + string(kind) + "_" + t.Name()[len(t.Name())-5:]
			require.NoError(t, e.DropDatabase(ctx, db))
			require.NoError(t, e.CreateDatabase(ctx, db, ""))
			t.Cleanup(func() { e.DropDatabase(ctx, db) })

			first, err := migrate.Up(ctx, e.DSN(db), kind, 3)
			require.NoError(t, err)
			require.Positive(t, first.Applied)

			second, err := migrate.Up(ctx, e.DSN(db), kind, 3)
			require.NoError(t, err)
			require.Zero(t, second.Applied, "second run must apply nothing")
			require.Equal(t, first.Version, second.Version)
		})
	}
}

func TestShardIDsCarryTheirShard(t *testing.T) {
	t.Parallel()
	d := testenv.NewDatabases(t, 2)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.DSN(d.Shards[2]))
	require.NoError(t, err)
	defer conn.Close(ctx)
	var id int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT nextval('holds_seq') * 1024 + shard_id()`).Scan(&id))
	require.EqualValues(t, 2, id%1024)
	var volatility, planCache string
	require.NoError(t, conn.QueryRow(ctx, `SELECT provolatile FROM pg_proc WHERE proname = 'shard_id'`).Scan(&volatility))
	require.Equal(t, "i", volatility, "shard_id() is pinned as a constant once the shard is known")
	require.NoError(t, conn.QueryRow(ctx, `SHOW plan_cache_mode`).Scan(&planCache))
	require.Equal(t, "force_generic_plan", planCache, "shard sessions reuse generic plans")

	_, err = migrate.Up(ctx, d.DSN(d.Shards[2]), migrate.Shard, 1)
	require.ErrorContains(t, err, "already belongs to shard 2", "a shard database must not be re-labelled")
}

func TestShardSchemaGuardsSeatStatus(t *testing.T) {
	t.Parallel()
	d := testenv.NewDatabases(t, 1)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.DSN(d.Shards[1]))
	require.NoError(t, err)
	defer conn.Close(ctx)
	insert := `INSERT INTO event_seats (event_id, seat_id, seat_index, section_code, section_rank, row_label, row_rank, seat_number, price_level, price_cents, status)
		VALUES (1, $1::int, $1::int, 'A', 1, '1', 1, $1::int, 'P1', 100, $2)`
	_, err = conn.Exec(ctx, insert, 1, "available")
	require.NoError(t, err)
	_, err = conn.Exec(ctx, insert, 1, "available")
	require.ErrorContains(t, err, "unique", "one event seat per layout seat")
	_, err = conn.Exec(ctx, insert, 2, "lost")
	require.ErrorContains(t, err, "check", "status is constrained")
	_, err = conn.Exec(ctx, insert, 3, "held")
	require.ErrorContains(t, err, "check", "a held seat needs held_until")
}
