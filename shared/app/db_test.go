package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/testenv"
)

// TestProxiedPoolsPrepareNoNamedStatements: behind RDS Proxy a named
// prepared statement pins the client connection to one database
// connection, so with DBProxy the shard pool's session holds none after
// the warm-up and a seat hold; without it, the warm-up prepares the hold
// path as before.
func TestProxiedPoolsPrepareNoNamedStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testenv.Config(t, testenv.NewDatabases(t, 1))
	cfg.DBMaxConns = 1 // one session: what it prepared is visible to the count
	named := func(proxy bool) int {
		cfg.DBProxy = proxy
		db, err := app.OpenDatabases(ctx, cfg.Database, cfg.Readers)
		require.NoError(t, err)
		defer db.Close()
		hold(t, db)
		pool, err := db.Shards.Pool(1)
		require.NoError(t, err)
		return preparedStatements(t, pool)
	}
	require.Zero(t, named(true), "proxied: no named prepared statements")
	require.Positive(t, named(false), "direct: the warm-up prepares the hold path")
}

// hold takes a seat through the inventory on db.
func hold(t *testing.T, db *app.Databases) {
	ctx := context.Background()
	org := organizer.New(db.Catalog, db.Shards)
	l, err := org.ImportLayout(ctx, 0, venue.Stadium("Proxy Arena", "Natal", 20, 2))
	require.NoError(t, err)
	e := createEvent(t, org, l, "P")
	require.NoError(t, org.SetStatus(ctx, e.ID, "on_sale"))
	e.Status = "on_sale"
	_, _, err = inventory.New(db.Shards).Hold(ctx, e, inventory.Request{Account: 1, Key: t.Name() + time.Now().String(), Pool: "FLOOR", Quantity: 1})
	require.NoError(t, err)
}

// createEvent creates an event on layout l, on sale from an hour ago.
func createEvent(t *testing.T, org *organizer.Service, l venue.Layout, name string) event.Event {
	t.Helper()
	now := time.Now()
	e, err := org.CreateEvent(context.Background(), 0, organizer.EventSpec{VenueID: l.VenueID, LayoutVersion: l.Version, Name: name,
		StartsAt: now.Add(48 * time.Hour), SaleStartsAt: now.Add(-time.Hour), SaleEndsAt: now.Add(47 * time.Hour),
		PriceLevels: []event.PriceLevel{{Code: "A", PriceCents: 10}, {Code: "B", PriceCents: 10}, {Code: "C", PriceCents: 10}, {Code: "GA", PriceCents: 10}}})
	require.NoError(t, err)
	return e
}

func preparedStatements(t *testing.T, pool *pgxpool.Pool) int {
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_prepared_statements`).Scan(&n))
	return n
}
