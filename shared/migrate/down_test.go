package migrate_test

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/testenv"
)

// TestLatestMigrationsGoDownAndUp: the newest migrations of each kind go
// down and up again, and a hold's limit check works at every step (a
// rolling deploy or a rollback runs the app on either schema).
func TestLatestMigrationsGoDownAndUp(t *testing.T) {
	t.Parallel()
	e := testenv.Env(t)
	ctx := context.Background()
	for _, c := range []struct {
		kind  string
		steps []int64 // up to the first, then each in turn
		check string
	}{
		{"catalog", []int64{11, 10, 11}, `SELECT count(*) = 0 FROM events`},
		{"shard", []int64{17, 16, 15, 14, 17}, `SELECT within_limit('k', 1, 1, 1, 6) AND within_limit('k', 1, 1, 1, 6, 0)`},
	} {
		name := "t_migrate_down_" + c.kind
		t.Run(c.kind, func(t *testing.T) {
			require.NoError(t, e.DropDatabase(ctx, name))
			require.NoError(t, e.CreateDatabase(ctx, name, ""))
			t.Cleanup(func() { e.DropDatabase(ctx, name) })
			db, err := sql.Open("pgx", e.DSN(name))
			require.NoError(t, err)
			defer db.Close()
			p, err := goose.NewProvider(goose.DialectPostgres, db, os.DirFS(c.kind), goose.WithDisableGlobalRegistry(true))
			require.NoError(t, err)
			for i, v := range c.steps {
				if i > 0 && v < c.steps[i-1] {
					_, err = p.DownTo(ctx, v)
				} else {
					_, err = p.UpTo(ctx, v)
				}
				require.NoError(t, err, "to %d", v)
				var ok bool
				require.NoError(t, db.QueryRowContext(ctx, c.check).Scan(&ok), "at %d", v)
				require.True(t, ok)
			}
		})
	}
}
