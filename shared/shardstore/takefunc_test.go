package shardstore

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/testenv"
)

// TestTakeFunctionsAreTheTakes: the functions shard migration 00018
// defines run the app's one-statement takes verbatim, so that a change to
// a take without a migration that replaces its function fails here rather
// than behind the proxy only.
func TestTakeFunctionsAreTheTakes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testenv.NewDatabases(t, 1)
	conn, err := pgx.Connect(ctx, testenv.Env(t).DSN(d.Shards[1]))
	require.NoError(t, err)
	defer conn.Close(ctx)
	require.Len(t, takeFunctions, 3)
	for sql, f := range takeFunctions {
		require.Equal(t, sql, f.sql)
		var src string
		require.NoError(t, conn.QueryRow(ctx, `SELECT prosrc FROM pg_proc WHERE proname = $1`, f.name).Scan(&src), f.name)
		require.Equal(t, f.body(), src, "%s is not the take's statement: add a migration that replaces it", f.name)
	}
}
