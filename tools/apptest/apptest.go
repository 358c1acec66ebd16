// Package apptest opens a whole catraca app on fresh test databases and the
// test Redis, for tests that exercise more than one package.
package apptest

import (
	"context"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/tools/testenv"
)

// New opens an app on fresh databases with the given number of shards;
// options may adjust the configuration first.
func New(t testing.TB, shards int, options ...func(*config.Config)) *app.App {
	t.Helper()
	cfg := testenv.Config(t, testenv.NewDatabases(t, shards))
	for _, o := range options {
		o(&cfg)
	}
	var opts []app.Option
	if !testing.Verbose() {
		opts = append(opts, app.WithLogger(slog.New(slog.DiscardHandler)))
	}
	a, err := app.Open(context.Background(), cfg, opts...)
	if err != nil {
		t.Fatalf("apptest: open app: %v", err)
	}
	t.Cleanup(a.Close)
	return a
}

// OpenShardConns opens every connection the shard pools may hold, as
// production does at start (CATRACA_DB_MIN_CONNS), before a benchmark
// measures: a fresh connection first prepares and plans the hold statements
// (inventory.Warm), tens of milliseconds of CPU that would otherwise land in
// the first requests of each new client and make the measured tail.
func OpenShardConns(t testing.TB, a *app.App) {
	t.Helper()
	ctx := context.Background()
	for _, id := range a.Shards.IDs() {
		pool, err := a.Shards.Pool(id)
		if err != nil {
			t.Fatal(err)
		}
		conns := make([]*pgxpool.Conn, pool.Config().MaxConns)
		for i := range conns {
			if conns[i], err = pool.Acquire(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range conns {
			c.Release()
		}
	}
}

// RefuseWrites makes every insert and update of table in db fail, as a
// database that is down would, until the returned function is called.
func RefuseWrites(t testing.TB, db *pgxpool.Pool, table string) (undo func()) {
	t.Helper()
	ctx := context.Background()
	name := pgx.Identifier{"refuse_" + table}.Sanitize()
	if _, err := db.Exec(ctx, `CREATE OR REPLACE FUNCTION `+name+`() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'shard down'; END $$;
		CREATE TRIGGER `+name+` BEFORE INSERT OR UPDATE ON `+pgx.Identifier{table}.Sanitize()+` FOR EACH STATEMENT EXECUTE FUNCTION `+name+`()`); err != nil {
		t.Fatalf("apptest: refuse writes of %s: %v", table, err)
	}
	return func() {
		t.Helper()
		if _, err := db.Exec(ctx, `DROP TRIGGER `+name+` ON `+pgx.Identifier{table}.Sanitize()); err != nil {
			t.Fatalf("apptest: let writes of %s through: %v", table, err)
		}
	}
}
